"""`pallas structure --check`: objects are whole at birth (issue 46 item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pallas.cli.structure import ALLOWED, REPO, broken, findings_in, scan

FLAGGED = [
    # handing another object a collaborator after it was built
    ("service.judge = TeachJudge(clock=clock)", "service.judge"),
    ("service.profiles = repo", "service.profiles"),
    ("app.reminder_firer = reminder_firer_for(runtime)", "app.reminder_firer"),
    ("self.child.hub = McpHub()", "self.child.hub"),
    ("runtime.writer.listeners = []", "runtime.writer.listeners"),
    ("service.on_write = lambda item: None", "service.on_write"),
    ("x.cache: Cache = Cache()", "x.cache"),
    ("a, service.judge = 1, judge", "service.judge"),
    ("setattr(service, 'judge', judge)", "setattr(service, 'judge', judge)"),
    # registering onto another object's listeners
    ("service.write_listeners.append(expander.expand)", "service.write_listeners.append"),
    ("runtime.writer.listeners.append(cache.note)", "runtime.writer.listeners.append"),
    ("self._writer.done_listeners.append(self._done.append)", "self._writer.done_listeners.append"),
    ("repo.hooks.extend(more)", "repo.hooks.extend"),
    ("bus.handlers.insert(0, handler)", "bus.handlers.insert"),
    ("jobs.callbacks.add(done)", "jobs.callbacks.add"),
    # subscribing to an events source anywhere but in the follower's own constructor
    ("runtime.ingest.subscribe(submitted=cache.note)", "runtime.ingest.subscribe"),
    ("def wire(events, cache):\n    events.subscribe(stored=cache.note_many)", "events.subscribe"),
]

NOT_FLAGGED = [
    "self.judge = judge",  # an object sets its own attributes
    "self.listeners.append(listener)",  # and registers onto its own lists
    "cls.registry = {}",
    "row.updated_at = now",  # a record updated: data, not wiring
    "report.failed += 1",
    "page.status_code = 404",
    "totals.trims.append(trim)",  # a record's list, not listeners
    "window.rows.insert(0, row)",
    "REGISTRY.append(register_deps)",  # a module's own list
    "setattr(self, 'x', 1)",
    "object.__setattr__(self, 'x', 1)",
    "item.source = dict(source)",  # a plain value built by a function
    # a follower subscribes itself at birth, to the events it is handed
    "class Cache:\n    def __init__(self, events):\n        events.subscribe(submitted=self.note)",
]


@pytest.mark.parametrize(("code", "what"), FLAGGED)
def test_finishing_another_object_is_flagged(code: str, what: str) -> None:
    assert [f.what for f in findings_in(code)] == [what]


@pytest.mark.parametrize("code", NOT_FLAGGED)
def test_own_attributes_and_records_are_not_flagged(code: str) -> None:
    assert findings_in(code) == []


def test_a_finding_names_file_and_line() -> None:
    code = "def wire(service):\n    x = 1\n    service.judge = Judge()\n"
    [finding] = findings_in(code, "pallas/app.py")
    assert str(finding) == "pallas/app.py:3: assigns another object's attribute: service.judge"


def test_the_repository_keeps_the_rules() -> None:
    assert broken() == []


def test_every_allowed_site_still_exists_and_says_why() -> None:
    found = {(f.path, f.what) for f in scan(REPO)}
    assert set(ALLOWED) <= found  # a fixed site leaves the allowlist
    assert all(reason.strip() for reason in ALLOWED.values())


def test_a_new_site_in_a_tree_breaks_the_check(tmp_path: Path) -> None:
    (tmp_path / "pallas").mkdir()
    (tmp_path / "packages").mkdir()
    (tmp_path / "pallas" / "wiring.py").write_text(
        "def build(service, expander):\n    service.write_listeners.append(expander.expand)\n"
    )
    assert [str(f) for f in broken(tmp_path)] == [
        "pallas/wiring.py:2: appends to: service.write_listeners.append"
    ]
