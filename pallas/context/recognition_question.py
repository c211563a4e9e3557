"""Recognition questions: "who / what / which meme is this?" about an image.

When the current message carries its own image and asks to identify it, the reply turn must focus
on that image: the recent group-timeline images are NOT added (they would pull the model towards
"the picture from earlier"). Ordinary questions (今天吃什么, 你是谁, 这是为什么 …) do not count.

Rules (zero LLM, pure):
1. meme / source questions anywhere: 啥梗, 什么梗, 哪个梗, 梗是什么, 出自哪, 出处, 求出处, 哪部番;
2. a pointing word (这 / 这个 / 这张 / 这图 / 这人 / 图里 …), optionally a short noun and a
   copula (是 / 叫 / 到底 …), then an interrogative (谁 / 什么 / 啥 / 哪): 这是谁, 这谁啊,
   这角色叫什么, 这图出自哪里, 图里的人是谁;
3. the inverted spoken form: 谁啊这是, 啥玩意这是, 什么东西这是;
4. English: who/what is this, what's this, who's that.
"为什么 / 什么时候 / 为啥 / 啥时候 / 凭什么 / 干什么 / 这谁顶得住" are removed first so that
这是为什么, 你这是干什么 or 这是什么时候的事 are not mistaken for identification.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CQ_OR_PLACEHOLDER_RE = re.compile(r"\[CQ:[^\]]*\]|\[图片\](?::url=\S*)?|\[表情\]")
_NOISE_RE = re.compile(r"[\s,.!?~，。！？、…：:；;\"'“”‘’()（）\-—]+")
# Interrogatives that ask "why / when", not "what / who".
_NON_IDENTIFYING_RE = re.compile(
    r"为什么|为啥|凭什么|什么时候|啥时候|多会儿|(?:在)?(?:干|搞|整|做)(?:什么|啥|嘛)"
    r"|谁(?:能)?(?:顶|受|扛|忍|撑|把持)(?:得|不)(?:住|了)"  # 这谁顶得住: an exclamation
)

_MEME_OR_SOURCE_RE = re.compile(
    r"(?:啥|什么|哪个|哪一个|何)梗"
    r"|梗(?:是|叫)?(?:啥|什么)"
    r"|出自(?:哪|什么|何)"
    r"|(?:求|有没有|有无|要)?出处"
    r"|(?:哪部|哪个|什么)(?:番|动漫|动画|漫画|电影|电视剧|剧|游戏|作品)(?:的|里的|里面的)"
)
_POINTER = (
    r"(?:这(?:个|张|幅|位|只|部|款|首|段|条|本|篇|家|人|图|俩|些)?"
    r"|图(?:里|中|上|片里|片上)|画面(?:里|中))"
)
_NOUN = (
    r"(?:人|图|图片|照片|角色|人物|东西|玩意儿?|游戏|番|动漫|作品|电影|歌|表情包?|梗|干员|"
    r"地方|猫|狗|车|妹子|小姐姐|老婆|男的|女的)"
)
_LINK = r"(?:的)?(?:又|到底|究竟)?(?:是|叫|叫做|出自|来自|在){0,2}(?:个|的)?"
_POINTED_QUESTION_RE = re.compile(
    rf"{_POINTER}(?:的)?(?:{_NOUN})?{_LINK}(?:谁|什么|啥|哪(?:里|儿|个|位|部|款|只|家)?)"
)
_INVERTED_RE = re.compile(
    r"(?:谁|什么|啥)(?:啊|呀|哇|嘛)?(?:东西|玩意儿?)?(?:啊|呀)?这(?:是|个|谁)"
)
_ENGLISH_RE = re.compile(r"\b(?:who|what)(?:'s|\s+is)\s+(?:this|that|it)\b")


@dataclass(frozen=True, slots=True)
class RecognitionMatch:
    rule: str  # "meme_or_source" | "pointed_question" | "inverted" | "english"
    matched: str


def recognition_question_match(text: str) -> RecognitionMatch | None:
    """Which rule makes `text` a recognition question (for traces), or None."""
    if not text:
        return None
    lowered = _CQ_OR_PLACEHOLDER_RE.sub(" ", text.lower())
    english = _ENGLISH_RE.search(lowered)
    if english:
        return RecognitionMatch("english", english.group(0))
    compact = _NOISE_RE.sub("", lowered)
    compact = _NON_IDENTIFYING_RE.sub("|", compact)
    for rule, pattern in (
        ("meme_or_source", _MEME_OR_SOURCE_RE),
        ("inverted", _INVERTED_RE),
        ("pointed_question", _POINTED_QUESTION_RE),
    ):
        found = pattern.search(compact)
        if found:
            return RecognitionMatch(rule, found.group(0))
    return None


def is_recognition_question(text: str) -> bool:
    """True for 这是谁 / 这是什么 / 啥梗 / 这是哪 / 谁啊这是 / 出自哪 / 这图是啥 …"""
    return recognition_question_match(text) is not None
