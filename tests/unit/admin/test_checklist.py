"""The first-run checklist, table by table: facts in, items with reasons out."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from pallas.admin.checklist import (
    SetupFacts,
    checklist_lines,
    first_run_checklist,
    reverse_ws_url,
)
from pallas.admin.inspect import superuser_checklist
from pallas.core.admin_commands import AdminContext

FRESH = SetupFacts(
    key_set=False,
    accounts_online=0,
    superusers=0,
    host="0.0.0.0",
    port=8080,
    access_token="",
    groups_seen=0,
)
READY = SetupFacts(
    key_set=True,
    model_answers=True,
    accounts_online=1,
    superusers=1,
    host="127.0.0.1",
    port=8080,
    access_token="",
    groups_seen=2,
)


def states(facts: SetupFacts) -> dict[str, bool]:
    return {item.key: item.ok for item in first_run_checklist(facts).items}


def test_a_fresh_deployment_is_all_red_and_says_replies_are_off_first() -> None:
    checklist = first_run_checklist(FRESH)
    assert not checklist.replies_on and not checklist.done
    assert checklist.headline.startswith("回复已关闭")
    assert states(FRESH) == dict.fromkeys(
        ("model", "account", "superuser", "token", "group"), False
    )
    assert all(item.action for item in checklist.items)
    lines = checklist_lines(checklist)
    assert lines[0].startswith("回复已关闭") and "还差 5 项" in lines[1]


def test_a_ready_deployment_has_no_lines() -> None:
    checklist = first_run_checklist(READY)
    assert checklist.done and checklist.replies_on
    assert checklist_lines(checklist) == []


@pytest.mark.parametrize(
    ("change", "key", "ok", "words"),
    [
        ({"key_set": False, "model_answers": None}, "model", False, "还没有模型 API Key"),
        ({"model_answers": False, "model_error_zh": "密钥被拒绝"}, "model", False, "密钥被拒绝"),
        ({"model_answers": None}, "model", True, "还没有调用记录"),
        ({"accounts_online": 0}, "account", False, "没有 QQ 账号"),
        ({"superusers": 0}, "superuser", False, "「模型」页"),
        ({"host": "0.0.0.0"}, "token", False, "冒充"),
        ({"host": "0.0.0.0", "access_token": "abc"}, "token", True, "已设置"),
        ({"host": "localhost"}, "token", True, "只监听本机"),
        ({"groups_seen": 0}, "group", False, "拉进一个群"),
    ],
)
def test_one_fact_turns_one_item(change: dict[str, object], key: str, ok: bool, words: str) -> None:
    facts = replace(READY, **change)  # type: ignore[arg-type]
    items = {item.key: item for item in first_run_checklist(facts).items}
    item = items[key]
    assert item.ok is ok
    assert words in item.reason + item.action
    assert [k for k, i in items.items() if not i.ok] == ([] if ok else [key])


def test_the_account_item_names_the_url_and_where_the_token_goes_but_never_the_token() -> None:
    """The checklist reaches a group chat through `/pallas status`: the token is named by its
    variable and its last 4 characters, never shown whole."""
    token = "s3cret-onebot-tok-9f2a"
    facts = replace(READY, accounts_online=0, host="0.0.0.0", port=8091, access_token=token)
    item = next(i for i in first_run_checklist(facts).items if i.key == "account")
    assert "ws://127.0.0.1:8091/onebot/v11/ws" in item.action
    assert "ONEBOT_ACCESS_TOKEN，末 4 位 9f2a" in item.action
    assert [name for name, _ in item.steps] == ["NapCat", "Lagrange.OneBot", "LLOneBot"]
    assert all("ws://127.0.0.1:8091/onebot/v11/ws" in step and "ONEBOT_ACCESS_TOKEN" in step
               for _, step in item.steps)  # fmt: skip
    shown = item.reason + item.action + "".join(step for _, step in item.steps)
    assert token not in shown and "s3cret" not in shown


def test_unknown_facts_leave_their_items_out() -> None:
    checklist = first_run_checklist(SetupFacts(key_set=True, superusers=1))
    assert [item.key for item in checklist.items] == ["model", "superuser"]


def test_a_failing_model_keeps_replies_on_but_says_so() -> None:
    checklist = first_run_checklist(SetupFacts(key_set=True, model_answers=False))
    assert checklist.replies_on and "失败" in checklist.headline


def test_reverse_ws_url() -> None:
    assert reverse_ws_url("::", 8080) == "ws://127.0.0.1:8080/onebot/v11/ws"
    assert reverse_ws_url("192.168.1.5", 80) == "ws://192.168.1.5:80/onebot/v11/ws"
    assert reverse_ws_url("::1", 80) == "ws://[::1]:80/onebot/v11/ws"


def test_pallas_status_shows_the_open_items_to_a_superuser_only() -> None:
    services: Any = SimpleNamespace(
        deployment=SimpleNamespace(superusers=frozenset({10001})),
        llm=SimpleNamespace(enabled=False),
    )
    superuser = superuser_checklist(AdminContext(services, 1, 2, 10001, ()), [])
    assert superuser[0].startswith("回复已关闭") and "还没有模型 API Key" in superuser[2]
    assert superuser_checklist(AdminContext(services, 1, 2, 555, ()), []) == []
    services.llm.enabled = True
    assert superuser_checklist(AdminContext(services, 1, 2, 10001, ()), []) == []


def test_listening_on_every_address_says_where_else_to_dial() -> None:
    facts = replace(READY, accounts_online=0, host="0.0.0.0", access_token="t")
    item = next(i for i in first_run_checklist(facts).items if i.key == "account")
    assert "换成这台机器的地址" in item.action
    local = replace(READY, accounts_online=0)
    item = next(i for i in first_run_checklist(local).items if i.key == "account")
    assert "换成" not in item.action
