import logging
from types import MappingProxyType

import pytest

from pallas.context.pipeline import (
    CURRENT,
    BaseProcessor,
    ContextPipeline,
    CoreProcessorError,
    DraftMessage,
    PromptDraft,
    PromptSection,
)


class Recorder(BaseProcessor):
    def __init__(self, pid, priority, *, core=False, enabled=True, fixed=False, fail=False):
        self.id, self.priority, self.core = pid, priority, core
        self.enabled, self.fixed, self.fail = enabled, fixed, fail

    async def process(self, draft, ctx):
        ctx.append(self.id)
        if self.fail:
            # a half-applied change must not survive a failure
            draft = draft.with_meta(poisoned=True)
            raise RuntimeError(f"{self.id} broke")
        return draft.with_meta(**{self.id: True})


def procs(**overrides):
    spec = {"a": 100, "b": 200, "c": 300, "d": 400}
    return [Recorder(pid, prio, **overrides.get(pid, {})) for pid, prio in spec.items()]


async def test_runs_by_priority_not_registration_order():
    pipeline = ContextPipeline(list(reversed(procs())))
    seen: list[str] = []
    result = await pipeline.run(PromptDraft(), seen)
    assert seen == ["a", "b", "c", "d"]
    assert [s.processor_id for s in result.steps] == ["a", "b", "c", "d"]
    assert all(s.status == "ok" and s.duration_ms >= 0 for s in result.steps)


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        (["c", "a"], ["c", "b", "a", "d"]),  # listed ones swap their own slots
        (["d", "c", "b", "a"], ["d", "c", "b", "a"]),
        (["b"], ["a", "b", "c", "d"]),
        (["zzz", "b", "a"], ["b", "a", "c", "d"]),  # unknown ids ignored
    ],
)
async def test_order_override(order, expected):
    pipeline = ContextPipeline(procs(), order=order)
    seen: list[str] = []
    await pipeline.run(PromptDraft(), seen)
    assert seen == expected


async def test_fixed_processor_keeps_its_slot():
    pipeline = ContextPipeline(procs(d={"fixed": True}), order=["d", "a"])
    assert pipeline.order == ("a", "b", "c", "d")
    assert any("fixed" in w for w in pipeline.warnings)


async def test_reset_restores_default_order_and_enabled_states():
    custom = ContextPipeline(procs(), order=["d", "c", "b", "a"], disabled=["b"])
    reset = custom.reset()
    assert reset.order == ("a", "b", "c", "d")
    assert all(step.enabled for step in reset.plan)
    assert custom.order == ("d", "c", "b", "a")  # the original is unchanged


async def test_disabled_optional_processor_is_skipped_and_traced():
    pipeline = ContextPipeline(procs(), disabled=["b"])
    seen: list[str] = []
    result = await pipeline.run(PromptDraft(), seen)
    assert seen == ["a", "c", "d"]
    assert result.steps[1].status == "disabled"
    assert "b" not in result.draft.meta


async def test_default_disabled_processor_stays_off():
    seen: list[str] = []
    await ContextPipeline(procs(c={"enabled": False})).run(PromptDraft(), seen)
    assert seen == ["a", "b", "d"]


async def test_core_processor_cannot_be_disabled():
    pipeline = ContextPipeline(procs(b={"core": True}), disabled=["b"])
    seen: list[str] = []
    await pipeline.run(PromptDraft(), seen)
    assert "b" in seen
    assert any("cannot be disabled" in w for w in pipeline.warnings)


async def test_failing_optional_processor_is_logged_and_skipped(caplog):
    pipeline = ContextPipeline(procs(b={"fail": True}))
    seen: list[str] = []
    with caplog.at_level(logging.WARNING, logger="pallas.context.pipeline"):
        result = await pipeline.run(PromptDraft(), seen)
    assert seen == ["a", "b", "c", "d"]
    assert result.failed == ("b",)
    assert "poisoned" not in result.draft.meta
    assert result.draft.meta["c"] and result.draft.meta["d"]
    assert "b broke" in result.steps[1].error
    assert any("context processor b failed" in r.message for r in caplog.records)


async def test_failing_core_processor_aborts():
    pipeline = ContextPipeline(procs(b={"core": True, "fail": True}))
    seen: list[str] = []
    with pytest.raises(CoreProcessorError) as info:
        await pipeline.run(PromptDraft(), seen)
    assert seen == ["a", "b"]
    assert info.value.processor_id == "b"
    assert [s.status for s in info.value.steps] == ["ok", "failed"]


async def test_processor_returning_wrong_type_counts_as_failure():
    class Bad(BaseProcessor):
        id, priority = "bad", 1

        async def process(self, draft, ctx):
            return None

    result = await ContextPipeline([Bad()]).run(PromptDraft(), None)
    assert result.failed == ("bad",)


def test_duplicate_ids_rejected():
    with pytest.raises(ValueError):
        ContextPipeline([Recorder("a", 1), Recorder("a", 2)])


def test_draft_sections_kept_in_canonical_order_and_replaced_by_id():
    draft = PromptDraft()
    for sid in ["current_time", "guard", "plugin_x", "memory", "persona"]:
        draft = draft.put_section(PromptSection(sid, sid))
    assert draft.section_ids == ("guard", "persona", "memory", "current_time", "plugin_x")
    draft = draft.put_section(PromptSection("memory", "new"))
    assert draft.get_section("memory").text == "new"
    assert draft.section_ids.count("memory") == 1
    assert "memory" not in draft.without_section("memory").section_ids


def test_insert_before_current_and_text_of_blocks():
    draft = PromptDraft().with_messages(
        [DraftMessage("user", "old"), DraftMessage("user", "now", kind=CURRENT)]
    )
    blocks = ({"type": "text", "text": "pics"}, {"type": "image_url", "image_url": {"url": "u"}})
    draft = draft.insert_before_current(DraftMessage("user", blocks, kind="timeline_images"))
    assert [m.kind for m in draft.messages] == ["history", "timeline_images", "current"]
    assert draft.messages[1].text == "pics"
    assert draft.messages[1].to_openai()["content"][1]["type"] == "image_url"


def test_draft_meta_is_read_only():
    draft = PromptDraft(meta={"a": 1})
    with pytest.raises(TypeError):
        draft.meta["b"] = 2  # type: ignore[index]


_DRAFT = PromptDraft(
    sections=(PromptSection("persona", "你是帕拉斯"), PromptSection("memory", "群友喜欢猫")),
    messages=(DraftMessage("user", "在吗", kind="current"),),
    meta={"trace.x": 1},
    timeline_present=True,
)


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"sections": ()},
        {"messages": (), "request": ({"role": "user", "content": "hi"},)},
        {"meta": {"trace.y": [1, 2]}},
        {"timeline_images": ("http://x/a.png",), "macros_used": frozenset({"user"})},
    ],
)
def test_evolving_a_draft_gives_what_dataclasses_replace_gives(changes: dict) -> None:
    import dataclasses

    evolved = _DRAFT.evolve(**changes)
    assert evolved == dataclasses.replace(_DRAFT, **changes)
    assert evolved is not _DRAFT
    if "meta" in changes:  # frozen like a constructed draft's, and a copy of what was passed
        assert isinstance(evolved.meta, MappingProxyType)
        changes["meta"]["later"] = True
        assert "later" not in evolved.meta


def test_evolving_a_draft_with_an_unknown_field_is_an_error() -> None:
    with pytest.raises(TypeError, match="sectoins"):
        _DRAFT.evolve(sectoins=())
