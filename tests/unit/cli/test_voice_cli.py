"""`pallas voice say`: the operator hears the group's voice from the command line."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pallas.cli.voice_cli import _say
from pallas.providers.tts import wav_duration
from tests.harness.fake_tts import FakeTts


@pytest.fixture
async def tts() -> AsyncIterator[FakeTts]:
    server = FakeTts()
    await server.start()
    yield server
    await server.stop()


def _args(text: str, out: Path, provider: str = "") -> object:
    import argparse

    return argparse.Namespace(text=text, group=0, provider=provider, out=str(out))


async def test_say_writes_the_audio_of_the_chain(
    tts: FakeTts,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    groups = tmp_path / "config" / "groups"
    groups.mkdir(parents=True)
    (groups / "default.toml").write_text(
        f'[[voice.providers]]\nname = "sovits"\nkind = "gpt_sovits"\n'
        f'base_url = "{tts.sovits_url}"\nref_audio_path = "ref.wav"\nresponse_format = "wav"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("PALLAS_CONFIG_DIR", str(tmp_path / "config"))
    out = tmp_path / "sample.wav"
    assert await _say(_args("明天3点见😀", out)) == 0  # type: ignore[arg-type]
    assert wav_duration(out.read_bytes()) > 0
    assert tts.requests[-1].body["text"] == "明天三点见"
    printed = capsys.readouterr().out
    assert "sovits:ok" in printed and "wav" in printed
    assert await _say(_args("你好", out, provider="nope")) == 1  # type: ignore[arg-type]
