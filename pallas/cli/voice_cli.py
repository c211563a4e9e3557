"""`pallas voice say TEXT`: hear a group's voice before the group does (the operator's 试听).

The text is cleaned and synthesised through the group's `[voice] providers` chain exactly as
the bot would (Chinese numbers for GPT-SoVITS, the same fallback order), and the audio is
written to a file to play; each provider's attempt is printed. Nothing is counted against the
group's budget or written to the ledger.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pallas.config import GroupConfig
from pallas.core.clock import SystemClock
from pallas.core.config_files import GroupConfigStore
from pallas.core.settings import PallasSettings
from pallas.core.state import MemoryStateStore
from pallas.features.voice import chinese_reading, clean_for_speech
from pallas.providers.breaker import Breakers
from pallas.providers.endpoints import BreakerConfig
from pallas.providers.tts import SpeechClient, SpeechEndpointConfig, wav_duration


def _write(path: Path, audio: bytes) -> None:
    path.write_bytes(audio)


def _prepare(text: str, provider: SpeechEndpointConfig) -> str:
    return chinese_reading(text) if provider.wants_chinese_numbers else text


async def _say(args: argparse.Namespace) -> int:
    settings = PallasSettings.from_env()
    config = GroupConfigStore(GroupConfig, settings.groups_dir).get(args.group).voice
    chain = [p for p in config.providers if not args.provider or p.name == args.provider]
    if not chain:
        print(f"no voice provider{' named ' + args.provider if args.provider else ''} in "
              f"{settings.groups_dir / 'default.toml'} ([[voice.providers]])")  # fmt: skip
        return 1
    text = clean_for_speech(args.text)
    if not text:
        print("nothing speakable left after cleaning")
        return 1
    clock = SystemClock()
    speech = SpeechClient(settings, None, clock, Breakers(MemoryStateStore(clock), BreakerConfig()))
    try:
        result = await speech.synthesize(text, chain, bot_id=0, group_id=args.group,
                                         prepare=_prepare)  # fmt: skip
    finally:
        await speech.close()
    print(f"text: {text}")
    print(f"attempts: {', '.join(result.attempts)}")
    if not result.ok:
        print(f"failed: {result.error}")
        return 1
    out = Path(args.out or f"voice_sample.{result.format}")
    _write(out, result.audio)
    seconds = f", {wav_duration(result.audio):.1f} s" if result.format == "wav" else ""
    print(f"{result.provider}: {len(result.audio)} bytes of {result.format}{seconds} → {out}")
    return 0


def register_voice(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    voice = sub.add_parser("voice", help="the persona's voice ([voice], docs/voice.md)")
    voice_sub = voice.add_subparsers(dest="voice_command", required=True)
    say = voice_sub.add_parser("say", help="synthesise TEXT as the group would, into a file")
    say.add_argument("text")
    say.add_argument("--group", type=int, default=0, help="whose [voice] config (0: defaults)")
    say.add_argument("--provider", default="", help="only this provider of the chain")
    say.add_argument("--out", default="", help="the audio file (default voice_sample.<format>)")
    say.set_defaults(handler=_say)
