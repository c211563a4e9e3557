"""Tokenisation for retrieval: Chinese (jieba) + Latin words, plus CJK character bigrams.

`tokenize(text)` is deterministic and cached: lower-cased, NFKC-normalised (full-width letters
become ASCII), stopwords and punctuation removed. Every run of two or more CJK characters also
contributes its character bigrams, so a short query such as "罗德岛" still overlaps with a
document that jieba segmented differently ("罗德" / "岛").

jieba's dictionary takes about a second to load. It is loaded once per process, on first use
(or eagerly via `warm_up()` at start-up), with jieba's own logger turned down to WARNING.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
import unicodedata
from functools import lru_cache
from types import ModuleType
from typing import cast


def _import_jieba() -> ModuleType:
    """Import jieba without `pkg_resources` (~4.6 MB RSS, ~0.15 s to import).

    jieba only uses it to open its bundled dict.txt; when the import fails it opens the same
    file by path. `pkg_resources` is hidden for this one import and restored afterwards.
    """
    if "jieba" in sys.modules or "pkg_resources" in sys.modules:
        import jieba

        return cast(ModuleType, jieba)
    sys.modules["pkg_resources"] = None  # type: ignore[assignment]
    try:
        import jieba
    finally:
        del sys.modules["pkg_resources"]
    return cast(ModuleType, jieba)


jieba = _import_jieba()

# Function words that carry no retrieval signal. Kept short on purpose: negations such as 不/没
# and content-bearing single characters stay in.
STOPWORDS: frozenset[str] = frozenset(
    {
        # Chinese particles, pronouns, question words, fillers
        "的", "了", "是", "在", "和", "与", "就", "都", "而", "及", "也", "还", "又", "着",
        "呢", "吗", "吧", "啊", "呀", "哦", "噢", "嗯", "哈", "哈哈", "么", "嘛", "啦", "咯",
        "那", "这", "那个", "这个", "个", "之", "其", "或", "被", "把", "给", "让", "对",
        "从", "向", "到", "以", "为", "于", "得", "地", "很", "有", "要", "会", "能",
        "我", "你", "他", "她", "它", "我们", "你们", "他们", "她们", "咱", "咱们", "自己",
        "什么", "怎么", "怎么样", "为什么", "哪", "哪个", "哪里", "谁", "多少", "几",
        "一个", "一下", "一些", "这样", "那样", "然后", "还是", "就是", "但是", "因为", "所以",
        "如果", "可以", "来着",
        # English
        "a", "an", "the", "is", "are", "was", "were", "be", "been", "to", "of", "and", "or",
        "in", "on", "at", "for", "with", "it", "its", "this", "that", "i", "you", "he", "she",
        "we", "they", "me", "my", "your", "do", "does", "did", "what", "how", "why", "who",
        "which", "so", "as", "by", "am",
    }
)  # fmt: skip

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")
_WHITESPACE = re.compile(r"\s+")

_init_lock = threading.Lock()
_initialised = False


def warm_up() -> None:
    """Load jieba's dictionary now (idempotent). Call once at start-up to keep turns fast."""
    global _initialised
    if _initialised:
        return
    with _init_lock:
        if _initialised:
            return
        jieba.setLogLevel(logging.WARNING)
        logging.getLogger("jieba").setLevel(logging.WARNING)
        jieba.initialize()
        _initialised = True


def warm_up_word_tags() -> None:
    """Load jieba's part-of-speech tags too (`jieba.posseg`: its import reads the word-tag
    table, ~1 s). The remembered words (`stake_words`) tag a turn's memory rows; without this
    start-up load the first turn that needed them read the table on the event loop."""
    warm_up()
    import jieba.posseg  # noqa: F401  (the import is the load)


def dictionary_frequency(word: str) -> int:
    """How often jieba's dictionary counts `word` (0: no word of it, or only a prefix of one)."""
    warm_up()
    return int(jieba.dt.FREQ.get(word, 0) or 0)


def normalize_text(text: str) -> str:
    """NFKC + lower-case + collapsed whitespace: the form every comparison works on."""
    text = unicodedata.normalize("NFKC", text).lower()
    return _WHITESPACE.sub(" ", text).strip()


# "你还记得我说过…吗" / "我跟你说过…吗" / "…来着？": how a member asks whether the bot remembers,
# not what they ask about. Encoded with it, every such question lands near every fact of the
# member alike; without it, the fact asked for stands out (`benchmarks.member_recall`, dev half).
_RECALL_FRAME = re.compile(
    r"你?还?记得(?:[吗嘛][，,？?\s]*)?|我?(?:以前)?(?:跟你|和你|给你)?(?:说|讲|提)过"
    r"|(?:来着)?(?:[吗嘛]|(?<![什怎这那多要])么)?[?？!！。.\s]*$"
)


def recall_question(text: str) -> str:
    """`text` without the asking-whether-you-remember frame (the text itself when nothing
    else would be left): what a question's vector is encoded from."""
    stripped = _RECALL_FRAME.sub("", text).strip()
    return stripped or text


# Where a member's compound question splits into what it asks ("我现在是做什么的，家里有宠物吗").
_CLAUSE_BREAK = re.compile(r"[，,、；;？?。！!\s]+|还有|另外|以及")
MAX_QUESTION_PARTS = 4  # the whole question and up to three of its clauses


def question_parts(text: str) -> tuple[str, ...]:
    """What a question asks: the whole question (`recall_question`) and, when it asks two
    things or more, each clause on its own. Its concept classes and answer types are taken
    from every part (a fact's share is its best over them); its vectors from `encoded_parts`."""
    whole = recall_question(text)
    # a clause that is only the frame ("你还记得吗，…") asks nothing of its own
    clauses = [
        recall_question(c)
        for c in _CLAUSE_BREAK.split(text)
        if len(c.strip()) >= 2 and _RECALL_FRAME.sub("", c).strip()
    ]
    if len(clauses) < 2:
        return (whole,)
    return tuple(dict.fromkeys((whole, *clauses)))[:MAX_QUESTION_PARTS]


def encoded_parts(text: str) -> tuple[str, ...]:
    """What a question's vectors are encoded from: each clause of a question asked in clauses,
    else the whole; a fact's cosine is its best over them. Encoded whole, a compound question
    lands between its facts (each below the person-facts gate), while each clause finds its
    own. The whole's vector beside the clauses' added nothing: on the compound development
    questions (`benchmarks.compound_questions`, 10 / 50 / 200 facts a member) the clauses
    alone ranked every ask where both together did past the gate, and the whole was a fifth
    of the encode (6.0 → 4.7 ms)."""
    parts = question_parts(text)
    return parts[1:] or parts


def speaker_voice(text: str) -> str:
    """A person fact as the member said it: stored as "TA在学日语", encoded as "我在学日语" —
    the member asks "我…", and the encoder scores the same person as closer (dev half, 50
    facts, with `recall_question` and the person-facts gate 0.35: the fact asked for among the
    first five past the gate 65 % → 73 %, negative controls empty 69 % → 77 %)."""
    return text.replace("TA", "我")


@lru_cache(maxsize=1024)
def normalize_query(text: str) -> str:
    """Cache-key form of a query: normalised text with punctuation and symbols dropped.

    Remembered (a pure function): a turn's query is keyed once per retrieved block kind."""
    kept = "".join(ch if _is_word_char(ch) else " " for ch in normalize_text(text))
    return _WHITESPACE.sub(" ", kept).strip()


def _is_word_char(ch: str) -> bool:
    return ch == "_" or unicodedata.category(ch)[0] in ("L", "N")


def _keep(token: str) -> bool:
    token = token.strip()
    if not token or token in STOPWORDS:
        return False
    return any(_is_word_char(ch) for ch in token)


def cjk_bigrams(text: str) -> list[str]:
    """Character bigrams of every CJK run in `text` (already normalised).

    A bigram touching a one-character stopword (的, 我, 在 ...) is noise and is left out.
    """
    grams: list[str] = []
    for run in _CJK_RUN.findall(text):
        for i in range(len(run) - 1):
            if run[i] in STOPWORDS or run[i + 1] in STOPWORDS:
                continue
            grams.append(run[i : i + 2])
    return grams


@lru_cache(maxsize=16384)
def tokenize(text: str) -> tuple[str, ...]:
    """Retrieval tokens of `text`: jieba search-mode words, then CJK bigrams, in text order.

    Duplicates are kept (term frequency matters to BM25). Deterministic for a given text.
    """
    warm_up()
    norm = normalize_text(text)
    if not norm:
        return ()
    words = [w.strip() for w in jieba.lcut_for_search(norm, HMM=True)]
    tokens = [w for w in words if _keep(w)]
    tokens.extend(g for g in cjk_bigrams(norm) if g not in STOPWORDS)
    return tuple(tokens)
