"""What a 记住 corrects without a model (issue 47): markers, the same-frame rule, the choice."""

from __future__ import annotations

import pytest

from pallas.features.memory_commands.corrections import (
    Correction,
    choose_replaced,
    needs_vectors,
    read_correction,
    same_frame,
    tells_change,
)


@pytest.mark.parametrize(
    ("text", "explicit", "body"),
    [
        ("不对，我的血型是O型", True, "我的血型是O型"),
        ("不对不对，我的幸运数字是13", True, "我的幸运数字是13"),
        ("更正一下：我穿44码的鞋", True, "我穿44码的鞋"),
        ("纠正一下 我是射手座", True, "我是射手座"),
        ("刚才说错了，我是射手座", True, "我是射手座"),
        ("过时了，我现在近视六百度", True, "我现在近视六百度"),
        ("作废，我奶茶改成点全糖了", True, "我奶茶改成点全糖了"),
        ("之前说的工位作废，我的工位在五楼", True, "我的工位在五楼"),
        ("每周二游泳过时了，现在是每周四游泳", True, "现在是每周四游泳"),
        ("我的血型不对，是O型", True, "血型是O型"),  # the thing named goes with the value
        ("之前的宿舍号作废了，现在是518", True, "宿舍号现在是518"),
        # no marker
        ("我的血型是O型", False, "我的血型是O型"),
        ("我觉得不对称的发型好看", False, "我觉得不对称的发型好看"),
        ("不对称的发型好看", False, "不对称的发型好看"),
        ("不对", False, "不对"),  # nothing after the marker: nothing to store as a correction
    ],
)
def test_read_correction(text: str, explicit: bool, body: str) -> None:
    correction = read_correction(text)
    assert (correction.explicit, correction.body) == (explicit, body)


@pytest.mark.parametrize(
    ("new", "old", "same"),
    [
        ("TA的座右铭是知行合一", "TA的座右铭是天道酬勤", True),
        ("TA每天走一万五千步", "TA每天走八千步", True),
        ("TA的体重是70公斤", "TA的体重是65公斤", True),
        ("TA身高178", "TA身高172", True),
        ("TA现在下班坐公交回家", "TA下班坐地铁回家", True),
        ("TA常去的理发店换成了商场里那家", "TA常去的理发店是街角那家", True),
        ("TA的英文名叫Jack", "TA的英文名叫Tom", True),
        # another value of a many-valued thing: one more, not a correction
        ("TA会说韩语", "TA会说日语", False),
        ("TA养了一盆绿萝", "TA养了一盆多肉", False),
        ("TA去过泰国", "TA去过日本", False),
        ("TA去过一次草原骑马", "TA去过一次长白山", False),  # counted: "去过一次" is still 去过
        # how one sees oneself: many things at once (both found crossing out a fact at 200)
        ("TA觉得自己越来越爱操心", "TA觉得自己很有耐心", False),
        ("TA认为自己挺会做饭", "TA认为自己唱歌跑调", False),
        # a neighbouring thing, or two differences
        ("TA的英文名叫Jack", "TA的网名叫咸鱼本鱼", False),
        ("TA每周六去打羽毛球", "TA每周二去游泳", False),
        ("TA的幸运颜色是紫色", "TA的幸运数字是7", False),
        ("TA收藏的第8张明信片是从杭州寄来的", "TA收藏的第3张明信片是从广州寄来的", False),
        ("TA去过第11个城市", "TA去过第10个城市", False),
        # a negation is the denial rules' business
        ("TA不喜欢猫了", "TA喜欢猫", False),
        ("TA的血型是O型", "TA的血型是O型", False),
    ],
)
def test_same_frame(new: str, old: str, same: bool) -> None:
    assert same_frame(new, old) is same


LIVE = [(1, "TA对花生过敏"), (2, "TA的血型是A型"), (3, "TA怕打雷"), (4, "TA周末喜欢去爬山")]


@pytest.mark.parametrize(
    ("said", "fact", "cosines", "chosen"),
    [
        # an explicit marker: the encoder's nearest, when close enough
        ("纠正一下，我是AB血", "TA是AB血", [0.1, 0.6, 0.2, 0.1], (2, "meaning:explicit")),
        ("不对，我其实是O型", "TA其实是O型", [0.1, 0.35, 0.2, 0.1], None),  # not close enough
        # ... shared words lower the bar, and decide alone without an encoder
        ("不对，我的血型其实是O型", "TA的血型其实是O型", [0.1, 0.35, 0.2, 0.1],
         (2, "meaning:explicit")),
        ("不对，我的血型其实是O型", "TA的血型其实是O型", None, (2, "words:explicit")),
        # nothing close: added beside them
        ("纠正一下，我其实不吃香菜", "TA其实不吃香菜", [0.3, 0.2, 0.45, 0.2], None),
        ("纠正一下，我其实不吃香菜", "TA其实不吃香菜", None, None),
        # two equally close: neither
        ("不对，我是猫派", "TA是猫派", [0.7, 0.1, 0.7, 0.1], None),
        # a plain new value: only a fact of the same frame
        ("我的血型是O型", "TA的血型是O型", [0.1, 0.9, 0.1, 0.1], (2, "meaning:frame")),
        ("我的血型是O型", "TA的血型是O型", None, (2, "words:frame")),
        ("我有点怕黑", "TA有点怕黑", [0.1, 0.1, 0.9, 0.1], None),
    ],
)  # fmt: skip
def test_choose_replaced(
    said: str, fact: str, cosines: list[float] | None, chosen: tuple[int, str] | None
) -> None:
    picked = choose_replaced(read_correction(said), fact, LIVE, cosines)
    assert (None if picked is None else (picked.item_id, picked.reason)) == chosen


CHANGED = [
    (1, "TA的头发是黑色的"),
    (2, "TA的头发很长"),
    (3, "TA在学韩语"),
    (4, "TA去年换了新的窗帘"),
]


@pytest.mark.parametrize(
    ("said", "cosines", "chosen"),
    [
        # of the facts related to it, the encoder's nearest, close and clearly ahead of the next
        ("我把头发染成栗色了", [0.69, 0.42, 0.1, 0.2], (1, "meaning:change")),
        ("我改学西班牙语了", [0.1, 0.1, 0.5, 0.2], (3, "meaning:change")),  # two languages
        ("我把头发染成栗色了", [0.6, 0.55, 0.1, 0.1], None),  # two hair facts, no lead
        ("我把头发染成栗色了", [0.4, 0.1, 0.1, 0.1], None),  # not close enough
        # the nearest by far, but no word or class in common: a new fact, not a change
        ("我上周换了新的床垫", [0.1, 0.1, 0.2, 0.59], None),
        ("我现在用iPad了", [0.1, 0.1, 0.2, 0.45], None),
        ("我把头发染成栗色了", None, None),  # the words alone never decide a change
        ("我喜欢看蚂蚁搬家", [0.1, 0.1, 0.1, 0.9], None),  # no change told
    ],
)
def test_a_change_told_in_words_retires_the_related_fact_clearly_nearest(
    said: str, cosines: list[float] | None, chosen: tuple[int, str] | None
) -> None:
    fact = "TA" + said[1:]
    picked = choose_replaced(read_correction(said), fact, CHANGED, cosines)
    assert (None if picked is None else (picked.item_id, picked.reason)) == chosen


@pytest.mark.parametrize(
    ("text", "change"),
    [
        ("我搬到佛山了", True),
        ("我把头发染成栗色了", True),
        ("我改学西班牙语了", True),
        ("我涨工资了，现在月薪一万", True),
        ("我换手机号了，新号尾号是1314", True),
        ("我现在用iPad了", True),
        ("我的车换成了特斯拉", True),
        ("我转行做设计了", True),
        ("我的多肉死掉了", True),  # a loss: the thing is no more
        ("我家的猫走丢了", True),
        ("山地车被偷了，现在没有车了", True),
        # a fact, no change of one
        ("我现在在读高二", False),
        ("我喜欢看蚂蚁搬家", False),
        ("我换过三份工作", False),
        ("我改不了熬夜的习惯", False),
        ("我养了一盆绿萝", False),
        ("我最近在学做饭", False),
        ("我的手机屏幕摔坏了", False),  # damaged, still there
        ("我想把旧电脑卖掉", False),  # not done
    ],
)
def test_tells_change(text: str, change: bool) -> None:
    assert tells_change(text) is change


def test_the_encoder_is_asked_only_when_it_has_something_to_decide() -> None:
    plain = Correction(False, "我每天走一万步", "我每天走一万步")
    assert not needs_vectors(plain, "TA每天走一万步", LIVE)  # no fact of its frame: added
    two = [(1, "TA每天走八千步"), (2, "TA每天走九千步")]
    assert needs_vectors(plain, "TA每天走一万步", two)  # which one?
    assert needs_vectors(read_correction("不对，我是O型血"), "TA是O型血", LIVE)
    assert not needs_vectors(read_correction("不对，我是O型血"), "TA是O型血", [])
    changed = read_correction("我把头发染成栗色了")
    assert needs_vectors(changed, "TA把头发染成栗色了", LIVE)  # which fact changed?
