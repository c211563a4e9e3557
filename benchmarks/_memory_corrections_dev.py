"""The development half for `benchmarks.memory_corrections`: cases to tune the offline
correction step on (thresholds, markers, the same-frame rule), written 2026-12-06 after the frozen
set and kept apart from it — the frozen set (`_memory_corrections_offline`) is only measured.
Same shape and the same padding; other topics.
"""

from __future__ import annotations

from benchmarks._memory_corrections_offline import CorrectionCase, Marker


def _c(old: str, said: str, new: str, marker: Marker) -> CorrectionCase:
    return CorrectionCase((old,), said, (old,), new, marker)


def _k(old: str, said: str, new: str, marker: Marker = "none") -> CorrectionCase:
    return CorrectionCase((old,), said, (), new, marker)


DEV_CORRECTIONS: tuple[CorrectionCase, ...] = (
    _c("我的工号是A123", "不对，我的工号是B456", "B456", "不对"),
    _c("我是处女座", "更正一下，我是天秤座", "天秤座", "更正一下"),
    _c("我每天喝三杯水", "纠正一下，我每天喝八杯水", "八杯水", "纠正一下"),
    _c("我打字每分钟80字", "更正一下，我打字每分钟120字", "120字", "更正一下"),
    _c("我的宿舍是302", "之前的宿舍号作废了，现在是518", "518", "作废"),
    _c("我每周一练瑜伽", "过时了，我现在每周三练瑜伽", "每周三", "过时了"),
    _c("我的QQ头像是一朵向日葵", "作废，我头像换成了一片海", "一片海", "作废"),
    _c("我左眼视力4.8", "纠正一下，我左眼视力5.0", "5.0", "纠正一下"),
    _c("我的个性签名是加油", "不对，我个性签名是冲冲冲", "冲冲冲", "不对"),
    _c("我的闹钟定在七点", "更正一下，我闹钟定在六点半", "六点半", "更正一下"),
    _c("我吃面喜欢加醋", "不对不对，我吃面喜欢加辣椒", "辣椒", "不对"),
    _c("我的桌游主玩狼人杀", "桌游主玩狼人杀过时了，现在主玩阿瓦隆", "阿瓦隆", "过时了"),
    _c("我的昵称是阿木", "我的昵称是木木", "木木", "plain"),
    _c("我的鞋码是40", "我的鞋码是41", "41", "plain"),
    _c("我每天睡前看半小时书", "我每天睡前看一小时书", "一小时", "plain"),
    _c("我的网球教练是李教练", "我的网球教练是陈教练", "陈教练", "plain"),
    _c("我的手机号尾号是1234", "我的手机号尾号是5678", "5678", "plain"),
    _c("我常去的健身房在公司楼下", "我常去的健身房在家附近", "家附近", "plain"),
    _c("我的跑步配速是六分钟", "我的跑步配速是五分半", "五分半", "plain"),
    _c("我上班骑共享单车", "我现在上班开车去", "开车", "plain"),
)

DEV_CONTROLS: tuple[CorrectionCase, ...] = (
    _k("我会做红烧肉", "我会做糖醋排骨", "糖醋排骨"),
    _k("我的昵称是阿木", "我的生日是八月", "八月"),
    _k("我去过日本", "我去过泰国", "泰国"),
    _k("我每周一练瑜伽", "我每周五去游泳", "游泳"),
    _k("我的鞋码是40", "不对，我其实很怕蛇", "怕蛇", "不对"),
    _k("我养了一盆多肉", "我养了一盆绿萝", "绿萝"),
    _k("我收藏了一百张邮票", "我收藏了五十个手办", "手办"),
    _k("我的网球教练是李教练", "我的羽毛球搭子是老陈", "羽毛球搭子"),
    _k("我的闹钟定在七点", "我的午休是半小时", "午休"),
    _k("我每天喝三杯水", "我每天吃一个苹果", "苹果"),
)

DEV_CASES: tuple[CorrectionCase, ...] = DEV_CORRECTIONS + DEV_CONTROLS
