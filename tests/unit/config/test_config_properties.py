"""Generated config files: a clear error and the last good config, never a crash (issue 44).

Hypothesis writes group files and persona files an operator (or a broken editor) may save —
real keys of `GroupConfig` / `PersonaPack` and made-up ones, every TOML value type, ints past
64 bits, NaN and Infinity, odd Unicode, a table where a value belongs and back, text that is not
TOML, bytes that are not UTF-8 — over a good file, and reads the config as a message would.

Properties: reading never raises; the config in force is either the new file's (when it is
valid) or the last good one; a rejected file is named in `errors()` with a message that names
the file.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from pallas.config import GroupConfig
from pallas.core.config_files import GroupConfigStore
from pallas.features.persona import PersonaPack, PersonaStore

FUZZ_EXAMPLES = int(os.environ.get("PALLAS_FUZZ_EXAMPLES", "0"))
CONFIG_SETTINGS = settings(
    max_examples=FUZZ_EXAMPLES or 150,
    derandomize=not FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
GROUP = 4_400_001


def _key_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, info in model.model_fields.items():
        path = (*prefix, info.alias or name)
        yield path
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from _key_paths(annotation, path)


GROUP_KEYS = sorted(set(_key_paths(GroupConfig)))
PERSONA_KEYS = sorted(set(_key_paths(PersonaPack)))

odd_text = st.text(st.characters(codec="utf-8"), max_size=30) | st.sampled_from(
    ["", "\u202e", "\ufeff", "牛牛", "a\tb", "[CQ:at,qq=all]", "x" * 3000]
)
toml_scalar = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.sampled_from([0, -1, 2**63 - 1, -(2**63), 10**12])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([math.nan, math.inf, -math.inf, 1e308, 0.5])
    | odd_text
    | st.datetimes()
    | st.dates()
)
toml_value = st.recursive(
    toml_scalar,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text("abcxyz_", min_size=1, max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def _document(keys: list[tuple[str, ...]]) -> st.SearchStrategy[str]:
    made_up = st.tuples(st.text("abcdefghij_", min_size=1, max_size=8))
    path = st.sampled_from(keys) | made_up | st.sampled_from(keys).map(lambda p: p[:1])

    def build(pairs: list[tuple[tuple[str, ...], Any]]) -> str:
        doc: dict[str, Any] = {}
        for dotted, value in pairs:
            node = doc
            for part in dotted[:-1]:
                child = node.get(part)
                if not isinstance(child, dict):
                    child = node[part] = {}
                node = child
            node[dotted[-1]] = value
        return tomlkit.dumps(doc)

    return st.lists(st.tuples(path, toml_value), max_size=6).map(build)


raw_garbage = st.one_of(
    st.binary(max_size=200),
    st.just(b"[chat\nmerge_window_s = "),
    st.just(b"\xff\xfe\x00bad"),
    st.just(b"x = 1\nx = 2\n"),
    st.just(b"a = 99999999999999999999999999\n"),
)


def _write(path: Path, content: str | bytes) -> None:
    data = content.encode("utf-8") if isinstance(content, str) else content
    path.write_bytes(data)
    # a new mtime for each write, so the store re-reads even within one clock tick
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000 * _write.count))
    _write.count += 1


_write.count = 1  # type: ignore[attr-defined]


@CONFIG_SETTINGS
@given(content=_document(GROUP_KEYS) | raw_garbage)
def test_a_group_file_never_breaks_reading_the_config(content: str | bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        groups = Path(folder)
        store = GroupConfigStore(GroupConfig, groups, check_interval=0)
        good = GroupConfig.model_validate({"chat": {"merge_window_s": 0.25}})
        path = groups / f"{GROUP}.toml"
        _write(path, 'persona = "pallas"\n[chat]\nmerge_window_s = 0.25\n')
        assert store.get(GROUP).chat.merge_window_s == good.chat.merge_window_s
        _write(path, content)
        config = store.get(GROUP)  # never raises
        errors = store.errors()
        if path.name in errors:
            assert str(path) in errors[path.name]
            assert config.chat.merge_window_s == good.chat.merge_window_s
        assert isinstance(config, GroupConfig)


@CONFIG_SETTINGS
@given(content=_document(GROUP_KEYS) | raw_garbage)
def test_a_broken_default_file_keeps_the_last_good_defaults(content: str | bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        groups = Path(folder)
        store = GroupConfigStore(GroupConfig, groups, check_interval=0)
        path = groups / "default.toml"
        _write(path, "[chat]\nmerge_window_s = 0.125\n")
        assert store.get(GROUP).chat.merge_window_s == 0.125
        _write(path, content)
        config = store.get(GROUP)
        if "default.toml" in store.errors():
            assert config.chat.merge_window_s == 0.125


@CONFIG_SETTINGS
@given(content=_document(PERSONA_KEYS) | raw_garbage)
def test_a_persona_file_never_breaks_reading_the_persona(content: str | bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        personas = Path(folder)
        store = PersonaStore(personas, check_interval=0)
        path = personas / "pallas.toml"
        _write(path, 'name = "帕拉斯"\n')
        assert store.get("pallas").name == "帕拉斯"
        _write(path, content)
        pack = store.get("pallas")  # never raises
        assert isinstance(pack, PersonaPack)
