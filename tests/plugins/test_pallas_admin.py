"""packages/pallas_admin: `/pallas <subcommand>` for owners, admins and superusers only."""

from __future__ import annotations

import pytest
from nonebug import App

from pallas.admin import help_text
from tests.plugins.conftest import (
    SUPERUSER,
    Pallas,
    TextWith,
    arrive,
    group_message,
    onebot,
    routed_message_ids,
)

GROUP = 63_000_001
ALICE, CONFIGURED_ADMIN = 41_001, 41_077
REFUSAL = "只有群主、管理员或超级用户可以用这个命令哦"
HELP = f"可用的命令：\n{help_text()}"

ADMINS = [
    pytest.param(SUPERUSER, "member", id="superuser"),
    pytest.param(ALICE, "owner", id="owner"),
    pytest.param(ALICE, "admin", id="group-admin"),
    pytest.param(CONFIGURED_ADMIN, "member", id="admins-in-group-file"),
]


async def _command(
    app: App, pallas: Pallas, text: str, *, user_id: int, role: str, answer: object
) -> int:
    runtime = await pallas.start(llm=True, groups={GROUP: f"admins = [{CONFIGURED_ADMIN}]\n"})
    frame = group_message(GROUP, user_id, text, role=role)
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        event = await arrive(bot, frame)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, answer, None)
    # the command matcher blocks: the chat never sees admin commands
    assert await routed_message_ids(runtime, GROUP) == []
    return frame["message_id"]


@pytest.mark.parametrize(("user_id", "role"), ADMINS)
async def test_status_answers_admins(app: App, pallas: Pallas, user_id: int, role: str) -> None:
    # the command line itself was recorded before `status` counted
    answer = TextWith("本群已记录消息 1 条", "发言：开启", "回复模型：已配置", "记忆检索：")
    await _command(app, pallas, "/pallas status", user_id=user_id, role=role, answer=answer)


@pytest.mark.parametrize(("user_id", "role"), ADMINS)
async def test_help_lists_the_commands_for_admins(
    app: App, pallas: Pallas, user_id: int, role: str
) -> None:
    assert "/pallas status" in HELP
    await _command(app, pallas, "/pallas help", user_id=user_id, role=role, answer=HELP)


@pytest.mark.parametrize("text", ["/pallas status", "/pallas help", "/pallas"])
async def test_plain_member_is_refused(app: App, pallas: Pallas, text: str) -> None:
    await _command(app, pallas, text, user_id=ALICE, role="member", answer=REFUSAL)


async def test_unknown_subcommand_answers_with_the_command_list(app: App, pallas: Pallas) -> None:
    await _command(app, pallas, "/pallas frobnicate", user_id=SUPERUSER, role="member", answer=HELP)


async def test_bare_command_means_status(app: App, pallas: Pallas) -> None:
    answer = TextWith("本群已记录消息 1 条")
    await _command(app, pallas, "/pallas", user_id=ALICE, role="admin", answer=answer)


async def test_status_reports_missing_api_key(app: App, pallas: Pallas) -> None:
    await pallas.start(llm=False)
    frame = group_message(GROUP, ALICE, "/pallas status", role="owner")
    async with app.test_matcher() as ctx:
        bot = onebot(ctx)
        event = await arrive(bot, frame)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, TextWith("未配置 API Key，暂不回复"), None)
