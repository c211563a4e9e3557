"""The speaker's profile: everything the bot knows about them, compact, in one block.

A member who has taught the bot fifty things asks "我最喜欢谁写的小说？": the fact shares no
word with the question, and a block of the sixteen most relevant-or-recent facts leaves it out.
The profile keeps what the bot knows about the speaker always in reach: their live facts
(retired ones never), the relevant ones first, then the newest, deduplicated, each a quoted
phrase as stored ("「TA在学日语」"), eight to a line instead of one, up to `max_chars`; what
the member said themselves (记住 …) on lines of its own, apart from what was overheard. One
quoted phrase per fact keeps every fact data, never an instruction (as the line-per-fact block
does); rows that read as rules for the bot are left out (`fact_guard`).

Contradictions are resolved before the profile sees them: a newer fact that replaces an older
one retires it (slots, the extraction model's judgement), and retired rows are not loaded. The
raw rows stay as they are (audit: `/pallas memory history`, the console); the profile is built
per turn from them, a pure function, microseconds for a hundred facts.

Consolidated by the cheap model: once a member's facts settle, `consolidation_job` has the cheap
model merge them into short statements (near-duplicates one statement, outdated facts retired
as ``model:consolidate``) and stores them with the fact ids they stand for. While those are
exactly the member's live facts, `consolidated_profile` is used instead of the rule-built one;
any change since (a new fact, a retirement, a deletion) falls back to the rules until the next
consolidation.

`benchmarks/taught_facts.py` prints what it costs per request at 5, 20 and 100 facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pallas.context.processor_inputs import RetrievedBlock
from pallas.context.prompt_guard import sanitize_inline
from pallas.core.tokens import count_tokens
from pallas.features.memory import HEADERS, PERSON_FACTS, MemoryItem, StoredProfile, classify_fact
from pallas.ranking import normalize_text

PHRASE_MAX_CHARS = 80
PHRASES_PER_LINE = 8


TOLD = "本人亲口说的："  # what the member taught (记住 …) — weighs more than what was overheard
HEARD = "群聊中得知："
# facts shown after the relevant ones (a small profile's rest, or the nearest below the gate):
# in reach, never told as an answer
ASIDE = "也记得（未必相关）："
# no text has more characters per token than this: a quick bound before counting tokens
CHARS_PER_TOKEN_MAX = 4


@dataclass(frozen=True, slots=True)
class Profile:
    phrases: tuple[str, ...]  # quoted, best first
    refs: tuple[str, ...]  # the rows behind them (mem:…; a consolidated statement has several)
    left_out: int  # live facts that did not fit `max_chars`
    told: tuple[bool, ...] = ()  # per phrase: the member said it themselves (origin teach)


def _phrase(item: MemoryItem) -> str:
    text = sanitize_inline(item.text, PHRASE_MAX_CHARS)
    if not text or (item.origin != "admin" and not classify_fact(text).allowed):
        return ""
    return text.replace("「", "『").replace("」", "』")


def compose_profile(items: Sequence[MemoryItem], *, max_chars: int, max_tokens: int = 0) -> Profile:
    """`items` best first (relevant, then newest): their phrases up to `max_chars` (and
    `max_tokens` tokens of phrase text when set), a phrase whose words another kept phrase
    already contains dropped as a duplicate."""
    phrases: list[str] = []
    refs: list[str] = []
    told: list[bool] = []
    seen: list[str] = []
    used = left_out = tokens = 0
    for item in items:
        phrase = _phrase(item)
        if not phrase:
            continue
        norm = normalize_text(phrase)
        if any(norm in other for other in seen):
            continue  # said already, in the same or more words
        cost = count_tokens(f"「{phrase}」") if max_tokens else 0
        if used + len(phrase) > max_chars or tokens + cost > max_tokens > 0:
            left_out += 1
            continue
        tokens += cost
        phrases.append(f"「{phrase}」")
        refs.append(item.ref)
        told.append(item.origin == "teach")
        seen.append(norm)
        used += len(phrase)
    return Profile(tuple(phrases), tuple(refs), left_out, tuple(told))


def consolidated_profile(
    stored: StoredProfile | None,
    live: Sequence[MemoryItem],
    *,
    max_chars: int,
    relevant: Sequence[MemoryItem] | None = None,
    max_tokens: int = 0,
) -> Profile | None:
    """The model's consolidated profile (`consolidation_job`) as a `Profile`, up to
    `max_chars` (and `max_tokens` when set), when it stands for exactly the member's `live`
    facts — none added, retired or deleted since — else None (the rule-based profile is built
    instead). With `relevant`, only the statements standing for one of those facts, in their
    order: the compact form of the facts this turn needs."""
    if stored is None or not stands_for(stored, live):
        return None
    statements = list(stored.statements)
    if relevant is not None:
        rank = {item.id: at for at, item in enumerate(relevant)}
        statements = sorted(
            (s for s in statements if rank.keys() & set(s.item_ids)),
            key=lambda s: min(rank[i] for i in s.item_ids if i in rank),
        )
    phrases: list[str] = []
    told: list[bool] = []
    refs: list[str] = []
    used = left_out = tokens = 0
    for statement in statements:
        text = sanitize_inline(statement.text, PHRASE_MAX_CHARS)
        if not text or not classify_fact(text).allowed:
            continue
        cost = count_tokens(f"「{text}」") if max_tokens else 0
        if used + len(text) > max_chars or tokens + cost > max_tokens > 0:
            left_out += len(statement.item_ids)
            continue
        used += len(text)
        tokens += cost
        phrases.append("「" + text.replace("「", "『").replace("」", "』") + "」")
        told.append(statement.told)
        refs.extend(f"mem:{i}" for i in statement.item_ids)
    if not phrases:
        return None
    return Profile(tuple(phrases), tuple(dict.fromkeys(refs)), left_out, tuple(told))


def stands_for(stored: StoredProfile | None, live: Sequence[MemoryItem]) -> bool:
    """Whether the consolidated profile `stored` stands for exactly the `live` facts (none
    added, retired or deleted since the model consolidated them)."""
    return stored is not None and bool(live) and tuple(sorted(i.id for i in live)) == stored.basis


def consolidated_aside(
    stored: StoredProfile | None,
    live: Sequence[MemoryItem],
    shown: Profile,
    *,
    near: Sequence[MemoryItem] = (),
    max_chars: int,
    max_tokens: int,
) -> Profile | None:
    """`profile_aside` for a member whose consolidated profile stands for their `live` facts:
    its statements not shown already — all of them when they fit, else those standing for the
    `near` facts — never the raw rows they merge ("「TA很喜欢猫咪」" beside the statement
    "「TA特别喜欢猫」"). None when it does not stand for them, or nothing fits."""
    room = max_tokens - count_tokens(ASIDE)
    if room <= 0 or not stands_for(stored, live):
        return None
    refs = set(shown.refs)
    chars, tokens = _left(shown, max_chars, room)
    if tokens <= 0:
        return None
    rest = [i for i in live if i.ref not in refs]
    whole = consolidated_profile(stored, live, max_chars=chars, relevant=rest, max_tokens=tokens)
    if whole is not None and not whole.left_out:
        return whole
    nearest = [i for i in near if i.ref not in refs]
    if not nearest:
        return None
    return consolidated_profile(stored, live, max_chars=chars, relevant=nearest, max_tokens=tokens)


def profile_aside(
    live: Sequence[MemoryItem],
    shown: Profile,
    *,
    near: Sequence[MemoryItem] = (),
    max_chars: int,
    max_tokens: int,
) -> Profile | None:
    """What the profile adds after `shown` (the facts relevant to this turn), under `ASIDE`,
    within the same token budget: the member's other live facts when ALL of them fit (a small
    profile is carried whole: a member with eleven facts asking "帮我挑个彩票号码吧" still has
    their lucky number in reach), else `near`, the facts nearest the question that the gate
    kept out (a paraphrase's own fact often scores no higher than an unrelated one: the model
    sees it, told it may not apply). None when there is nothing to add or no room."""
    room = max_tokens - count_tokens(ASIDE)  # the label is paid from the budget too
    if room <= 0 or not (live or near):
        return None
    refs = set(shown.refs)
    rest = [i for i in (live if _fits(live, max_chars, room) else near) if i.ref not in refs]
    chars, tokens = _left(shown, max_chars, room)
    if not rest or tokens <= 0:
        return None
    aside = compose_profile(rest, max_chars=chars, max_tokens=tokens)
    return aside if aside.phrases else None


def _left(shown: Profile, max_chars: int, room: int) -> tuple[int, int]:
    """(chars, tokens) an aside may use: `max_chars` and `room` (the token budget less the
    aside's label) less what the `shown` phrases took (their quotes not counted as chars)."""
    chars = max_chars - sum(len(p) - 2 for p in shown.phrases)
    return chars, room - sum(count_tokens(p) for p in shown.phrases)


def _fits(live: Sequence[MemoryItem], max_chars: int, max_tokens: int) -> bool:
    """Whether every one of the member's live facts fits in the budget."""
    if not live or sum(len(i.text) for i in live) > max_tokens * CHARS_PER_TOKEN_MAX:
        return False  # far over the budget: not worth counting
    return not compose_profile(live, max_chars=max_chars, max_tokens=max_tokens).left_out


def profile_block(
    profile: Profile, *, source: str, aside: Profile | None = None
) -> RetrievedBlock | None:
    """The profile as one block: the member's own words and what was overheard on lines of
    their own, then `aside` (`profile_aside`) under its own label."""
    extra = aside.phrases if aside is not None else ()
    if not profile.phrases and not extra:
        return None
    header = HEADERS[PERSON_FACTS]
    told = profile.told or (False,) * len(profile.phrases)
    rows: list[str] = []
    for label, own in ((TOLD, True), (HEARD, False)):
        mine = [p for p, t in zip(profile.phrases, told, strict=True) if t is own]
        for i in range(0, len(mine), PHRASES_PER_LINE):
            rows.append((label if i == 0 else "") + "".join(mine[i : i + PHRASES_PER_LINE]))
    for i in range(0, len(extra), PHRASES_PER_LINE):
        rows.append((ASIDE if i == 0 else "") + "".join(extra[i : i + PHRASES_PER_LINE]))
    refs = profile.refs + (aside.refs if aside is not None else ())
    return RetrievedBlock(
        text="\n".join([f"【{header}】", *rows]),
        source=source,
        memory_ids=refs,
        source_tokens=(f"memory:{PERSON_FACTS}",),
        headers=(header,),
    )
