"""The frozen phrasing table (`data/phrasings.tsv`) against the rule parser: every row."""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

import pytest

from pallas.features.reminders import CHINA_TZ, read_request

NOW = datetime(2026, 12, 6, 10, 30, tzinfo=CHINA_TZ)  # a Sunday
ALIASES = ("牛牛", "帕拉斯")
TABLE = Path(__file__).with_name("data") / "phrasings.tsv"


def _rows() -> list[dict[str, str]]:
    lines = [
        line
        for line in TABLE.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    return list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))


ROWS = _rows()


def _got(text: str) -> dict[str, str]:
    request = read_request(text, NOW, ALIASES)
    if request is None:
        return {"kind": "none", "when": "", "repeat": "", "what": "", "who": ""}
    who = request.cancel if request.kind == "cancel" else ("all" if request.everyone else "me")
    return {
        "kind": request.kind,
        "when": request.when.strftime("%Y-%m-%d %H:%M") if request.when else "",
        "repeat": request.repeat.code if request.repeat else "",
        "what": request.what,
        "who": who,
    }


def test_the_table_is_big_enough() -> None:
    assert len(ROWS) >= 150
    assert sum(1 for r in ROWS if r["kind"] == "none") >= 20


@pytest.mark.parametrize("row", ROWS, ids=[r["text"] for r in ROWS])
def test_phrasing(row: dict[str, str]) -> None:
    expected = {k: row[k] or "" for k in ("kind", "when", "repeat", "what", "who")}
    if expected["kind"] == "none":
        expected["who"] = ""
    if expected["kind"] in ("model", "ask"):
        expected["when"] = ""
    assert _got(row["text"]) == expected


def test_hit_rate(capsys: pytest.CaptureFixture[str]) -> None:
    hits, to_model = 0, []
    for row in ROWS:
        expected = {k: row[k] or "" for k in ("kind", "when", "repeat", "what", "who")}
        got = _got(row["text"])
        if expected["kind"] == "none":
            got["who"] = ""
        hits += got == expected
        if got["kind"] == "model":
            to_model.append(row["text"])
    with capsys.disabled():
        print(f"\nreminder phrasings: {hits}/{len(ROWS)} rows; to the model: {to_model}")
