"""The development set of `benchmarks.memory_updates` (issue 34, h-upd): corrections, denials
and lines that must retire nothing, in everyday phrasing across slots, written BEFORE the slot
rules were generalised and used to develop them. It is not held out (the rules were tuned on it);
the held-out set is `_memory_heldout_data.py`, which was neither read nor tuned on here.

Same shape as `_memory_updates_data.CASES`: what the member taught before, what they say now
(taught with 记住 or said in plain chat), the old facts that must be retired, a word the new live
fact must hold ("" = nothing new stays: a bare denial is history only) and the op a model that
understood the line answers. Offline, a line said in chat can only deny (no rule stores a new
fact from chat), so the chat cases are denials or lines that must change nothing.
"""

from __future__ import annotations

from benchmarks._memory_updates_data import UpdateCase, _c

_T, _C = "teach", "chat"

CORRECTIONS: tuple[UpdateCase, ...] = (
    # job / workplace
    _c("dev-correction", _T, ("我在超市当收银员",), "我换工作了，现在在银行上班",
       ("我在超市当收银员",), "银行", "update"),
    _c("dev-correction", _T, ("我在一家外企做翻译",), "我跳槽到字节了",
       ("我在一家外企做翻译",), "字节", "update"),
    _c("dev-correction", _T, ("我是一名护士",), "我现在改行当老师了", ("我是一名护士",), "老师",
       "update"),
    _c("dev-correction", _T, ("我在医院上班",), "我现在在学校工作", ("我在医院上班",), "学校",
       "update"),
    _c("dev-correction", _T, ("我是程序员",), "我转行做销售了", ("我是程序员",), "销售", "update"),
    _c("dev-correction", _T, ("我在麦当劳打工",), "我不在麦当劳干了，现在去星巴克打工",
       ("我在麦当劳打工",), "星巴克", "update"),
    # school / grade
    _c("dev-correction", _T, ("我读初三",), "我上高一了", ("我读初三",), "高一", "update"),
    _c("dev-correction", _T, ("我在读大四",), "我现在读研一了", ("我在读大四",), "研一", "update"),
    _c("dev-correction", _T, ("我在北京大学读书",), "我转学到清华了", ("我在北京大学读书",),
       "清华", "update"),
    _c("dev-correction", _T, ("我上五年级",), "我升六年级了", ("我上五年级",), "六年级",
       "update"),
    # residence
    _c("dev-correction", _T, ("我住在杭州",), "我搬到上海了", ("我住在杭州",), "上海", "update"),
    _c("dev-correction", _T, ("我家在浦东",), "我家搬去闵行了", ("我家在浦东",), "闵行",
       "update"),
    _c("dev-correction", _T, ("我住在学校宿舍",), "我现在在外面租房住了", ("我住在学校宿舍",),
       "租房", "update"),
    _c("dev-correction", _T, ("我在成都生活",), "我现在定居深圳了", ("我在成都生活",), "深圳",
       "update"),
    # phone / device / car
    _c("dev-correction", _T, ("我用的手机是小米",), "我换了苹果手机", ("我用的手机是小米",),
       "苹果", "update"),
    _c("dev-correction", _T, ("我用的是iPhone12",), "我换成iPhone15了", ("我用的是iPhone12",),
       "15", "update"),
    _c("dev-correction", _T, ("我的电脑是联想的",), "我换了台MacBook", ("我的电脑是联想的",),
       "MacBook", "update"),
    _c("dev-correction", _T, ("我开的是大众朗逸",), "我换车了，现在开比亚迪",
       ("我开的是大众朗逸",), "比亚迪", "update"),
    # pet
    _c("dev-correction", _T, ("我养了一只叫豆豆的狗",), "我家狗改名叫旺财了",
       ("我养了一只叫豆豆的狗",), "旺财", "update"),
    _c("dev-correction", _T, ("我的猫叫咪咪",), "我的猫现在叫雪球了", ("我的猫叫咪咪",), "雪球",
       "update"),
    # partner / relationship
    _c("dev-correction", _T, ("我女朋友叫小美",), "我现在的女朋友叫小红", ("我女朋友叫小美",),
       "小红", "update"),
    _c("dev-correction", _T, ("我单身",), "我脱单了", ("我单身",), "脱单", "update"),
    _c("dev-correction", _T, ("我有男朋友",), "我和男朋友结婚了", ("我有男朋友",), "结婚",
       "update"),
    # favourite X
    _c("dev-correction", _T, ("我最喜欢的颜色是蓝色",), "我现在最喜欢绿色了",
       ("我最喜欢的颜色是蓝色",), "绿色", "update"),
    _c("dev-correction", _T, ("我最爱吃火锅",), "我现在最爱吃烧烤", ("我最爱吃火锅",), "烧烤",
       "update"),
    _c("dev-correction", _T, ("我最喜欢的游戏是原神",), "我最喜欢的游戏换成了王者荣耀",
       ("我最喜欢的游戏是原神",), "王者", "update"),
    _c("dev-correction", _T, ("我最喜欢的歌手是周杰伦",), "我现在最喜欢的歌手是陈奕迅",
       ("我最喜欢的歌手是周杰伦",), "陈奕迅", "update"),
    # diet / health
    _c("dev-correction", _T, ("我每天抽一包烟",), "我戒烟了", ("我每天抽一包烟",), "戒烟",
       "update"),
    _c("dev-correction", _T, ("我是素食主义者",), "我现在开始吃肉了", ("我是素食主义者",),
       "吃肉", "update"),
    # hobby
    _c("dev-correction", _T, ("我在玩原神",), "我不玩原神了，入坑星穹铁道了", ("我在玩原神",),
       "星穹铁道", "update"),
    _c("dev-correction", _T, ("我每周打篮球",), "我最近改打羽毛球了", ("我每周打篮球",),
       "羽毛球", "update"),
    # plans
    _c("dev-correction", _T, ("我打算五一去西安玩",), "五一不去西安了，改去成都",
       ("我打算五一去西安玩",), "成都", "update"),
    _c("dev-correction", _T, ("我下个月要去日本旅游",), "日本不去了，改去泰国",
       ("我下个月要去日本旅游",), "泰国", "update"),
    _c("dev-correction", _T, ("我准备考研",), "我不考研了，准备考公务员", ("我准备考研",),
       "公务员", "update"),
)  # fmt: skip

DENIALS: tuple[UpdateCase, ...] = (
    _c("dev-denial", _C, ("我养了一只仓鼠",), "我家仓鼠去世了", ("我养了一只仓鼠",), "", "deny"),
    _c("dev-denial", _C, ("我养了一只猫",), "我把猫送人了", ("我养了一只猫",), "", "deny"),
    _c("dev-denial", _C, ("我养了两只鹦鹉",), "我的鹦鹉飞走了", ("我养了两只鹦鹉",), "", "deny"),
    _c("dev-denial", _C, ("我在肯德基打工",), "我已经不在肯德基打工了", ("我在肯德基打工",), "",
       "deny"),
    _c("dev-denial", _C, ("我在一家外企做翻译",), "我从那家外企辞职了", ("我在一家外企做翻译",),
       "", "deny"),
    _c("dev-denial", _C, ("我是学生会主席",), "我已经不是学生会主席了", ("我是学生会主席",), "",
       "deny"),
    _c("dev-denial", _C, ("我有女朋友",), "我和女朋友分手了", ("我有女朋友",), "", "deny"),
    _c("dev-denial", _C, ("我住在宿舍",), "我已经搬出宿舍了", ("我住在宿舍",), "", "deny"),
    _c("dev-denial", _C, ("我抽烟",), "我已经戒烟了", ("我抽烟",), "戒烟", "update"),
    _c("dev-denial", _C, ("我每天喝奶茶",), "我现在不喝奶茶了", ("我每天喝奶茶",), "", "deny"),
    _c("dev-denial", _C, ("我晚上经常喝酒",), "我不喝酒了", ("我晚上经常喝酒",), "", "deny"),
    _c("dev-denial", _C, ("我玩英雄联盟",), "英雄联盟我早就不玩了", ("我玩英雄联盟",), "",
       "deny"),
    _c("dev-denial", _C, ("我在学钢琴",), "我钢琴不学了", ("我在学钢琴",), "", "deny"),
    _c("dev-denial", _C, ("我每周去健身房",), "我已经不去健身房了", ("我每周去健身房",), "",
       "deny"),
    _c("dev-denial", _C, ("我打算下周去爬黄山",), "黄山不去了", ("我打算下周去爬黄山",), "",
       "deny"),
    _c("dev-denial", _C, ("我在减肥",), "我不减肥了", ("我在减肥",), "", "deny"),
    _c("dev-denial", _C, ("我喜欢喝咖啡",), "我现在不喜欢喝咖啡了", ("我喜欢喝咖啡",), "不喜欢",
       "update"),
)  # fmt: skip

KEEP: tuple[UpdateCase, ...] = (
    _c("dev-keep", _C, ("我在腾讯上班",), "我朋友换工作了", (), "", None),
    _c("dev-keep", _C, ("我抽烟",), "我同事戒烟了", (), "", None),
    _c("dev-keep", _C, ("我养了一只猫",), "如果我不养猫了会怎样", (), "", None),
    _c("dev-keep", _C, ("我在银行上班",), "我要是辞职了你会想我吗", (), "", None),
    _c("dev-keep", _C, ("我养了一只猫",), "你还记得我的猫吗？", (), "", None),
    _c("dev-keep", _C, ("我住在杭州",), "我不想住杭州了", (), "", None),
    _c("dev-keep", _C, ("我在读高二",), "我弟弟不读书了", (), "", None),
    _c("dev-keep", _T, ("我住在海淀",), "我上个月去过朝阳", (), "朝阳", "add"),
    _c("dev-keep", _T, ("我住在杭州",), "我妈妈搬到上海了", (), "上海", "add"),
    _c("dev-keep", _T, ("我养了一只狗",), "我又养了一只猫", (), "猫", "add"),
    _c("dev-keep", _T, ("我喜欢打篮球",), "我也喜欢踢足球", (), "足球", "add"),
    _c("dev-keep", _T, ("我在上海工作",), "我下周去北京出差", (), "北京", "add"),
    _c("dev-keep", _T, ("我在读高二",), "我表弟升高三了", (), "表弟", "add"),
    _c("dev-keep", _T, ("我最喜欢的水果是草莓",), "我也挺喜欢吃芒果的", (), "芒果", "add"),
    _c("dev-keep", _T, ("我用的是华为手机",), "我给我爸买了个小米手机", (), "小米", "add"),
)  # fmt: skip

# written after the first rules passed the cases above, to see whether they generalise
SECOND: tuple[UpdateCase, ...] = (
    _c("dev-correction", _T, ("我在星巴克做咖啡师",), "我现在在瑞幸上班了",
       ("我在星巴克做咖啡师",), "瑞幸", "update"),
    _c("dev-correction", _T, ("我在一家公司做会计",), "我换了份工作，在银行做柜员",
       ("我在一家公司做会计",), "柜员", "update"),
    _c("dev-correction", _T, ("我在读高一",), "我已经高二了", ("我在读高一",), "高二", "update"),
    _c("dev-correction", _T, ("我住在天河区",), "我搬家了，现在住番禺", ("我住在天河区",),
       "番禺", "update"),
    _c("dev-correction", _T, ("我的手机是华为P40",), "我现在用iPhone了", ("我的手机是华为P40",),
       "iPhone", "update"),
    _c("dev-correction", _T, ("我养了一只叫可乐的柯基",), "我家柯基现在叫雪碧了",
       ("我养了一只叫可乐的柯基",), "雪碧", "update"),
    _c("dev-correction", _T, ("我最喜欢的运动是篮球",), "我现在最喜欢的运动是游泳",
       ("我最喜欢的运动是篮球",), "游泳", "update"),
    _c("dev-correction", _T, ("我喜欢玩吉他",), "我不弹吉他了，改学架子鼓了", ("我喜欢玩吉他",),
       "架子鼓", "update"),
    _c("dev-denial", _C, ("我男朋友叫阿杰",), "我和阿杰分手了", ("我男朋友叫阿杰",), "", "deny"),
    _c("dev-denial", _C, ("我在玩原神",), "原神我退坑了", ("我在玩原神",), "", "deny"),
    _c("dev-denial", _C, ("我打算明年考研",), "我决定不考研了", ("我打算明年考研",), "", "deny"),
    _c("dev-denial", _C, ("我周末经常去爬山",), "我周末不去爬山了", ("我周末经常去爬山",), "",
       "deny"),
    _c("dev-denial", _C, ("我喜欢吃辣",), "我现在不能吃辣了", ("我喜欢吃辣",), "", "deny"),
    _c("dev-denial", _C, ("我是一名老师",), "我已经不当老师了", ("我是一名老师",), "", "deny"),
    _c("dev-denial", _C, ("我开的是特斯拉",), "我把车卖了", ("我开的是特斯拉",), "", "deny"),
    _c("dev-denial", _C, ("我在读大学",), "我已经毕业了", ("我在读大学",), "", "deny"),
    _c("dev-denial", _C, ("我下周要去青岛",), "我去青岛的计划取消了", ("我下周要去青岛",), "",
       "deny"),
    _c("dev-keep", _C, ("我在腾讯上班",), "我今天不去上班了", (), "", None),
    _c("dev-keep", _C, ("我最爱吃火锅",), "饭我不吃了", (), "", None),
    _c("dev-keep", _C, ("我养了一只猫",), "我姐姐的猫送人了", (), "", None),
    _c("dev-keep", _C, ("我有女朋友",), "我室友和女朋友分手了", (), "", None),
    _c("dev-keep", _T, ("我住在天河区",), "我同学搬到番禺了", (), "番禺", "add"),
    _c("dev-keep", _T, ("我在读高一",), "我妹妹读初二", (), "初二", "add"),
)  # fmt: skip

DEV_CASES: tuple[UpdateCase, ...] = CORRECTIONS + DENIALS + KEEP + SECOND
