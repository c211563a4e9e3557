"""A fourth development set for member recall (issue #47): three new members whose facts sit
in classes the instance lists did not cover on 2026-12-07 — foods, drinks, devices, exams,
colours, operas — asked in the fact's words or in others, and 24 never-said questions, each next
to a topic the member did tell: hotpot but no sushi, an Americano but no cola, a laptop but no
phone, IELTS but no TOEFL, dumplings but no buns. Written on 2026-12-07 before any rule for
those classes, to measure one on the facts it could lose as well as on the negatives.
Development data.

The distractors are the development half's (`_member_recall_data.DISTRACTORS`).
"""

from __future__ import annotations

from benchmarks._member_recall_data import DISTRACTORS as DISTRACTORS
from benchmarks._member_recall_shape import MemberFact, NegativeControl

WRITTEN_ON = "2026-12-07"

F = MemberFact

# fmt: off
FACTS: tuple[MemberFact, ...] = (
    # member 16: a UI designer in Guangzhou, late twenties
    F(16, "我每天早上必须喝一杯美式", "我早上习惯喝点什么？", "美式", "paraphrase"),
    F(16, "我对牛奶乳糖不耐受", "我能喝牛奶吗？", "乳糖不耐受", "direct"),
    F(16, "我最爱吃潮汕牛肉火锅", "我最喜欢吃哪种火锅？", "牛肉火锅", "direct"),
    F(16, "我用的是一台华为的笔记本", "我的电脑是什么牌子？", "华为", "paraphrase"),
    F(16, "我最喜欢的颜色是墨绿色", "我喜欢什么颜色？", "墨绿", "direct"),
    F(16, "我在一家游戏公司做UI设计", "我是做什么工作的？", "UI设计", "category"),
    F(16, "我周末会去上陶艺课", "我周末有什么固定的活动？", "陶艺", "paraphrase"),
    F(16, "我不吃香菜，一点都不行", "我吃东西有什么忌讳？", "香菜", "category"),
    F(16, "我养了两只英短", "我是不是养猫了？", "英短", "category"),
    F(16, "我喝奶茶只点三分糖", "我点奶茶要几分糖？", "三分糖", "direct"),
    F(16, "我去年考过了雅思，七分", "我雅思考了多少分？", "七分", "direct"),
    F(16, "我的耳机是索尼的降噪款", "我用什么耳机？", "索尼", "direct"),
    # member 17: a high-school chemistry teacher in Kunming, mid-thirties
    F(17, "我在昆明一所高中教化学", "我教哪一科？", "化学", "paraphrase"),
    F(17, "我每天放学后去打半小时乒乓球", "我平时做什么运动？", "乒乓球", "category"),
    F(17, "我喜欢喝普洱，家里囤了好多饼", "我爱喝哪种茶？", "普洱", "category"),
    F(17, "我在准备明年的考研", "我是不是在备考？", "考研", "paraphrase"),
    F(17, "我吃不了海鲜，一吃就起疹子", "我有什么过敏的东西？", "海鲜", "paraphrase"),
    F(17, "我开一辆二手的丰田卡罗拉", "我开的是什么车？", "卡罗拉", "direct"),
    F(17, "我女朋友是护士", "我女朋友是干什么的？", "护士", "direct"),
    F(17, "我用安卓手机，一直是小米", "我用什么牌子的手机？", "小米", "direct"),
    F(17, "我早餐天天吃米线", "我早上一般吃什么？", "米线", "paraphrase"),
    F(17, "我最喜欢的水果是山竹", "我喜欢吃什么水果？", "山竹", "direct"),
    F(17, "我每周三晚上要看晚自习", "我哪天晚上要值班？", "周三", "paraphrase"),
    F(17, "我不喝酒，只喝饮料", "我会喝酒吗？", "不喝酒", "direct"),
    # member 18: a retired nurse in Qingdao, late fifties
    F(18, "我退休前在医院当了三十年护士", "我以前是做什么的？", "护士", "direct"),
    F(18, "我有高血压，每天吃降压药", "我身体有什么毛病？", "高血压", "category"),
    F(18, "我每天晚饭后去海边散步", "我晚上一般干嘛？", "海边散步", "paraphrase"),
    F(18, "我最爱吃韭菜馅饺子", "我喜欢吃什么馅的饺子？", "韭菜", "direct"),
    F(18, "我外孙今年上小学一年级", "我外孙几年级了？", "一年级", "direct"),
    F(18, "我每天早上喝一杯豆浆", "我早上喝什么？", "豆浆", "direct"),
    F(18, "我在老年大学学书法", "我在学什么？", "书法", "paraphrase"),
    F(18, "我退休后迷上了听京剧", "我爱听什么戏？", "京剧", "category"),
    F(18, "我家里有两只鹦鹉", "我养了什么鸟？", "鹦鹉", "category"),
    F(18, "我年轻时去过一趟新疆", "我去过西北吗？", "新疆", "category"),
    F(18, "我膝盖不好，爬不了楼梯", "我腿脚怎么样？", "膝盖", "paraphrase"),
    F(18, "我老伴爱打太极拳", "我老伴有什么爱好？", "太极拳", "category"),
)

NEGATIVES: tuple[NegativeControl, ...] = (
    NegativeControl(16, "我说过我喜欢吃寿司吗？"),
    NegativeControl(16, "我平时喝可乐吗？"),
    NegativeControl(16, "我用的什么手机？"),
    NegativeControl(16, "我对花生过敏吗？"),
    NegativeControl(16, "我托福考了几分？"),
    NegativeControl(16, "我家里有没有狗？"),
    NegativeControl(16, "我最喜欢的歌手是谁？"),
    NegativeControl(16, "我家住在哪个小区？"),
    NegativeControl(17, "我喜欢喝咖啡吗？"),
    NegativeControl(17, "我是不是打羽毛球？"),
    NegativeControl(17, "我午饭一般吃什么？"),
    NegativeControl(17, "我女朋友叫什么名字？"),
    NegativeControl(17, "我喜欢吃榴莲吗？"),
    NegativeControl(17, "我的笔记本是什么牌子的？"),
    NegativeControl(17, "我教了几年书？"),
    NegativeControl(17, "我的车是什么颜色？"),
    NegativeControl(18, "我喜欢吃包子吗？"),
    NegativeControl(18, "我有糖尿病吗？"),
    NegativeControl(18, "我早上喝牛奶吗？"),
    NegativeControl(18, "我外孙女在哪读书？"),
    NegativeControl(18, "我喜欢听越剧吗？"),
    NegativeControl(18, "我养了几只猫？"),
    NegativeControl(18, "我去过西藏吗？"),
    NegativeControl(18, "我老伴喜欢下棋吗？"),
)
# fmt: on
