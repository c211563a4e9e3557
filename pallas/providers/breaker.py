"""Circuit breakers of the endpoints: pure transitions, state in the StateStore.

An endpoint that failed `failures` times in a row is *open*: skipped for `open_seconds`, so a
dead primary does not cost every @ a timeout before the backup answers. When the time is up
one call *probes* it (half-open); success closes it, failure opens it for another period.
The state lives in the StateStore (shared by every process on Redis), one key per task and
endpoint; the console and `/pallas status` read it.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, replace
from typing import Any

from pallas.core import state_keys
from pallas.core.clock import DAY_S
from pallas.core.state import StateStore
from pallas.providers.endpoints import BreakerConfig

log = logging.getLogger("pallas.llm")

STATE_TTL_S = 7 * DAY_S


@dataclass(frozen=True, slots=True)
class BreakerState:
    failures: int = 0  # in a row
    open_until: float = 0.0  # unix seconds; 0 = closed
    last_error: str = ""
    last_failure_at: float = 0.0
    last_success_at: float = 0.0

    @classmethod
    def from_json(cls, data: Any) -> BreakerState:
        if not isinstance(data, dict):
            return cls()
        try:
            return cls(
                failures=int(data.get("failures", 0)),
                open_until=float(data.get("open_until", 0.0)),
                last_error=str(data.get("last_error", ""))[:64],
                last_failure_at=float(data.get("last_failure_at", 0.0)),
                last_success_at=float(data.get("last_success_at", 0.0)),
            )
        except (TypeError, ValueError):
            return cls()


@dataclass(frozen=True, slots=True)
class BreakerCheck:
    allowed: bool
    reason: str  # "closed" | "open" | "probe"


def check(state: BreakerState, now: float) -> BreakerCheck:
    if state.open_until <= 0:
        return BreakerCheck(True, "closed")
    if now < state.open_until:
        return BreakerCheck(False, "open")
    return BreakerCheck(True, "probe")


def after_failure(
    state: BreakerState, now: float, config: BreakerConfig, error: str
) -> BreakerState:
    failures = state.failures + 1
    probing = state.open_until > 0  # a failed probe opens it again at once
    opens = probing or failures >= config.failures
    return replace(
        state,
        failures=failures,
        open_until=now + config.open_seconds if opens else 0.0,
        last_error=error,
        last_failure_at=now,
    )


def after_success(state: BreakerState, now: float) -> BreakerState:
    return BreakerState(last_success_at=now, last_error=state.last_error,
                        last_failure_at=state.last_failure_at)  # fmt: skip


def state_label(state: BreakerState, now: float) -> str:
    """How the console and `/pallas status` name it, in Chinese."""
    verdict = check(state, now)
    if verdict.reason == "open":
        return f"熔断中（{int(state.open_until - now) + 1} 秒后重试）"
    if verdict.reason == "probe":
        return "待探测（下一次调用试一下）"
    if state.failures:
        return f"正常（连续失败 {state.failures} 次）"
    return "正常"


class Breakers:
    """The StateStore side: read, update and list the breakers of a task's endpoints."""

    def __init__(self, state: StateStore, config: BreakerConfig) -> None:
        self._state = state
        self.config = config

    async def get(self, task: str, endpoint: str) -> BreakerState:
        try:
            return BreakerState.from_json(await self._state.get(state_keys.breaker(task, endpoint)))
        except Exception:  # the breaker must never stop a call: unknown state = closed
            log.warning("breaker state of %s/%s unreadable", task, endpoint, exc_info=True)
            return BreakerState()

    async def record(self, task: str, endpoint: str, ok: bool, now: float, error: str) -> None:
        state = await self.get(task, endpoint)
        healthy = ok and not state.failures and not state.open_until
        if healthy and now - state.last_success_at < 60:  # at most one write a minute
            return
        new = after_success(state, now) if ok else after_failure(state, now, self.config, error)
        if not ok and new.open_until and not state.open_until:
            log.warning("endpoint %s for %s failing (%s), skipped for %.0f s", endpoint, task,
                        error, self.config.open_seconds)  # fmt: skip
        if ok and state.open_until:
            log.info("endpoint %s for %s answers again, breaker closed", endpoint, task)
        try:
            await self._state.set(state_keys.breaker(task, endpoint), asdict(new), ttl=STATE_TTL_S)
        except Exception:
            log.warning("breaker state of %s/%s not saved", task, endpoint, exc_info=True)
