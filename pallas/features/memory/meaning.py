"""Which live fact a member's new line is about, by the offline encoder: the no-model fallback's
choice when the rules name none.

The ONE fact the encoder finds close and clearly nearest of all the member's live
facts, when it is `related` to the line (a shared word, or instances of one
class). Two callers: a plain 记住 telling a change in words ("我把头发染成栗色了":
`memory_commands.corrections`) and a denial said in chat that no rule matched to a
fact ("我现在晚上不玩手机了" against "TA每晚都玩手机到很晚": the rule wants every denied word in the
old fact; `MemoryService.deny_by_rules`). A lost fact is worse than a missed
update: no relation, or no clear lead, no choice.

The bar was set on the development halves (`benchmarks/_member_recall_data.py`: the changed or
denied fact at cosine 0.45-0.74 and 0.13-0.43 ahead of the next; "换了新的床垫" → "换了新的窗帘"
0.59 but 0.03 ahead) and checked against `benchmarks.memory_corrections --set dev`'s controls;
the relation after a real-encoder test found "换了新的床垫" retiring "换了新的窗帘" in a small
profile, where it was the clear nearest (tests/integration/test_sentence_encoder_real.py).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from pallas.features.memory.denials import Denial
from pallas.features.memory.embedder import ActiveModel
from pallas.features.memory.judgement import Judgement, Op
from pallas.features.memory.records import MemoryItem
from pallas.providers.encoder_process import EncoderUnavailable
from pallas.ranking import STOPWORDS, name_one_instance, share_a_class, tokenize

log = logging.getLogger("pallas.memory")

MIN_COS = 0.45  # close: the encoder sees the same thing
MARGIN = 0.15  # clearly nearest: this much ahead of every other fact
# when a line tells a change or a denial, not what it is about
_WHEN = re.compile(
    r"^(?:现在|已经|早就|以前|之前|最近|后来|如今|目前|今年|去年|上周|上个月|前几天)$"
)


def meaning_text(text: str) -> str:
    """What the encoder compares: the fact without its subject ("TA的血型是A型" → "的血型是A型";
    "我的血型是O型" → the same shape), so a first-person line meets third-person facts."""
    body = re.sub(r"^(?:TA|ta|我|俺)", "", text.strip())
    return re.sub(r"我|俺", "TA", body) or text


def _words(text: str) -> set[str]:
    """The words of `text` that name something (two characters or more; no time word)."""
    return {t for t in tokenize(text) if len(t) > 1 and t not in STOPWORDS and not _WHEN.match(t)}


def related(line: str, fact: str, *, change: bool = True) -> bool:
    """Whether `fact` can be what `line` changes or denies: they share a word that names
    something ("头发", "月薪", "手机号"), or — for a change, from one instance of a class to
    another — name instances of one class ("西班牙语" / "韩语"). A denial names what it denies,
    so it must name the fact's own instance ("不养狗了" / "TA养了一只柯基"): "我不玩原神了"
    says nothing of "TA每天打王者荣耀". "我上周换了新的床垫" and "TA去年换了新的窗帘" are
    neither, however close the encoder finds them (0.59, and the clear nearest in a small
    profile)."""
    if _words(line) & _words(fact):
        return True
    return share_a_class(line, fact) if change else name_one_instance(line, fact)


def clearly_nearest(
    cosines: Sequence[float], *, min_cos: float = MIN_COS, margin: float = MARGIN
) -> int | None:
    """The index of the one cosine at least `min_cos` and `margin` ahead of all the others
    (None: nothing close, or no clear lead)."""
    if not cosines:
        return None
    best = max(range(len(cosines)), key=lambda i: (cosines[i], -i))
    runner_up = max((c for i, c in enumerate(cosines) if i != best), default=0.0)
    if cosines[best] < min_cos or cosines[best] - runner_up < margin:
        return None
    return best


async def deny_by_meaning(
    model: ActiveModel | None, denial: Denial, live: Sequence[MemoryItem]
) -> Judgement:
    """The live fact a denial no rule matched is about, by the local encoder (a provider's
    model is not called for it: this runs for chat lines, unbilled); "add" (nothing retired)
    without one, without a clear choice, or when the encoder is down. The clear nearest of all
    the live facts must be `related` to what is denied: "我已经不喝咖啡了" says nothing of
    "TA每天喝奶茶", however close the encoder finds the two drinks."""
    nothing = Judgement("add", (), "meaning", f"denial_without_match:{denial.reason}")
    if model is None or model.encoder is None or not live:
        return nothing
    texts = [meaning_text(denial.fact), *(meaning_text(i.text) for i in live)]
    try:
        vectors = await model.encoder.encode(texts)
    except EncoderUnavailable as exc:  # down or restarting: logged once there
        log.info("sentence encoder unavailable for a denial (%s); nothing retired", exc)
        return nothing
    at = clearly_nearest([float(v) for v in vectors[1:] @ vectors[0]])
    if at is None or not related(denial.obj, live[at].text, change=False):
        return nothing
    # a habit given up is information of its own: stored as the new fact ("update")
    op: Op = "update" if denial.keep else "deny"
    return Judgement(op, (live[at].id,), "meaning", f"meaning:{denial.reason}")
