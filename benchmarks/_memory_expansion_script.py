"""A scripted stand-in for the cheap model in the memory benchmark's ``--expansion`` run.

It is the fake OpenAI-compatible server of the tests, answering expansion prompts from a script:
for the meaning probes' facts, what a cheap model is expected to say (written by hand: keywords
with synonyms and hypernyms, a category, likely questions); for every other row a weak generic
answer (the fact's own words, category "other", no questions). So the ``--expansion`` figure
proves the write → store → index path end to end; it does not measure a real model's quality.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pallas.ranking.text import tokenize
from tests.harness.fake_openai import FakeOpenAI, Scripted

_MEMORY = re.compile(r"记忆：(.*)$", re.DOTALL)

# stored fact (third person) → (keywords, category, questions)
# fmt: off
SCRIPT: dict[str, tuple[list[str], str, list[str]]] = {
    "TA对花生过敏": (["花生", "过敏", "忌口", "食物"],
        "restriction", ["我对什么过敏？", "我有什么不能吃？"]),
    "TA是左撇子": (["左撇子", "左手", "惯用手"], "hand", ["我用哪只手？", "我是左撇子吗？"]),
    "TA周末一般去游泳": (["游泳", "运动", "周末", "锻炼"],
        "sport", ["我周末做什么？", "我喜欢什么运动？"]),
    "TA在备考雅思": (["雅思", "考试", "英语", "备考"], "exam", ["我在准备什么考试？"]),
    "TA住在海淀区": (["海淀", "住址", "北京", "区"], "residence", ["我住在哪里？", "我住哪个区？"]),
    "TA的血型是O型": (["血型", "O型"], "body", ["我是什么血型？"]),
    "TA身高一米八": (["身高", "一米八", "个子"], "body", ["我多高？"]),
    "TA不能吃辣": (["辣", "忌口", "口味", "吃辣"], "restriction", ["我能吃辣吗？"]),
    "TA有高血压": (["高血压", "疾病", "健康", "身体"], "health", ["我有什么病？"]),
    "TA晕车": (["晕车", "坐车", "交通", "身体不适"], "health", ["我坐车会晕吗？"]),
    "TA每天六点下班": (["下班", "六点", "工作时间"], "shift", ["我几点下班？"]),
    "TA乳糖不耐受": (["乳糖不耐受", "牛奶", "奶制品", "忌口"], "restriction", ["我能喝牛奶吗？"]),
    "TA是独生子": (["独生子", "兄弟姐妹", "家庭"], "sibling", ["我有兄弟姐妹吗？"]),
    "TA在深圳打工": (["深圳", "工作", "城市", "打工"], "job", ["我在哪里工作？"]),
    "TA上夜班": (["夜班", "工作时间", "作息"], "shift", ["我上什么班？"]),
    "TA头发是自然卷": (["头发", "自然卷", "发型", "外貌"], "appearance", ["我的头发什么样？"]),
    "TA戒烟三个月了": (["戒烟", "抽烟", "吸烟"], "smoking", ["我还抽烟吗？"]),
    "TA喜欢打羽毛球": (["羽毛球", "运动", "球类"], "sport", ["我喜欢什么运动？"]),
    "TA在学法语": (["法语", "外语", "语言", "学习"], "language", ["我在学什么语言？"]),
    "TA养了两只兔子": (["兔子", "宠物", "动物"], "pet", ["我养了什么宠物？"]),
    "TA最爱喝冰美式": (["美式", "咖啡", "饮料"], "drink", ["我爱喝什么？"]),
    "TA喜欢看宫崎骏的动画": (["宫崎骏", "动画", "电影", "动漫"], "media", ["我喜欢看什么电影？"]),
    "TA考过了教资": (["教资", "教师资格证", "证书", "考试"], "certificate", ["我有什么证书？"]),
    "TA在玩原神": (["原神", "游戏", "手游"], "game", ["我在玩什么游戏？"]),
    "TA住在西湖区": (["西湖区", "杭州", "住址"], "residence", ["我住在哪里？"]),
    "TA爸是厨师": (["爸爸", "父亲", "厨师", "职业", "家人"], "family", ["我爸是做什么的？"]),
    "TA每周六上午去上钢琴课": (["钢琴课", "周六", "上课", "乐器"],
        "schedule", ["我周六有什么安排？"]),
}
# fmt: on


def scripted_answer(memory: str) -> dict[str, Any]:
    if memory in SCRIPT:
        keywords, category, questions = SCRIPT[memory]
        return {"keywords": keywords, "category": category, "questions": questions}
    words = [t for t in dict.fromkeys(tokenize(memory)) if t != "ta" and len(t) >= 2]
    return {"keywords": words[:5], "category": "other", "questions": []}


class ScriptedExpansionModel(FakeOpenAI):
    """Answers every expansion prompt from `SCRIPT` (see the module docstring)."""

    def _completion(self, body: dict[str, Any], item: Scripted) -> dict[str, Any]:  # type: ignore[override]
        last = str((body.get("messages") or [{}])[-1].get("content", ""))
        match = _MEMORY.search(last)
        memory = match.group(1).strip() if match else ""
        answer = json.dumps(scripted_answer(memory), ensure_ascii=False)
        return FakeOpenAI._completion(body, Scripted(text=answer, usage=(120, 40)))
