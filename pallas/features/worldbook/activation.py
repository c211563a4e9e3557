"""Worldbook activation: which entries a turn injects, with provenance, new state and a trace.

SillyTavern-compatible semantics (see `worldbook.model` for the fields), as pure code: the
caller passes the recent messages (newest last), the group's `WorldbookState` snapshot, a
monotonically increasing per-group `turn_index` (sticky / cooldown are counted in it), an rng
and a token counter, and persists `result.state` afterwards.

One turn runs up to 1 + `max_recursion_steps` passes. Each pass:

1. collects candidates in priority order (higher `order` first): disabled, delayed (chat shorter
   than `delay`), cooling-down, delay-until-recursion and exclude-recursion entries are skipped;
   sticky and constant entries are in; the rest need a primary key match in the last
   `scan_depth` messages (plus, from the second pass on, the activated content), and then their
   secondary keys must satisfy `selective_logic`;
2. resolves inclusion groups: a sticky member keeps the group; a group that already produced an
   entry this turn admits no other; with group scoring only the members with the most key hits
   stay; then a `group_override` member wins (highest order), else a roll weighted by
   `group_weight`;
3. rolls probability (sticky entries don't re-roll) and adds entries while the token budget
   lasts; once an entry does not fit, nothing more is added this turn.

The next pass scans the content of this pass's new entries (except `prevent_recursion` ones).
Entries with `delay_until_recursion = N` can only activate in a recursion pass, from level N on:
level N opens when the passes at lower levels stop finding anything (SillyTavern's delay
levels); with recursion off they never activate. Recursion stops when a pass adds nothing and no
delay level is left, the budget is exhausted, or `max_recursion_steps` is reached.

Timed effects count chat messages by default (`message_index`, SillyTavern's unit and end-
exclusive arithmetic, see `_st_timer`). A book with `timed_unit = "replies"` counts bot reply
turns (`turn_index`): activated at turn T with sticky S it stays active through turn T+S
without a key match; with cooldown C it then cannot activate through turn T+S+C. Timers whose
index lies in the future (a counter reset, a unit change) are ignored.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from pallas.features.worldbook.match import Candidate, ScanText, match_entry
from pallas.features.worldbook.model import (
    EntryTimer,
    WorldbookConfig,
    WorldbookEntry,
    WorldbookState,
)
from pallas.features.worldbook.result import (
    SKIP_REASONS,
    ActivatedEntry,
    ActivationResult,
    ActivationTrace,
    SkippedEntry,
)

__all__ = [
    "SKIP_REASONS",
    "ActivatedEntry",
    "ActivationResult",
    "ActivationTrace",
    "SkippedEntry",
    "activate_worldbook",
]


def _priority(entry: WorldbookEntry) -> tuple[int, str, int]:
    return (-entry.order, entry.book, entry.uid)


@dataclass
class _Run:
    entries: list[WorldbookEntry]
    scan: ScanText
    timers: dict[str, EntryTimer]
    turn_index: int
    message_index: int
    chat_length: int
    rng: random.Random
    config: WorldbookConfig
    count_tokens: Callable[[str], int]
    budget: int
    used: int = 0
    overflowed: bool = False
    book_used: dict[str, int] = field(default_factory=dict)
    book_full: set[str] = field(default_factory=set)
    activated: dict[str, ActivatedEntry] = field(default_factory=dict)
    failed_probability: set[str] = field(default_factory=set)
    skips: dict[str, SkippedEntry] = field(default_factory=dict)
    rolls: list[tuple[str, float, float]] = field(default_factory=list)
    group_decisions: list[tuple[str, str, str]] = field(default_factory=list)

    def skip(self, entry: WorldbookEntry, reason: str, detail: str = "", step: int = 0) -> None:
        previous = self.skips.get(entry.key_id)
        if reason == "group_already_active" and previous and previous.reason == "group_lost":
            return  # keep the more telling reason from the pass that decided the group
        self.skips[entry.key_id] = SkippedEntry(entry.key_id, reason, detail, step)

    def _timer_gate(self, entry: WorldbookEntry, step: int, level: int) -> str | None:
        """Skip reason from timed effects / recursion flags, or None. Sticky bypasses them."""
        if entry.delay and self.chat_length < entry.delay:
            return "delay"
        if self.is_sticky(entry):
            return None
        timer = self.start_pending_cooldown(entry)
        if timer is not None and timer.is_cooling(self.now(entry)):
            return "cooldown"
        if entry.delay_until_recursion and (step == 0 or entry.delay_until_recursion > level):
            return "delay_until_recursion"
        if step > 0 and entry.exclude_recursion:
            return "exclude_recursion"
        return None

    def is_sticky(self, entry: WorldbookEntry) -> bool:
        timer = self.timer(entry)
        return timer is not None and timer.is_sticky(self.now(entry))

    def now(self, entry: WorldbookEntry) -> int:
        """The entry's clock: chat messages (SillyTavern) or bot replies (per-book option)."""
        unit = self.config.option(entry.book, "timed_unit")
        return self.message_index if unit == "messages" else self.turn_index

    def start_pending_cooldown(self, entry: WorldbookEntry) -> EntryTimer | None:
        """SillyTavern starts a cooldown that follows a sticky at the first scan after the sticky
        ended, and it applies to that very scan (`cooldown` messages from there)."""
        timer = self.timer(entry)
        now = self.now(entry)
        if timer is None or not timer.pending_cooldown or timer.is_sticky(now):
            return timer
        until = now + timer.pending_cooldown - 1
        started = EntryTimer(timer.activated_at, timer.sticky_until, until)
        self.timers[entry.key_id] = started
        return started

    def timer(self, entry: WorldbookEntry) -> EntryTimer | None:
        """The entry's timer; one from the future (a counter reset, a unit change) is ignored."""
        timer = self.timers.get(entry.key_id)
        return timer if timer is not None and timer.activated_at <= self.now(entry) else None

    def collect(self, step: int, level: int) -> list[Candidate]:
        found: list[Candidate] = []
        for entry in self.entries:
            key = entry.key_id
            if key in self.activated or key in self.failed_probability:
                continue
            if not entry.enabled:
                self.skip(entry, "disabled")
            elif not entry.content.strip():
                self.skip(entry, "empty_content")
            elif step > self.config.option(entry.book, "max_recursion_steps"):
                detail = f"book {entry.book!r} stops at recursion step {step - 1}"
                self.skip(entry, "book_step_limit", detail, step)
            elif (reason := self._timer_gate(entry, step, level)) is not None:
                self.skip(entry, reason, self._gate_detail(entry, reason, level), step)
            elif self.is_sticky(entry):
                found.append(Candidate(entry, "sticky"))
            elif entry.constant:
                found.append(Candidate(entry, "constant"))
            elif not entry.keys:
                self.skip(entry, "no_keys")
            else:
                result = match_entry(entry, self.scan, step, self.config)
                if isinstance(result, SkippedEntry):
                    self.skips[key] = result
                else:
                    found.append(result)
        found.sort(key=lambda c: (c.reason != "sticky", _priority(c.entry)))
        return found

    def _gate_detail(self, entry: WorldbookEntry, reason: str, level: int) -> str:
        if reason == "delay":
            return f"chat has {self.chat_length} < {entry.delay} messages"
        if reason == "cooldown":
            timer = self.timers[entry.key_id]
            unit = self.config.option(entry.book, "timed_unit")
            return f"cooling down through {unit} index {timer.cooldown_until}"
        if reason == "delay_until_recursion":
            return f"needs recursion level {entry.delay_until_recursion} (now {level})"
        return ""

    # ------------------------------------------------------------ inclusion groups

    def resolve_groups(self, found: list[Candidate], step: int) -> list[Candidate]:
        members: dict[str, list[Candidate]] = {}
        for cand in found:
            for group in cand.entry.groups:
                members.setdefault(group, []).append(cand)
        removed: set[str] = set()
        active_groups = {g for a in self.activated.values() for g in a.entry.groups}
        for group, cands in members.items():
            alive = [c for c in cands if c.entry.key_id not in removed]
            losers = self._group_losers(group, alive, group in active_groups)
            for loser, reason, detail in losers:
                removed.add(loser.entry.key_id)
                self.skip(loser.entry, reason, detail, step)
        return [c for c in found if c.entry.key_id not in removed]

    def _group_losers(
        self, group: str, alive: list[Candidate], already_active: bool
    ) -> list[tuple[Candidate, str, str]]:
        if any(c.reason == "sticky" for c in alive):
            holder = next(c for c in alive if c.reason == "sticky").entry.key_id
            self.group_decisions.append((group, holder, "sticky"))
            detail = f"group {group!r} held by sticky {holder}"
            return [(c, "group_lost", detail) for c in alive if c.reason != "sticky"]
        if already_active:
            detail = f"group {group!r} already has an entry this turn"
            return [(c, "group_already_active", detail) for c in alive]
        losers = self._score_losers(group, alive)
        alive = [c for c in alive if all(c is not lost for lost, _, _ in losers)]
        if len(alive) <= 1:
            return losers
        winner, how = self._pick_winner(alive)
        self.group_decisions.append((group, winner.entry.key_id, how))
        detail = f"group {group!r} won by {winner.entry.key_id} ({how})"
        return losers + [(c, "group_lost", detail) for c in alive if c is not winner]

    def _score_losers(self, group: str, alive: list[Candidate]) -> list[tuple[Candidate, str, str]]:
        """Group scoring: scored members with fewer key hits than the best member lose."""
        default = self.config.use_group_scoring
        scored = [
            c
            for c in alive
            if (c.entry.use_group_scoring if c.entry.use_group_scoring is not None else default)
        ]
        if not scored:
            return []
        best = max(c.score for c in alive)
        return [
            (c, "group_lost", f"group {group!r}: score {c.score} < {best}")
            for c in scored
            if c.score < best
        ]

    def _pick_winner(self, alive: list[Candidate]) -> tuple[Candidate, str]:
        overrides = [c for c in alive if c.entry.group_override]
        if overrides:
            return min(overrides, key=lambda c: _priority(c.entry)), "override"
        total = sum(c.entry.group_weight for c in alive)
        roll = self.rng.random() * total
        cumulative = 0.0
        for cand in alive:
            cumulative += cand.entry.group_weight
            if roll <= cumulative and cand.entry.group_weight > 0:
                return cand, f"weighted roll {roll:.1f}/{total:.1f}"
        return alive[0], f"weighted roll {roll:.1f}/{total:.1f}"

    # ------------------------------------------------------------ probability + budget

    def admit(self, found: list[Candidate], step: int) -> list[ActivatedEntry]:
        new: list[ActivatedEntry] = []
        for cand in found:
            entry = cand.entry
            if self.overflowed:
                self.skip(entry, "budget", "budget already exhausted", step)
                continue
            if cand.reason != "sticky" and entry.use_probability and entry.probability < 100:
                roll = self.rng.random() * 100
                self.rolls.append((entry.key_id, roll, entry.probability))
                if roll >= entry.probability:
                    self.failed_probability.add(entry.key_id)
                    detail = f"rolled {roll:.1f} >= {entry.probability:g}"
                    self.skip(entry, "probability", detail, step)
                    continue
            tokens = max(0, int(self.count_tokens(entry.content)))
            if not self._book_fits(entry, tokens, step):
                continue
            if self.used + tokens > self.budget:
                self.overflowed = True
                detail = f"{tokens} tokens do not fit ({self.used}/{self.budget} used)"
                self.skip(entry, "budget", detail, step)
                continue
            self.used += tokens
            self.book_used[entry.book] = self.book_used.get(entry.book, 0) + tokens
            activated = ActivatedEntry(
                entry, cand.reason, step, tokens, cand.matched_key, cand.matched_in,
                cand.matched_secondary,
            )  # fmt: skip
            self.activated[entry.key_id] = activated
            new.append(activated)
        return new

    def _book_fits(self, entry: WorldbookEntry, tokens: int, step: int) -> bool:
        """The per-book token cap (0 = none): a book over its cap admits nothing more."""
        cap = self.config.option(entry.book, "budget_cap_tokens")
        if entry.book in self.book_full:
            self.skip(entry, "budget", f"book {entry.book!r} cap already reached", step)
            return False
        used = self.book_used.get(entry.book, 0)
        if cap and used + tokens > cap:
            self.book_full.add(entry.book)
            detail = f"{tokens} tokens do not fit the book cap ({used}/{cap} used)"
            self.skip(entry, "budget", detail, step)
            return False
        return True

    # ------------------------------------------------------------ the turn

    def execute(self) -> tuple[int, bool]:
        """Run the passes; returns (passes run, stopped by the step limit)."""
        cfg = self.config
        levels = sorted(
            {e.delay_until_recursion for e in self.entries if e.enabled and e.delay_until_recursion}
        )
        level = levels.pop(0) if levels else 0
        step = 0
        while True:
            found = self.resolve_groups(self.collect(step, level), step)
            new = self.admit(found, step)
            feed = [a.entry.content for a in new if not a.entry.prevent_recursion]
            if not cfg.recursion or self.overflowed:
                return step + 1, False
            if not feed:
                if not levels:
                    return step + 1, False
                level = levels.pop(0)
            if step >= cfg.max_steps_any():
                return step + 1, True
            step += 1
            self.scan.add_recursion(feed)

    def new_state(self) -> WorldbookState:
        by_key = {e.key_id: e for e in self.entries}
        timers = {
            k: t
            for k, t in self.timers.items()
            if t.relevant_after(self.now(by_key[k]) if k in by_key else self.turn_index)
        }
        for key, act in self.activated.items():
            entry = act.entry
            if act.reason == "sticky" or not (entry.sticky or entry.cooldown):
                continue
            now = self.now(entry)
            if self.config.option(entry.book, "timed_unit") == "messages":
                timers[key] = _st_timer(entry, now)
                continue
            sticky_until = now + entry.sticky if entry.sticky else None
            effect_end = sticky_until if sticky_until is not None else now
            cooldown_until = effect_end + entry.cooldown if entry.cooldown else None
            timers[key] = EntryTimer(now, sticky_until, cooldown_until)
        return WorldbookState(timers=timers)


def _st_timer(entry: WorldbookEntry, now: int) -> EntryTimer:
    """SillyTavern's timed effects in chat messages (end exclusive): sticky S set at message L
    is active while L < length < L + S; a cooldown C without sticky while L < length < L + C;
    a cooldown after a sticky starts when the sticky's end is seen (`pending_cooldown`)."""
    if entry.sticky:
        return EntryTimer(now, now + entry.sticky - 1, None, entry.cooldown)
    return EntryTimer(now, None, now + entry.cooldown - 1 if entry.cooldown else None)


def activate_worldbook(
    entries: Iterable[WorldbookEntry],
    scan_messages: Sequence[str],
    state: WorldbookState,
    turn_index: int,
    rng: random.Random,
    config: WorldbookConfig,
    *,
    count_tokens: Callable[[str], int],
    context_tokens: int = 4000,
    chat_length: int | None = None,
    message_index: int | None = None,
) -> ActivationResult:
    """Decide which worldbook entries this turn injects (see the module docstring).

    `scan_messages`: recent message texts, newest last. `chat_length`: how many messages the
    chat has in total (for `delay`); defaults to len(scan_messages). The token budget is
    `config.budget_tokens(context_tokens)`.
    """
    unique: dict[str, WorldbookEntry] = {}
    for entry in entries:
        unique.setdefault(entry.key_id, entry)
    ordered = sorted(unique.values(), key=_priority)
    timers = dict(state.timers)
    run = _Run(
        entries=ordered if config.enabled else [],
        scan=ScanText(scan_messages),
        timers=timers,
        turn_index=turn_index,
        message_index=turn_index if message_index is None else message_index,
        chat_length=len(scan_messages) if chat_length is None else chat_length,
        rng=rng,
        config=config,
        count_tokens=count_tokens,
        budget=config.budget_tokens(context_tokens),
    )
    passes, limited = run.execute() if config.enabled else (0, False)
    activated = sorted(
        run.activated.values(), key=lambda a: (a.entry.order, a.entry.book, a.entry.uid)
    )
    skipped = [
        run.skips[e.key_id]
        for e in ordered
        if e.key_id in run.skips and e.key_id not in run.activated
    ]
    trace = ActivationTrace(
        turn_index=turn_index,
        chat_length=run.chat_length,
        passes=passes,
        budget_tokens=run.budget,
        used_tokens=run.used,
        budget_exhausted=run.overflowed,
        step_limit_reached=limited,
        rolls=tuple(run.rolls),
        group_decisions=tuple(run.group_decisions),
    )
    return ActivationResult(tuple(activated), run.new_state(), tuple(skipped), trace)
