"""A development set of yes-or-no recall questions (issue #47): "你还记得我养鸟吗？", "我是不是会
打鼓？", "我跟你说过我有糖尿病吗？" — asked of facts the member told, in its words or in others,
and of things the member never told (many next to a told topic: a daughter but no son, a mango
allergy but none to peanuts, a drum but no guitar). Every question of the other sets asks for a
value (什么, 哪, 几 …); a yes-or-no question names its value, so whether a fact can answer it is
a different matter. Written on 2026-12-07 before any rule for such questions, to measure one
on the facts it could lose as well as on the negatives. Development data.

The distractors are the development half's (`_member_recall_data.DISTRACTORS`).
"""

from __future__ import annotations

from benchmarks._member_recall_data import DISTRACTORS as DISTRACTORS
from benchmarks._member_recall_shape import MemberFact, NegativeControl

WRITTEN_ON = "2026-12-07"

F = MemberFact

# fmt: off
FACTS: tuple[MemberFact, ...] = (
    # member 13: a retired factory worker in Shenyang, in his sixties
    F(13, "我在沈阳拖拉机厂干了三十年", "你还记得我在工厂上过班吗？", "拖拉机厂", "paraphrase"),
    F(13, "我有糖尿病，每天打胰岛素", "我跟你说过我有糖尿病吗？", "糖尿病", "direct"),
    F(13, "我每天早上去公园遛鸟", "你记得我养鸟吗？", "遛鸟", "paraphrase"),
    F(13, "我老伴去年走了", "我跟你说过我老伴的事吗？", "去年走了", "direct"),
    F(13, "我会拉二胡", "我是不是会乐器？", "二胡", "category"),
    F(13, "我年轻时在部队当过汽车兵", "我说过我当过兵吗？", "汽车兵", "direct"),
    F(13, "我戒烟十年了", "我现在还抽烟吗？", "戒烟", "paraphrase"),
    F(13, "我爱看东北二人转", "你记得我喜欢看二人转吗？", "二人转", "direct"),
    F(13, "我孙女在北京读研究生", "我跟你说过我孙女在读书吗？", "研究生", "paraphrase"),
    F(13, "我冬天去海南住三个月", "我冬天是不是去南方过？", "海南", "paraphrase"),
    # member 14: a bank clerk in Hangzhou and mother of a small daughter
    F(14, "我在杭州一家银行上班", "我是在银行工作吗？", "银行", "direct"),
    F(14, "我女儿今年上幼儿园中班", "你记得我有孩子吗？", "幼儿园", "paraphrase"),
    F(14, "我对芒果过敏", "我跟你说过我吃芒果会过敏吗？", "芒果", "direct"),
    F(14, "我每天练半小时瑜伽", "我是不是在练瑜伽？", "瑜伽", "direct"),
    F(14, "我开一辆白色的特斯拉", "你记得我有车吗？", "特斯拉", "paraphrase"),
    F(14, "我下班后自学日语，打算明年考N2", "我说过我在学外语吗？", "日语", "category"),
    F(14, "我滴酒不沾", "我平时喝酒吗？", "滴酒不沾", "paraphrase"),
    F(14, "我老公是中学老师", "我跟你说过我老公是老师吗？", "中学老师", "direct"),
    F(14, "我周末常带娃去西溪湿地", "你记得我周末爱去湿地吗？", "西溪湿地", "direct"),
    F(14, "我特别怕蛇", "我是不是怕蛇？", "怕蛇", "direct"),
    # member 15: a third-year student in Chengdu
    F(15, "我在成都读大三", "你记得我还在上学吗？", "大三", "paraphrase"),
    F(15, "我天生是个左撇子", "我跟你说过我是左撇子吗？", "左撇子", "direct"),
    F(15, "我养了一只柯基", "我是不是养了狗？", "柯基", "category"),
    F(15, "我每天打两小时王者荣耀", "我说过我玩手游吗？", "王者荣耀", "category"),
    F(15, "我一点辣都吃不了", "你记得我能吃辣吗？", "辣都吃不了", "paraphrase"),
    F(15, "我暑假去西藏骑行了", "我跟你说过我去过西藏吗？", "西藏", "direct"),
    F(15, "我在学校乐队当鼓手", "我是不是会打鼓？", "鼓手", "paraphrase"),
    F(15, "我有一个双胞胎哥哥", "你记得我有兄弟吗？", "双胞胎", "paraphrase"),
    F(15, "我戴隐形眼镜", "我说过我近视吗？", "隐形眼镜", "paraphrase"),
    F(15, "我手机里全是周杰伦的歌", "你记得我爱听周杰伦吗？", "周杰伦", "direct"),
)

NEGATIVES: tuple[NegativeControl, ...] = (
    NegativeControl(13, "我说过我养狗吗？"),
    NegativeControl(13, "你记得我会开车吗？"),
    NegativeControl(13, "我跟你说过我有高血压吗？"),
    NegativeControl(13, "我是不是去过日本？"),
    NegativeControl(13, "我说过我儿子结婚了吗？"),
    NegativeControl(13, "你还记得我会下象棋吗？"),
    NegativeControl(13, "我跟你说过我住过院吗？"),
    NegativeControl(14, "我是不是在学钢琴？"),
    NegativeControl(14, "你记得我有儿子吗？"),
    NegativeControl(14, "我说过我对花生过敏吗？"),
    NegativeControl(14, "我跟你说过我会游泳吗？"),
    NegativeControl(14, "我是不是喜欢喝咖啡？"),
    NegativeControl(14, "我说过我要换工作吗？"),
    NegativeControl(14, "你还记得我养猫吗？"),
    NegativeControl(15, "我说过我有女朋友吗？"),
    NegativeControl(15, "我是不是会弹吉他？"),
    NegativeControl(15, "你记得我玩原神吗？"),
    NegativeControl(15, "我跟你说过我去过新疆吗？"),
    NegativeControl(15, "我说过我戴牙套吗？"),
    NegativeControl(15, "我是不是挂过科？"),
    NegativeControl(15, "你记得我有妹妹吗？"),
)
# fmt: on
