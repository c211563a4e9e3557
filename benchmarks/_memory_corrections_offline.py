"""The offline correction set of issue 47: corrections taught with 记住, no judge model.

Written 2026-12-06, BEFORE any change to how a correction retires the fact it replaces, and
frozen from then on: do not edit the cases to make a result better (add a new set instead).
Its "before" figure was measured on main at 49271f9 (the slot rules decide when the judge model
is unavailable) and is recorded in `benchmarks/memory_corrections.py` and docs/memory.md.

Every case is one member in a group of its own. They first teach the same six padding facts
(`PADDING`, none about the topic of any case), then the case's old fact(s), then the new line
with "记住 …". The topics are ones the slot tables (residence, job, school, pet, partner, device,
favourite, liking, diet, wake, sleep, exam) do not know: blood type, shoe size, MBTI, a game
ID, a lucky number, height, a star sign, a birthday, glasses, a band role, a tea order, a test
score, hair colour, a desk, a game hero, a motto, nicknames, steps, weight, a barber, a pen
name, a commute.

- `CORRECTIONS` (26): 16 open with an explicit marker (不对 / 更正一下 / 纠正一下 / 作废 / 过时了),
  10 give a plain new value for a thing already known. Right = the old fact retired, every
  padding fact kept, the new value live.
- `CONTROLS` (12): new facts that correct nothing — another value of a many-valued thing ("我会说
  韩语" after "我会说日语"), a neighbouring attribute ("英文名" after "网名"), a marker with
  nothing to correct, "不对" inside the fact. Right = nothing retired, the new fact live.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FROZEN_ON = "2026-12-06"

PADDING: tuple[str, ...] = (
    "我对花生过敏",
    "我会弹尤克里里",
    "我老家院子里有棵枣树",
    "我周末喜欢去爬山",
    "我怕打雷",
    "我小时候学过书法",
)

Marker = Literal["不对", "更正一下", "纠正一下", "作废", "过时了", "plain", "none"]


@dataclass(frozen=True, slots=True)
class CorrectionCase:
    old: tuple[str, ...]  # taught before, in the member's words
    said: str  # the new line, taught as "记住 <said>"
    retired: tuple[str, ...]  # which of `old` must be gone afterwards ((): nothing retires)
    new_marker: str  # a fragment the new live fact must hold
    marker: Marker  # how the line says it corrects (for the report)


def _c(old: str, said: str, new: str, marker: Marker) -> CorrectionCase:
    return CorrectionCase((old,), said, (old,), new, marker)


def _k(old: str, said: str, new: str, marker: Marker = "none") -> CorrectionCase:
    return CorrectionCase((old,), said, (), new, marker)


CORRECTIONS: tuple[CorrectionCase, ...] = (
    # an explicit marker
    _c("我的血型是A型", "不对，我的血型是O型", "O型", "不对"),
    _c("我穿42码的鞋", "更正一下，我穿44码的鞋", "44码", "更正一下"),
    _c("我的MBTI是INFP", "纠正一下，我的MBTI是ENTJ", "ENTJ", "纠正一下"),
    _c("我的游戏ID是风中追风", "之前的游戏ID作废了，新ID是月下独酌", "月下独酌", "作废"),
    _c("我每周二去游泳", "每周二游泳过时了，现在是每周四游泳", "周四", "过时了"),
    _c("我的幸运数字是7", "不对不对，我的幸运数字是13", "13", "不对"),
    _c("我身高172", "更正一下，我身高178", "178", "更正一下"),
    _c("我是天蝎座", "纠正一下，我是射手座", "射手座", "纠正一下"),
    _c("我的生日是三月五号", "不对，我生日是五月三号", "五月三号", "不对"),
    _c("我近视四百度", "过时了，我现在近视六百度", "六百度", "过时了"),
    _c("我在乐队里弹贝斯", "更正一下，我在乐队里是鼓手", "鼓手", "更正一下"),
    _c("我奶茶只点三分糖", "作废，我奶茶改成点全糖了", "全糖", "作废"),
    _c("我的雅思考了6分", "纠正一下，我的雅思是6.5分", "6.5", "纠正一下"),
    _c("我的头发染成了蓝色", "不对，我头发现在是粉色的", "粉色", "不对"),
    _c("我的工位在三楼靠窗", "之前说的工位作废，我的工位在五楼茶水间旁边", "五楼", "作废"),
    _c("我玩王者荣耀主玩李白", "过时了，我现在王者荣耀主玩韩信", "韩信", "过时了"),
    # a plain new value for a thing already known
    _c("我的座右铭是天道酬勤", "我的座右铭是知行合一", "知行合一", "plain"),
    _c("我的网名叫咸鱼本鱼", "我的网名叫不想上班", "不想上班", "plain"),
    _c("我的微信签名是岁月静好", "我的微信签名是干就完了", "干就完了", "plain"),
    _c("我的口头禅是绝了", "我的口头禅是离谱", "离谱", "plain"),
    _c("我的英文名叫Tom", "我的英文名叫Jack", "Jack", "plain"),
    _c("我每天走八千步", "我每天走一万五千步", "一万五千步", "plain"),
    _c("我的体重是65公斤", "我的体重是70公斤", "70公斤", "plain"),
    _c("我常去的理发店是街角那家", "我常去的理发店换成了商场里那家", "商场", "plain"),
    _c("我的笔名是青柠", "我的笔名是南风", "南风", "plain"),
    _c("我下班坐地铁回家", "我现在下班坐公交回家", "公交", "plain"),
)

CONTROLS: tuple[CorrectionCase, ...] = (
    _k("我的血型是A型", "我会说日语", "日语"),
    _k("我会说日语", "我会说韩语", "韩语"),
    _k("我的网名叫咸鱼本鱼", "我的英文名叫Jack", "Jack"),
    _k("我每周二去游泳", "我每周六去打羽毛球", "羽毛球"),
    _k("我的MBTI是INFP", "我的星座是巨蟹座", "巨蟹座"),
    _k("我身高172", "我的体重是65公斤", "65公斤"),
    _k("我穿42码的鞋", "我的衣服穿L码", "L码"),
    _k("我的幸运数字是7", "我的幸运颜色是紫色", "紫色"),
    _k("我在乐队里弹贝斯", "我在家也练吉他", "吉他"),
    _k("我奶茶只点三分糖", "我喝咖啡不加糖", "咖啡"),
    _k("我的口头禅是绝了", "纠正一下，我其实不吃香菜", "香菜", "纠正一下"),
    _k("我的工位在三楼靠窗", "我觉得不对称的发型好看", "发型"),
)

CASES: tuple[CorrectionCase, ...] = CORRECTIONS + CONTROLS
