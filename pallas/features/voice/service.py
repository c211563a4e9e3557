"""The persona's voice: decide (pure, `decide.py`), synthesise (`SpeechClient`), hand back a
OneBot `record` segment or the text to send instead, with the reason.

Audio goes out as `base64://…` in the provider's format (MP3 / WAV / OGG): NapCat converts
those to QQ's silk itself (its ffmpeg addon: ogg, mp3, wav, aac, flac → silk), so the bot
needs no converter of its own. Today's counters (the group's characters and calls, each
member's commands) are StateStore counters per China day.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pallas.core import state_keys
from pallas.core.clock import Clock, local_day
from pallas.core.state import StateStore
from pallas.core.turn import TurnInput
from pallas.features.persona import PersonaPack
from pallas.features.voice.clean import chinese_reading, clean_for_speech
from pallas.features.voice.config import VoiceConfig
from pallas.features.voice.decide import (
    VoiceDecision,
    VoiceUsage,
    decide_command,
    decide_reply,
    parse_speak_command,
)
from pallas.providers.tts import SpeechClient, SpeechEndpointConfig, SpeechResult

log = logging.getLogger("pallas.voice")

# (text, persona) -> (the guarded text, the guard's reason): "ok" / "neutralised" pass,
# anything else ("prompt_leak") blocks. The text replies' output guard, handed in by the
# composition root (it lives in the turn).
OutputGuard = Callable[[str, PersonaPack], tuple[str, str]]

REFUSED = "这句我不说。"  # the command's text answer when the guard or the word list refuses


@dataclass(frozen=True, slots=True)
class VoiceOutcome:
    """What to send: a record segment when `spoken`, else `text` (the fallback) or nothing."""

    spoken: bool
    reason: str  # the decision's reason, or "tts_failed:<error>" after a failed synthesis
    segment: dict[str, Any] | None = None
    text: str = ""  # what was spoken, or the text to send instead
    attempts: tuple[str, ...] = ()

    @property
    def route_reason(self) -> str:
        return self.reason if not self.attempts else f"{self.reason} ({', '.join(self.attempts)})"


def record_segment(audio: bytes) -> dict[str, Any]:
    return {"type": "record", "data": {"file": "base64://" + base64.b64encode(audio).decode()}}


def _prepare(text: str, provider: SpeechEndpointConfig) -> str:
    return chinese_reading(text) if provider.wants_chinese_numbers else text


class VoiceService:
    def __init__(
        self, speech: SpeechClient, state: StateStore, clock: Clock, guard: OutputGuard
    ) -> None:
        self.speech = speech
        self._state = state
        self._clock = clock
        self._guard = guard

    # -- counters ------------------------------------------------------------------------
    async def usage(self, group_id: int, user_id: int) -> VoiceUsage:
        day = local_day(self._clock.now())
        keys = (state_keys.voice_use(day, group_id, "chars"),
                state_keys.voice_use(day, group_id, "calls"),
                state_keys.voice_member(day, group_id, user_id))  # fmt: skip
        values = [await self._state.get(key) for key in keys]
        chars, calls, member = (int(v) if isinstance(v, int | float) else 0 for v in values)
        return VoiceUsage(chars=chars, calls=calls, member_commands=member)

    async def _count(self, group_id: int, unit: str, amount: int) -> int:
        key = state_keys.voice_use(local_day(self._clock.now()), group_id, unit)
        return await self._state.incr(key, amount, ttl=state_keys.VOICE_DAY_TTL_S)

    async def _count_member(self, group_id: int, user_id: int) -> None:
        key = state_keys.voice_member(local_day(self._clock.now()), group_id, user_id)
        await self._state.incr(key, 1, ttl=state_keys.VOICE_DAY_TTL_S)

    # -- speaking ------------------------------------------------------------------------
    async def _synthesize(
        self, decision: VoiceDecision, config: VoiceConfig, turn: TurnInput
    ) -> SpeechResult:
        """The budget is claimed before the call (counted, and given back when this call passed
        it: two turns at the same instant cannot both take the last one), the characters given
        back when the synthesis failed."""
        group_id, chars = turn.group_id, len(decision.text)
        calls_now = await self._count(group_id, "calls", 1)
        chars_now = await self._count(group_id, "chars", chars)
        over = ("budget_calls" if config.daily_calls and calls_now > config.daily_calls
                else "budget_chars" if config.daily_chars and chars_now > config.daily_chars
                else "")  # fmt: skip
        if over:
            await self._count(group_id, "calls", -1)
            await self._count(group_id, "chars", -chars)
            return SpeechResult(False, error=over)
        result = await self.speech.synthesize(
            decision.text, config.providers, bot_id=turn.bot_id, group_id=group_id,
            prepare=_prepare,
        )  # fmt: skip
        if not result.ok:
            await self._count(group_id, "chars", -chars)
        return result

    async def speak_command(
        self,
        turn: TurnInput,
        config: VoiceConfig,
        persona: PersonaPack,
        *,
        names: Iterable[str],
        is_admin: bool,
    ) -> VoiceOutcome | None:
        """ "<名字>说 …" spoken, or what to answer instead; None when it is no such command (or
        the command is off: the line goes on to the chat as any other)."""
        said = parse_speak_command(turn.text, names)
        if said is None or not config.enabled or not config.command.enabled:
            return None
        usage = await self.usage(turn.group_id, turn.user_id)
        decision = decide_command(config, said, usage, is_admin=is_admin,
                                  has_provider=bool(config.providers))  # fmt: skip
        if decision.text:  # spoken, or sent as text when the budget is spent: guarded alike
            guarded, verdict = self._guard(decision.text, persona)
            if verdict not in ("ok", "neutralised"):
                decision = VoiceDecision(False, f"guard:{verdict}")
            else:
                decision = VoiceDecision(decision.speak, decision.reason, guarded)
        if not decision.speak:
            log.info("voice command not spoken in group %s: %s", turn.group_id, decision.reason)
            return VoiceOutcome(False, decision.reason, text=_refusal(decision))
        result = await self._synthesize(decision, config, turn)
        if result.error.startswith("budget_"):
            log.info("voice command not spoken in group %s: %s", turn.group_id, result.error)
            return VoiceOutcome(False, result.error, text=decision.text)
        await self._count_member(turn.group_id, turn.user_id)  # a provider was asked
        if not result.ok:
            log.warning("voice command fell back to text in group %s: tts %s (%s)",
                        turn.group_id, result.error, ", ".join(result.attempts))  # fmt: skip
            return VoiceOutcome(False, f"tts_failed:{result.error}", text=decision.text,
                                attempts=result.attempts)  # fmt: skip
        return VoiceOutcome(True, decision.reason, record_segment(result.audio), decision.text,
                            result.attempts)  # fmt: skip

    async def sample(
        self, text: str, config: VoiceConfig, *, group_id: int, provider: str = ""
    ) -> SpeechResult:
        """The operators' 试听: `text` cleaned and synthesised through the chain (or only the
        provider named) as a reply would be; no budget, but a ledger row like any call."""
        chain = [p for p in config.providers if not provider or p.name == provider]
        cleaned = clean_for_speech(text)
        if not cleaned:
            return SpeechResult(False, error="nothing_to_say")
        return await self.speech.synthesize(cleaned, chain, bot_id=0, group_id=group_id,
                                            prepare=_prepare)  # fmt: skip

    async def speak_reply(
        self,
        turn: TurnInput,
        config: VoiceConfig,
        bubbles: tuple[str, ...],
        *,
        roll: float,
    ) -> VoiceOutcome:
        """The persona's (already guarded) reply spoken, when the config and the reply allow
        it; otherwise `spoken` False and the bubbles go out as text."""
        usage = await self.usage(turn.group_id, turn.user_id)
        decision = decide_reply(config, bubbles, usage, to_voice=turn.has_segment("record"),
                                roll=roll, has_provider=bool(config.providers))  # fmt: skip
        if not decision.speak:
            return VoiceOutcome(False, decision.reason)
        result = await self._synthesize(decision, config, turn)
        if result.error.startswith("budget_"):
            return VoiceOutcome(False, result.error)
        if not result.ok:
            log.warning("voice reply fell back to text in group %s: tts %s (%s)",
                        turn.group_id, result.error, ", ".join(result.attempts))  # fmt: skip
            return VoiceOutcome(False, f"tts_failed:{result.error}", attempts=result.attempts)
        return VoiceOutcome(True, decision.reason, record_segment(result.audio), decision.text,
                            result.attempts)  # fmt: skip


_ANSWERS = {
    "admins_only": "这个只有管理员能让我说哦。",
    "member_limit": "今天让我说得够多啦，明天再来吧。",
    "too_long": "太长了，说不动。",
    "code": "这个念不出来。",
    "link": "链接就不念了。",
    "list": "这个念不出来。",
    "nothing_to_say": "",
    "no_provider": "",
    "voice_off": "",
}


def _refusal(decision: VoiceDecision) -> str:
    """The text answer of a command not spoken: the words themselves when only the voice was
    out of reach (budget), a short refusal when the words were the problem."""
    if decision.reason.startswith("budget_"):
        return decision.text
    if decision.reason == "blocked_word" or decision.reason.startswith("guard:"):
        return REFUSED
    return _ANSWERS.get(decision.reason, "")


__all__ = ["REFUSED", "OutputGuard", "VoiceOutcome", "VoiceService", "record_segment"]
