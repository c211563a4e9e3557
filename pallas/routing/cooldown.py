"""Per-group cooldown / disabled gate, and per-group concurrency admission.

`evaluate_cooldown` (in this order):
1. the group is disabled → `skip` (`disabled`);
2. a silence period (after a shut-up request) is running → `skip` (`silenced`), except for an
   explicitly addressed turn when `silence_breakable_by_address` (an @ still gets its answer);
3. the bot started a turn in this group less than `chat_cooldown_s` ago → `accumulate`
   (`cooldown`): the caller keeps the message and considers it at the next trigger. An
   addressed turn goes on at once (`addressed_waits_cooldown = false`, the default): the
   cooldown paces what the bot says of its own accord, and in a busy group several members @
   it within seconds — holding each for the cooldown made their answers seconds late. With
   `addressed_waits_cooldown = true` it is routed again after `retry_after_s` (never dropped);
4. otherwise `proceed`.

`decide_admission` is the pure half of "max 2 turns per group, 8 queued, one per member".
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pallas.routing.config import CooldownConfig


class CooldownVerdict(StrEnum):
    PROCEED = "proceed"
    ACCUMULATE = "accumulate"
    SKIP = "skip"


@dataclass(frozen=True, slots=True)
class CooldownResult:
    verdict: CooldownVerdict
    reason: str  # proceed | disabled | silenced | cooldown
    retry_after_s: float = 0.0  # remaining cooldown / silence

    @property
    def proceeds(self) -> bool:
        return self.verdict is CooldownVerdict.PROCEED


def waits_for_cooldown(config: CooldownConfig, *, addressed: bool) -> bool:
    """Whether the group's chat cooldown holds this turn (step 3 above): what the bot says of
    its own accord always, an addressed turn only with `addressed_waits_cooldown`."""
    return not addressed or config.addressed_waits_cooldown


def evaluate_cooldown(
    config: CooldownConfig,
    *,
    enabled: bool,
    now: float,
    addressed: bool,
    last_turn_at: float | None = None,
    silenced_until: float | None = None,
) -> CooldownResult:
    if not enabled:
        return CooldownResult(CooldownVerdict.SKIP, "disabled")
    silenced = silenced_until is not None and now < silenced_until
    breaks_through = addressed and config.silence_breakable_by_address
    if silenced_until is not None and silenced and not breaks_through:
        return CooldownResult(CooldownVerdict.SKIP, "silenced", silenced_until - now)
    waits = waits_for_cooldown(config, addressed=addressed)
    if waits and last_turn_at is not None and 0 <= now - last_turn_at < config.chat_cooldown_s:
        remaining = config.chat_cooldown_s - (now - last_turn_at)
        return CooldownResult(CooldownVerdict.ACCUMULATE, "cooldown", remaining)
    return CooldownResult(CooldownVerdict.PROCEED, "proceed")


class AdmissionVerdict(StrEnum):
    RUN = "run"  # start the turn now
    QUEUE = "queue"  # wait for a running turn of this group to finish
    MERGE = "merge"  # same member already has a turn in flight: fold this message into it
    REJECT = "reject"  # queue full: drop (log the reason)


@dataclass(frozen=True, slots=True)
class AdmissionResult:
    verdict: AdmissionVerdict
    reason: str  # run | user_in_flight | concurrency_full | queue_full


def decide_admission(
    config: CooldownConfig, *, running: int, queued: int, user_in_flight: bool
) -> AdmissionResult:
    """Admission for one new turn given the group's running / queued counts."""
    if user_in_flight:
        return AdmissionResult(AdmissionVerdict.MERGE, "user_in_flight")
    if running < config.max_concurrency:
        return AdmissionResult(AdmissionVerdict.RUN, "run")
    if queued < config.queue_size:
        return AdmissionResult(AdmissionVerdict.QUEUE, "concurrency_full")
    return AdmissionResult(AdmissionVerdict.REJECT, "queue_full")
