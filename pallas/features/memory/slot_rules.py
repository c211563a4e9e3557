"""The rules of `slots`: which slot of a person a statement fills, by the shape of the sentence.

Each rule is anchored at the start of the statement once its subject ("TA", "我") is taken off,
so a sentence about someone else ("TA妈妈搬到上海了", "TA朋友换工作了") fills no slot of the
member. A rule names a slot, or a family resolved from the value: ``device`` (phone / computer /
car, by the words or brands the statement names), ``petname`` (per animal: "TA的猫叫咪咪"),
``favorite`` / ``like`` (per preference class). Flags: the pattern is a negation ("从X辞职", "和
X分手", "家里的仓鼠去世了"), a change of state that may be told with its date ("上个月搬到朝阳"),
or the value must look like an occupation / a workplace ("在超市当收银员", not "在家做饭").

The vocabularies below are the few closed sets a slot needs (animals, device brands, school
years): what they name is the slot, not the meaning of the words around it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_X = r"[^,，。.;；!！?？]"
_V = rf"(?P<v>{_X}{{1,16}}?)"
_V0 = rf"(?P<v>{_X}{{0,16}}?)"
_END = r"(?:了|啦)?$"
_NEG = r"(?P<neg>(?:已经|早就|现在)?(?:不再?|没再?|没有再?))"
# What a school is called at the end of "读/上 …": "读高二", "上北京大学", "在读研究生".
_SCHOOL = (
    r"(?:大学|学院|中学|小学|高中|初中|学校|幼儿园|技校|职高|本科|专科|研究生|博士|硕士|专业"
    r"|大[一二三四]|高[一二三]|初[一二三]|研[一二三]|博[一二三]|[一二三四五六]年级|[^\s]{1,3}大)"
)
ANIMALS = (
    r"(?:小|大|老)?(?:猫咪?|狗狗?|兔子?|仓鼠|鹦鹉|乌龟|金鱼|鱼|鸟|柯基|柴犬|哈士奇|金毛|泰迪|边牧"
    r"|萨摩耶|布偶|橘猫|英短|蓝猫|龙猫|刺猬|蜥蜴|蛇|荷兰猪|豚鼠|貂|八哥|狗子|喵)"
)
_DOGS = re.compile(r"狗|犬|柯基|哈士奇|金毛|泰迪|边牧|萨摩耶")
_CATS = re.compile(r"猫|布偶|英短|喵")
_DEVICE_WORD = r"(?P<hint>手机|电脑|笔记本|平板|车|汽车|电动车)"
_PHONE = re.compile(
    r"手机|iphone|华为|小米|红米|苹果|oppo|vivo|荣耀|三星|一加|魅族|pixel|mate|nova|realme|诺基亚"
)
_COMPUTER = re.compile(
    r"电脑|笔记本|macbook|thinkpad|联想|戴尔|惠普|华硕|拯救者|台式机|游戏本|平板|ipad"
)
_CAR = re.compile(
    r"车|比亚迪|特斯拉|大众|丰田|本田|宝马|奔驰|奥迪|朗逸|理想|蔚来|小鹏|日产|别克|吉利|长安|哈弗"
    r"|五菱|雷克萨斯|保时捷|问界|极氪|卡罗拉|凯美瑞|思域|轩逸|速腾|帕萨特|摩托"
)
_JOB_HINT = re.compile(
    r"师|员|生|工|医|护|警|家|手|长|经理|老板|会计|策划|开发|程序|律|厨|司机|翻译|销售|运营|设计"
    r"|编辑|记者|主播|博主|模特|客服|文员|保安|快递|外卖|自由职业|老师|教练|店长|主管|总监|实习"
)
_WORKPLACE = re.compile(
    r"公司|企|厂|店|超市|银行|医院|学校|局|院|所|集团|工作室|餐厅|饭店|酒店|商场|大厂|单位|工地"
    r"|诊所|药店|幼儿园|报社|电视台|机关|部门|车间|门店|麦当劳|肯德基|星巴克"
)
_EXAM_HINT = re.compile(r"考|试|雅思|托福|四级|六级|研|证|编|公务员|驾照|gre|cpa|资格")


@dataclass(frozen=True, slots=True)
class Rule:
    name: str  # a slot, or a family: device / petname / favorite / like
    pattern: re.Pattern[str]
    single: bool = True
    negative: bool = False  # the whole pattern is a negation
    change: bool = False  # a change of state, which may be told with its date
    gate: str = ""  # job: an occupation or a workplace; device: a device; exam: an exam


def _r(text: str) -> re.Pattern[str]:
    return re.compile(text)


# "换工作了，现在在做…" / "换手机了，现在用的是…": the change told before the new value
_NEW_JOB = r"(?:换(?:了)?(?:个|份)?(?:新)?工作了?,?)?"
_SCHOOL_UP = r"^(?:升|升到|升上|读到|上到|进入)了?"
_JOB_VERB = r"(?:上班|工作|打工|实习|任职|做事|兼职)"
_PARTNER = r"(?:女朋友|男朋友|对象|女友|男友)"
_THAT = r"(?:那|这)?(?:一|两)?(?:只|条)?"  # "家里那只猫", never "姐姐的猫"
_GONE = r"(?:去世|死|死掉|走|没|丢|跑丢|走丢|飞走|送人|被送走|被领养)"

# fmt: off
RULES: tuple[Rule, ...] = (
    # residence
    Rule("residence", _r(rf"^{_NEG}?住(?:在)?{_V}{_END}")),
    Rule("residence", _r(rf"^(?:家|全家)?(?:搬到了?|搬去了?|搬进了?|搬回了?|搬家到|现在住在?){_V}"
                         rf"{_END}"), change=True),
    Rule("residence", _r(r"^(?P<v>)搬家了?$"), change=True),
    Rule("residence", _r(rf"^(?:定居|落户|安家)(?:在|到|于)?了?{_V}{_END}"), change=True),
    Rule("residence", _r(rf"^在{_V}(?:生活|定居|安家|落户){_END}")),
    Rule("residence", _r(rf"^(?:在)?{_V0}租(?:了)?(?:个|间|套)?(?:房子?|公寓)(?:住)?{_END}"),
         change=True),
    Rule("residence", _r(rf"^从{_V}搬(?:走|出来?){_END}"), negative=True, change=True),
    Rule("residence", _r(rf"^搬(?:离|出)(?:了)?{_V}{_END}"), negative=True, change=True),
    Rule("residence", _r(rf"^(?<!老)家(?:住)?在{_V}{_END}")),
    Rule("hometown", _r(rf"^(?:老家|家乡|籍贯)(?:在|是){_V}{_END}")),
    # job / workplace
    Rule("job", _r(rf"^(?:已经)?(?:不再?|没再?)在{_V}(?:干|做|{_JOB_VERB})(?:了)?$"),
         negative=True, change=True),
    Rule("job", _r(rf"^(?:已经)?(?:不再?|没再?)(?:当|做|干)(?P<v>{_X}{{1,10}}?)(?:了)?$"),
         negative=True, change=True),
    Rule("job", _r(rf"^{_NEG}?{_NEW_JOB}(?:现在)?在{_V}{_JOB_VERB}{_END}")),
    Rule("job", _r(rf"^(?:去|到)了?{_V}{_JOB_VERB}{_END}"), change=True),
    Rule("job", _r(rf"^在{_V}(?:当|做|干)(?P<v2>{_X}{{1,10}}?){_END}"), gate="job"),
    Rule("job", _r(rf"^(?:跳槽|调|转岗|调动)(?:到|去)了?{_V}{_END}"), change=True),
    Rule("job", _r(rf"^(?:转行|改行|换行)了?(?:去|到)?(?:做|当|干)?(?:了)?{_V0}{_END}"),
         change=True),
    Rule("job", _r(r"^(?P<v>)换(?:了)?(?:个|份)?(?:新)?(?:工作|单位|公司)$"), change=True),
    Rule("job", _r(rf"^{_NEW_JOB}现在(?:在)?(?:做|当|干|是){_V}{_END}"), change=True,
         gate="job_now"),
    Rule("job", _r(rf"^(?:已经|早就)?从{_V}(?:辞职|离职|跳槽|被裁|离开)(?:了)?$"), negative=True,
         change=True),
    Rule("job", _r(rf"^(?:是做|做|是干|干){_V}的{_END}")),
    Rule("job", _r(rf"^(?:是做|是干){_V}$")),  # "是做设计的" (the tail's 的 is cleaned off)
    Rule("job", _r(rf"^(?:工作是|职业是|当了?|是一名|是个|是一个|是){_V}{_END}"), gate="job_is"),
    Rule("job", _r(r"^(?P<v>)(?:已经)?(?:辞职|离职|失业|被裁|不干|退休)(?:了)?$"), negative=True,
         change=True),
    # school / grade
    Rule("school", _r(rf"{_SCHOOL_UP}(?P<v>{_X}{{0,12}}{_SCHOOL}){_END}"), change=True),
    Rule("school", _r(rf"^(?:在读|读|上|在上)(?P<v>{_X}{{0,12}}{_SCHOOL}){_END}")),
    Rule("school", _r(rf"^在(?!家){_V}(?:读书|上学|念书|读研|读博|就读|上大学|读大学){_END}")),
    Rule("school", _r(rf"^(?:转学|考上|考进|考入|考到|被录取|保研)(?:到|去|进|了)?了?{_V}{_END}"),
         change=True),
    Rule("school", _r(rf"^(?P<v>{_SCHOOL})了?$"), change=True),  # "高二了"
    Rule("school", _r(rf"^(?:已经)?(?:从)?{_V0}(?:毕业|退学|休学|辍学)(?:了)?$"), negative=True,
         change=True),
    Rule("exam", _r(rf"^(?:在|正在)?(?:备考|准备考|准备|要考|在考){_V}(?:考试)?{_END}"),
         gate="exam"),
    Rule("wake", _r(rf"^(?:每天|平时|一般)?{_V}起床{_END}")),
    Rule("sleep", _r(rf"^(?:每天|平时|一般)?{_V}(?:睡觉|睡){_END}")),
    # partner / relationship: single (单身 → 恋爱 → 已婚), a partner's name is the same slot
    Rule("partner", _r(r"^(?P<v>)(?:现在|目前|还是|一直)?(?:是)?单身(?:狗)?$")),
    Rule("partner", _r(rf"^(?P<v>)(?:有|交了|找了|找到了?)(?:个|一个)?{_PARTNER}{_END}"),
         change=True),
    Rule("partner", _r(r"^(?P<v>)(?:脱单|在谈恋爱|谈恋爱)(?:了)?$"), change=True),
    Rule("partner", _r(r"^(?P<v>)(?:(?:和|跟)[^,]{1,6})?(?:结婚|领证)(?:了)?$|^已婚$"),
         change=True),
    Rule("partner", _r(rf"^(?:现在的)?(?:{_PARTNER}|老婆|老公)(?:叫|是){_V}{_END}")),
    Rule("partner", _r(r"^(?P<v>)(?:(?:和|跟)[^,]{1,6})?(?:分手|离婚)(?:了)?$"), negative=True,
         change=True),
    # diet
    Rule("diet", _r(r"^(?P<v>)(?:是)?(?:素食主义者|素食者|纯素食者|吃素)$")),
    Rule("diet", _r(r"^(?:开始|又|重新)?(?P<v>吃肉|吃荤)(?:了)?$|^不(?:再)?吃素了$"),
         change=True),
    # devices: phone / computer / car, by the words or brands named
    Rule("device", _r(rf"^换(?:了)?(?:个|部|台|辆)?(?:新)?{_DEVICE_WORD}了?,?(?:现在)?(?:用|开)?"
                      rf"(?:的是|的|上了?|着)?{_V0}{_END}"), change=True),
    Rule("device", _r(rf"^(?:换成了?|换了|换上了?|入手了?)(?:一)?(?:台|部|个|辆|款)?(?:新)?{_V}"
                      rf"{_END}"), change=True, gate="device"),
    Rule("device", _r(rf"^的?(?:用的|在用的|现在用的)?{_DEVICE_WORD}(?:是|用的是|换成了?){_V}"
                      rf"{_END}")),
    Rule("device", _r(rf"^(?:用|开)(?:的是|的|着|上了?)?{_V}{_END}"), gate="device"),
    Rule("device", _r(rf"^(?:现在)?用(?:的是|的|着)?{_V}手机{_END}")),
    Rule("device", _r(rf"^把{_X}{{0,4}}?{_DEVICE_WORD}(?P<v>)"
                      r"(?:卖|送人|弄丢|丢|摔坏|报废)"), negative=True, change=True),
    # pets: a pet's name is a slot per animal; a pet gone denies the pet and its name
    Rule("petname", _r(rf"^(?:家|家里|养)?的?(?P<a>{ANIMALS})(?:现在|已经)?(?:改名|改名字)?"
                       rf"(?:叫|改叫|名叫|名字叫|叫做)(?:了)?{_V}{_END}"), change=True),
    Rule("petname", _r(rf"^养了?(?:一|两)?(?:只|条|个)?叫{_V}的(?P<a>{ANIMALS}){_END}")),
    Rule("pet", _r(rf"^(?:家|家里|养)?的?{_THAT}(?P<v>{ANIMALS}){_GONE}了?{_END}"),
         single=False, negative=True, change=True),
    Rule("pet", _r(rf"^把(?:家里?的|养的)?{_THAT}(?P<v>{ANIMALS})(?:送人|送走|送给{_X}{{1,8}}"
                   rf"|卖|放生|弄丢)"), single=False, negative=True, change=True),
    # "最喜欢的水果是草莓" / "现在最喜欢的水果变成芒果了": the favourite of a named kind
    Rule("favorite", _r(rf"^(?:现在)?最(?:喜欢|爱)的(?P<kind>[^,是]{{1,6}}?)"
                        rf"(?:是|变成了?|换成了?|改成了?){_V}{_END}")),
    Rule("favorite", _r(rf"^(?:现在)?最(?:喜欢|爱)(?:吃|喝|玩|听|看|的)?{_V}{_END}")),
    Rule("like", _r(rf"^{_NEG}?(?:喜欢|爱)(?:吃|喝|玩|听|看)?{_V}{_END}"), single=False),
    Rule("pet", _r(rf"^{_NEG}?养(?:了|着)?{_V}{_END}"), single=False),
)
# fmt: on


def animal_key(animal: str) -> str:
    """One name per animal: "猫咪" / "橘猫" → 猫, "柯基" / "狗狗" → 狗."""
    if _DOGS.search(animal):
        return "狗"
    if _CATS.search(animal):
        return "猫"
    return animal.lstrip("小大老") or animal


def device_class(value: str, hint: str = "") -> str | None:
    """phone / computer / car for what a device statement names, or None."""
    for word in (hint, value):
        text = word.lower()
        if "手机" in text:
            return "phone"
        if _COMPUTER.search(text):
            return "computer"
        if _CAR.search(text):
            return "car"
        if _PHONE.search(text):
            return "phone"
    return None


def passes_gate(rule: Rule, body: str, value: str, groups: dict[str, str | None]) -> bool:
    """The rule's value looks like what its slot holds (an occupation, a device, an exam)."""
    if rule.gate == "job":
        return bool(_WORKPLACE.search(value) or _JOB_HINT.search(groups.get("v2") or ""))
    if rule.gate == "job_now":
        return bool(_JOB_HINT.search(value)) or "工作" in body
    if rule.gate == "job_is":
        return bool(_JOB_HINT.search(value)) or "是" not in body[:4]
    if rule.gate == "device":
        return device_class(value) is not None
    if rule.gate == "exam":
        return bool(_EXAM_HINT.search(value)) or not body.lstrip("在正").startswith("准备")
    return True
