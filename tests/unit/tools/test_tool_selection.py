"""Which tool (if any) a member's message selects: clear requests fire, chatter does not."""

from __future__ import annotations

import pytest

from pallas.features.tools.registry import ToolCall, ToolRegistry, default_registry

REGISTRY = default_registry()
ALL = frozenset(REGISTRY.names)


def _select(text: str) -> ToolCall | None:
    return REGISTRY.select(text, ALL)


def test_default_registry_order() -> None:
    assert REGISTRY.names == ("calc", "dice", "choose", "countdown", "activity")


# --- dice ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "count", "faces"),
    [
        ("掷骰子", "dice", "1", "6"),
        ("扔个骰子", "dice", "1", "6"),
        ("帮我掷个骰子", "dice", "1", "6"),
        ("，帮我掷个骰子吧！", "dice", "1", "6"),
        ("掷3个骰子", "dice", "3", "6"),
        ("掷两个骰子", "dice", "2", "6"),
        ("摇一下骰子", "dice", "1", "6"),
        ("投个d100", "dice", "1", "100"),
        ("来个d20", "dice", "1", "20"),
        ("roll", "dice", "1", "6"),
        ("roll 2d6", "dice", "2", "6"),
        ("Roll 2D6", "dice", "2", "6"),
        ("/roll d20", "dice", "1", "20"),
        ("/r 3d8", "dice", "3", "8"),
        ("roll the dice", "dice", "1", "6"),
        ("roll 3 dice", "dice", "3", "6"),
        ("掷100个骰子", "dice", "100", "6"),  # fires; the run explains the limit
        ("抛硬币", "coin", "", ""),
        ("丢硬币", "coin", "", ""),
        ("扔个硬币", "coin", "", ""),
        ("flip a coin", "coin", "", ""),
    ],
)
def test_dice_requests(text: str, kind: str, count: str, faces: str) -> None:
    call = _select(text)
    assert call is not None and call.name == "dice"
    assert (call.arg("kind"), call.arg("count"), call.arg("faces")) == (kind, count, faces)


# --- choose -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "options"),
    [
        ("帮我选一下：火锅还是烧烤", ("火锅", "烧烤")),
        ("帮我选：火锅还是烧烤", ("火锅", "烧烤")),
        ("A还是B，选一个", ("A", "B")),
        ("选一个：a、b、c", ("a", "b", "c")),
        ("吃饭还是睡觉？帮我挑一个", ("吃饭", "睡觉")),
        ("帮我决定一下：火锅还是烧烤", ("火锅", "烧烤")),
        ("帮我定一下 火锅或者烧烤", ("火锅", "烧烤")),
        ("火锅还是烧烤选一个", ("火锅", "烧烤")),
        ("你决定吧，奶茶或是咖啡", ("奶茶", "咖啡")),
        ("从猫和狗里挑一个", ("猫", "狗")),
        ("在猫和狗之间选一个", ("猫", "狗")),
        ("随机选一个：1 2 3", ("1", "2", "3")),
        ("帮我选个 火锅 烧烤 烤肉", ("火锅", "烧烤", "烤肉")),
        ("选一个：火锅、火锅、烧烤", ("火锅", "烧烤")),  # duplicates collapse
        ("Pick one: Tea or Coffee", ("Tea", "Coffee")),
        ("tea or coffee? pick one", ("tea", "coffee")),
        ("choose between tea and coffee", ("tea", "coffee")),
        ("help me choose: pizza or fried rice", ("pizza", "fried rice")),
    ],
)
def test_choose_requests(text: str, options: tuple[str, ...]) -> None:
    call = _select(text)
    assert call is not None and call.name == "choose"
    assert call.arg_values("option") == options


# --- calc ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expression"),
    [
        ("算一下 12*34+5", "12*34+5"),
        ("计算 (3+4)/2", "(3+4)/2"),
        ("1+2*3等于多少", "1+2*3"),
        ("2^10是多少", "2^10"),
        ("100/7=?", "100/7"),
        ("100/7=？", "100/7"),
        ("３×４÷２＝？", "3×4÷2"),
        ("帮我算算 （１＋２）×３", "(1+2)×3"),
        ("12 * 34 + 5 = ?", "12 * 34 + 5"),
        ("-3+4等于几", "-3+4"),
        ("算一下 200*15%", "200*15%"),
        ("3.5*2等于几", "3.5*2"),
        ("what is 2+2", "2+2"),
        ("calc 2**10", "2**10"),
        ("算一下9**9**9", "9**9**9"),  # fires; the run refuses the exponent
    ],
)
def test_calc_requests(text: str, expression: str) -> None:
    call = _select(text)
    assert call is not None and call.name == "calc"
    assert call.arg("expression") == expression


# --- countdown ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "args"),
    [
        ("距离2027年1月1日还有几天", {"mode": "until", "year": "2027", "month": "1", "day": "1"}),
        ("离12月25日还有多少天", {"mode": "until", "year": "", "month": "12", "day": "25"}),
        ("距离十二月二十五号还有几天？", {"mode": "until", "month": "12", "day": "25"}),
        ("今天到2027-01-01还有几天", {"mode": "until", "year": "2027", "month": "1", "day": "1"}),
        ("还有几天到元旦", {"mode": "until", "month": "1", "day": "1", "holiday": "元旦"}),
        ("距离元旦还有几天", {"mode": "until", "holiday": "元旦"}),
        ("国庆还有几天", {"mode": "until", "month": "10", "day": "1", "holiday": "国庆"}),
        ("离圣诞节还有几天啊？", {"mode": "until", "month": "12", "day": "25"}),
        ("距离2月30日还有几天", {"mode": "until", "month": "2", "day": "30"}),  # run: invalid
        ("100天后是几号", {"mode": "offset", "days": "100", "direction": "after"}),
        ("3天前是星期几", {"mode": "offset", "days": "3", "direction": "before"}),
        ("三天后是周几", {"mode": "offset", "days": "3", "direction": "after"}),
        ("再过100天是几号", {"mode": "offset", "days": "100", "direction": "after"}),
        ("从今天起100天后是哪天", {"mode": "offset", "days": "100"}),
        ("how many days until 2027-01-01", {"mode": "until", "year": "2027"}),
        ("days until christmas", {"mode": "until", "holiday": "圣诞节"}),
        ("100 days from now", {"mode": "offset", "days": "100", "direction": "after"}),
        ("what day was it 3 days ago", {"mode": "offset", "days": "3", "direction": "before"}),
    ],
)
def test_countdown_requests(text: str, args: dict[str, str]) -> None:
    call = _select(text)
    assert call is not None and call.name == "countdown"
    assert {key: call.arg(key) for key in args} == args


# --- activity -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "今天谁最活跃",
        "今天谁话最多",
        "群里今天聊了多少",
        "今天的发言排行",
        "今日发言排行榜",
        "发言排行榜",
        "今天的龙王是谁",
        "今天谁是龙王",
        "今天群里谁最能聊？",
        "今天群里有多少条消息",
        "今天一共聊了多少条",
        "群里谁最活跃",
        "今天最活跃的是谁",
        "who talked the most today",
        "who is the most active today",
        "how many messages today",
    ],
)
def test_activity_requests(text: str) -> None:
    call = _select(text)
    assert call is not None and call.name == "activity"


# --- chatter that merely contains a keyword: nothing fires -------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # dice
        "骰子游戏好玩吗",
        "我昨天掷骰子输了",
        "我的骰子丢了",
        "掷骰子决定吧",
        "买了一套新骰子",
        "硬币收藏",
        "他抛硬币抛了一晚上",
        "d20",
        "2d6",
        "rolling in the deep",
        "roll得不错",
        "let's roll",
        # choose
        "你选的那个不错",
        "我选了火锅",
        "选择困难症犯了",
        "火锅还是烧烤？",
        "你觉得火锅还是烧烤好",
        "决定了去吃火锅还是烧烤",
        "帮我选个名字",
        "挑食不好",
        "火锅还是烧烤，我已经选好了",
        "他还是选了烧烤",
        "今天 好累 你决定吧",
        "我不知道选哪个",
        "I can't decide",
        "pick up the phone or call me",
        # calc
        "我不会算数",
        "12点见",
        "3个人",
        "1+1",
        "1+1=2",
        "5-3",
        "2026-11-29",
        "算一下2026-11-29",
        "13800138000是多少",
        "138-0013-8000是多少",
        "86-13800138000=?",
        "1/2的人是多少",
        "算了吧",
        "计算机专业好找工作吗",
        "这个多少钱",
        "算一下我们有几个人",
        "what is love",
        # countdown
        "还有几天就放假了好开心",
        "距离考试还有几天",
        "离春节还有几天",
        "中秋还有几天",
        "100天后我就毕业了",
        "三天前我去了北京",
        "距离产生美",
        "离我远点",
        "今天星期几",
        "12月25日我们聚会吧",
        "还有几天啊好烦",
        "距离2027年1月1日已经过去很久了",
        "100天",
        "days of our lives",
        # activity
        "今天好累",
        "你今天话好多",
        "他话最多了",
        "今天谁来上班",
        "我今天最活跃",
        "活跃一下气氛",
        "今天谁最好看",
        "排行榜出来了吗",
        "今天多少度",
        "今天有多少",
        "谁最活跃",
        "群里好安静",
        "今天聊了多少次天了都没人理我",
        "who cares",
        # general
        "",
        "   ",
        "今天天气不错",
        "哈哈哈哈",
    ],
)
def test_chatter_selects_nothing(text: str) -> None:
    assert _select(text) is None


def test_long_messages_are_conversation_not_requests() -> None:
    assert _select("掷骰子" + "。" * 300) is None


# --- registry order and `allowed` ---------------------------------------------------------------


class _Always:
    """A tool that matches everything (to see which of several matching tools wins)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.label = name

    def match(self, text: str) -> ToolCall | None:
        return ToolCall(self.name, (), text)

    async def run(self, call, env):  # pragma: no cover - never run here
        raise NotImplementedError


class _Broken(_Always):
    def match(self, text: str) -> ToolCall | None:
        raise RuntimeError("bug in a matcher")


@pytest.mark.parametrize(
    ("allowed", "expected"),
    [
        ({"a", "b", "c"}, "a"),
        ({"b", "c"}, "b"),
        ({"c"}, "c"),
        (set(), None),
        ({"unknown"}, None),
    ],
)
def test_first_allowed_tool_in_registry_order_wins(allowed: set[str], expected: str) -> None:
    registry = ToolRegistry([_Always("a"), _Always("b"), _Always("c")])
    call = registry.select("anything", allowed)
    assert (call.name if call else None) == expected


def test_a_matcher_that_raises_is_skipped() -> None:
    registry = ToolRegistry([_Broken("broken"), _Always("ok")])
    call = registry.select("anything", {"broken", "ok"})
    assert call is not None and call.name == "ok"


def test_duplicate_tool_names_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        ToolRegistry([_Always("a"), _Always("a")])


@pytest.mark.parametrize(
    ("text", "allowed", "expected"),
    [
        ("掷骰子", {"dice"}, "dice"),
        ("掷骰子", {"calc", "choose", "countdown", "activity"}, None),
        ("算一下 1+1", {"dice"}, None),
        ("今天谁最活跃", {"calc", "dice"}, None),
        ("今天谁最活跃", {"activity"}, "activity"),
        ("帮我选一下：掷骰子还是抛硬币", ALL, "choose"),  # the options are not a dice request
        ("算一下 100天后是几号", ALL, "countdown"),  # no arithmetic: calc stays quiet
    ],
)
def test_allowed_filters_real_tools(text: str, allowed: set[str], expected: str | None) -> None:
    call = REGISTRY.select(text, allowed)
    assert (call.name if call else None) == expected


@pytest.mark.parametrize("name", ["calc", "dice", "choose", "countdown", "activity"])
def test_each_tool_has_a_chinese_label(name: str) -> None:
    tool = REGISTRY.get(name)
    assert tool is not None and tool.name == name
    assert any("\u4e00" <= ch <= "\u9fff" for ch in tool.label)
