"""`pallas replay`: OneBot event logs through the real routing, as an operator reads the result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pallas.cli.main import main as cli_main
from pallas.cli.replay import adapter_to_me, replay_events
from pallas.config import GroupConfig
from pallas.core.config_files import GroupConfigStore
from pallas.features.persona.pack import PersonaPack, PersonaStore
from pallas.features.worldbook import WorldbookLibrary
from pallas.routing import RoutingConfig
from pallas.routing.config import AmbientConfig, CooldownConfig

ROOT = Path(__file__).resolve().parents[3]
TRANSCRIPT = ROOT / "benchmarks" / "transcripts" / "group_500.jsonl"
BOT = 2_000_000_001
GROUP = 7_700_001
ALICE, BOB, CAROL = 1_101, 1_102, 1_103
T0 = 1_747_480_000
LLM = {"reply", "quote", "follow_up", "tool"}


class Configs:
    """Every group gets the same config (ambient off unless asked: no random joins)."""

    def __init__(self, config: GroupConfig | None = None) -> None:
        self.config = config or GroupConfig(
            routing=RoutingConfig(ambient=AmbientConfig(enabled=False))
        )

    def get(self, group_id: int) -> GroupConfig:
        return self.config


class Personas:
    def get(self, name: str) -> PersonaPack:
        return PersonaPack()  # 帕拉斯, aliases 帕拉斯 / 牛牛


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "data": {"text": t}}


def at(qq: int) -> dict[str, Any]:
    return {"type": "at", "data": {"qq": str(qq)}}


def reply(mid: int) -> dict[str, Any]:
    return {"type": "reply", "data": {"id": str(mid)}}


def face() -> dict[str, Any]:
    return {"type": "face", "data": {"id": "178"}}


def msg(
    user: int, mid: int, t: float, *segments: dict[str, Any] | str, post_type: str = "message"
) -> str:
    segs = [text(s) if isinstance(s, str) else s for s in segments]
    return json.dumps(
        {
            "post_type": post_type,
            "message_type": "group",
            "sub_type": "normal",
            "self_id": BOT,
            "group_id": GROUP,
            "user_id": user,
            "message_id": mid,
            "time": t,
            "sender": {"user_id": user, "card": f"群友{user % 100}", "role": "member"},
            "message": segs,
        },
        ensure_ascii=False,
    )


def bot_line(mid: int, t: float, *segments: dict[str, Any] | str, sent: bool = True) -> str:
    return msg(BOT, mid, t, *segments, post_type="message_sent" if sent else "message")


def run(lines: list[str], **kwargs: Any):
    kwargs.setdefault("seed", 7)
    config = kwargs.pop("config", None)
    return replay_events(lines, Configs(config), Personas(), **kwargs)


def routed(report) -> list:
    """Final decision rows of member messages, in order (retries replace their first row)."""
    rows: dict[int, Any] = {}
    for row in report.rows:
        if row.kind in ("message", "retry"):
            rows[row.line] = row
    return [rows[k] for k in sorted(rows)]


# --------------------------------------------------------------------------- behaviour


def test_an_at_question_gets_one_reply_and_one_llm_call() -> None:
    report = run([msg(ALICE, 11, T0, at(BOT), " 明天会下雨吗？")])

    (row,) = routed(report)
    assert (row.trigger, row.outcome) == ("at", "reply")
    assert report.totals.llm_calls == 1
    assert report.totals.simulated_replies == 1  # no bot line in the log: answer simulated
    assert [r.kind for r in report.rows] == ["message", "sent"]


@pytest.mark.parametrize(
    "segments",
    [("哈哈哈",), ("哈哈哈哈哈哈",), ("666",), ("？？？",), (face(),), (at(BOB), " 你作业写完没")],
    ids=["haha", "haha6", "666", "question-marks", "face", "at-someone-else"],
)
def test_noise_faces_and_bystanders_cost_no_llm_call(segments: tuple) -> None:
    ambient_on = GroupConfig(routing=RoutingConfig(ambient=AmbientConfig(rate=1.0)))
    report = run([msg(ALICE, 11, T0, *segments)], config=ambient_on)

    (row,) = routed(report)
    assert row.outcome == "skip"
    assert report.totals.llm_calls == 0
    assert report.totals.phrases == 0


def test_a_burst_from_one_member_is_one_llm_call() -> None:
    report = run(
        [
            msg(CAROL, 21, T0, "牛牛 推荐个番"),
            msg(CAROL, 22, T0 + 1, "要轻松一点的"),
            msg(CAROL, 23, T0 + 2, "别太虐的"),
            msg(CAROL, 24, T0 + 3, "最好是日常番"),
        ]
    )

    outcomes = [r.outcome for r in routed(report)]
    assert outcomes == ["reply", "merge", "merge", "merge"]
    assert report.totals.llm_calls == 1


def test_the_bots_own_line_is_the_delivery_and_opens_the_follow_up_window() -> None:
    report = run(
        [
            msg(ALICE, 31, T0, at(BOT), " 洛必达什么时候不能用？"),
            bot_line(-501, T0 + 6, reply(31), "得是0/0或∞/∞型才能用哦"),
            bot_line(-502, T0 + 7, "而且导数之比的极限要存在", sent=False),  # LLOneBot style
            msg(ALICE, 32, T0 + 40, "那sinx/x趋于无穷的极限是多少？"),
        ]
    )

    first, follow = routed(report)
    assert first.outcome == "reply"
    # the first answer is the bot's lines from the log; only the follow-up's is simulated
    assert [r.kind for r in report.rows] == ["message", "bot", "bot", "message", "sent"]
    assert report.totals.bot_lines == 2
    assert report.totals.bot_lines_as_answers == 2  # two bubbles of one answer
    assert follow.trigger == "follow_up"
    assert follow.outcome == "reply"


def test_quoting_the_bots_line_is_addressed_but_quoting_a_member_is_not() -> None:
    report = run(
        [
            msg(ALICE, 41, T0, at(BOT), " 晚饭吃什么好"),
            bot_line(-601, T0 + 5, "吃烧烤！"),
            msg(BOB, 42, T0 + 200, reply(-601), at(BOT), " 烧烤太油了"),
            msg(CAROL, 43, T0 + 400, reply(41), at(ALICE), " 我也想知道"),
        ]
    )

    _, quote_bot, quote_member = routed(report)
    assert quote_bot.trigger in ("at", "reply_to_bot")
    assert quote_bot.outcome in ("reply", "quote")
    assert quote_member.outcome == "skip"
    assert report.totals.llm_calls == 2


def test_an_at_during_the_cooldown_is_answered_at_once() -> None:
    report = run(
        [
            msg(ALICE, 51, T0, at(BOT), " 今天几号？"),
            msg(BOB, 52, T0 + 1, at(BOT), " 周末有什么好玩的？"),
        ]
    )

    kinds = [(r.kind, r.user_id, r.outcome) for r in report.rows if r.kind != "sent"]
    assert kinds == [("message", ALICE, "reply"), ("message", BOB, "reply")]
    assert report.totals.retries == 0
    assert report.totals.llm_calls == 2


def test_an_at_waits_out_the_cooldown_when_configured_so() -> None:
    waits = RoutingConfig(
        ambient=AmbientConfig(enabled=False),
        cooldown=CooldownConfig(addressed_waits_cooldown=True),
    )
    report = run(
        [
            msg(ALICE, 51, T0, at(BOT), " 今天几号？"),
            msg(BOB, 52, T0 + 1, at(BOT), " 周末有什么好玩的？"),
        ],
        config=GroupConfig(routing=waits),
    )

    kinds = [(r.kind, r.user_id, r.outcome) for r in report.rows if r.kind != "sent"]
    assert kinds == [
        ("message", ALICE, "reply"),
        ("message", BOB, "accumulate"),
        ("retry", BOB, "reply"),
    ]
    assert report.totals.retries == 1
    assert report.totals.llm_calls == 2
    assert report.totals.outcomes["accumulate"] == 0  # counted by its final outcome


def test_shut_up_silences_the_bot_but_a_later_at_is_answered() -> None:
    report = run(
        [
            msg(ALICE, 61, T0, "牛牛 讲个笑话"),
            bot_line(-701, T0 + 6, "从前有头牛去买奶茶"),
            msg(BOB, 62, T0 + 20, "牛牛闭嘴"),
            msg(ALICE, 63, T0 + 30, "还挺好笑的 再来一个呗"),
            msg(BOB, 64, T0 + 400, at(BOT), " 刚才凶你了 别生气哈"),
        ]
    )

    rows = routed(report)
    assert [r.outcome for r in rows] == ["reply", "skip", "skip", "reply"]
    assert rows[1].gate == "skip:shut_up"
    assert rows[2].reason == "silenced"


def test_malformed_lines_are_reported_and_the_rest_is_replayed() -> None:
    lines = [
        msg(ALICE, 71, T0, at(BOT), " 在吗？"),
        "{not json",
        "[1, 2, 3]",
        json.dumps({"post_type": "message", "message_type": "group", "self_id": BOT}),
        json.dumps({"post_type": "notice", "notice_type": "group_increase", "self_id": BOT}),
        "",
        msg(BOB, 72, T0 + 30, "哈哈哈哈"),
        b"\xff\xfe broken bytes",
    ]
    report = run(lines)

    assert [p.line for p in report.problems] == [2, 3, 4, 8]
    assert "invalid JSON" in report.problems[0].message
    assert "user_id" in report.problems[2].message
    assert report.totals.malformed == 4
    assert report.totals.ignored_events == 1
    assert report.totals.messages == 2
    assert [r.outcome for r in routed(report)] == ["reply", "skip"]


def test_totals_add_up() -> None:
    report = run(
        [
            msg(ALICE, 81, T0, at(BOT), " 明天几点集合？"),
            msg(ALICE, 82, T0 + 2, "我怕迟到"),
            bot_line(-801, T0 + 6, "九点哦 别迟到"),
            msg(BOB, 83, T0 + 8, "哈哈哈"),
            msg(BOB, 84, T0 + 9, face()),
            msg(CAROL, 85, T0 + 30, at(ALICE), " 你几点到"),
            msg(CAROL, 86, T0 + 60, "牛牛"),
            "garbage",
        ]
    )
    t = report.totals

    assert t.messages == 6
    assert sum(t.outcomes.values()) == t.messages
    assert t.llm_calls == sum(t.outcomes[o] for o in LLM) == 2
    assert t.outcomes["merge"] == 1
    assert t.outcomes["skip"] == sum(t.skip_reasons.values()) == 3
    assert t.llm_calls_per_100 == pytest.approx(100 * 2 / 6)
    data = report.to_json()["totals"]
    assert data["llm_calls"] == 2
    assert sum(data["outcomes"].values()) == 6


def test_a_disabled_group_config_override_silences_the_replay(tmp_path: Path, capsys) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(msg(ALICE, 91, T0, at(BOT), " 在吗？") + "\n", encoding="utf-8")
    override = tmp_path / "quiet.toml"
    override.write_text("[routing]\nenabled = false\n", encoding="utf-8")
    config_dir = ROOT / "config"

    assert cli_main(["replay", str(log), "--config-dir", str(config_dir), "--json"]) == 0
    normal = json.loads(capsys.readouterr().out)
    args = ["replay", str(log), "--config-dir", str(config_dir), "--group-config", str(override)]
    assert cli_main([*args, "--json"]) == 0
    quiet = json.loads(capsys.readouterr().out)

    assert normal["totals"]["llm_calls"] == 1
    assert quiet["totals"]["llm_calls"] == 0
    assert quiet["rows"][0]["reason"] == "disabled"


def test_the_cli_prints_a_decision_table_and_totals(tmp_path: Path, capsys) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text(
        "\n".join([msg(ALICE, 95, T0, at(BOT), " 在吗？"), "oops", msg(BOB, 96, T0 + 9, "草")]),
        encoding="utf-8",
    )

    assert cli_main(["replay", str(log), "--self-id", str(BOT)]) == 0
    out, err = capsys.readouterr()

    assert "REPLY" in out and "skip:noise" in out
    assert "LLM calls" in out and "per 100 messages" in out
    assert "line 2: invalid JSON" in err


# --------------------------------------------------------------------------- adapter to_me


@pytest.mark.parametrize(
    ("segments", "reply_author", "expected"),
    [
        ([at(BOT), text(" 在吗")], None, True),
        ([text("在吗 "), at(BOT), text(" ")], None, True),  # trailing @bot (and a space)
        ([text("我和"), at(BOT), text("说过了")], None, False),  # @bot in the middle
        ([text("牛牛 在吗")], None, True),
        ([text("帕拉斯，在吗")], None, True),
        ([text("今天牛牛好可爱")], None, False),
        ([reply(5), at(BOT), text(" 好的")], BOT, True),  # quoting the bot
        ([reply(5), text("好的")], BOT, True),
        ([reply(5), at(ALICE), text(" 真的吗")], ALICE, False),  # quoting a member
        ([reply(5), at(ALICE), text(" 牛牛你说呢")], ALICE, True),  # ...then calling the bot
    ],
)
def test_adapter_to_me(segments: list, reply_author: int | None, expected: bool) -> None:
    assert (
        adapter_to_me(
            segments, self_id=BOT, nicknames=("帕拉斯", "牛牛"), reply_author=reply_author
        )
        is expected
    )


# --------------------------------------------------------------------------- the 500 transcript


def test_the_500_message_transcript_replays_with_a_sane_llm_rate() -> None:
    config_dir = ROOT / "config"
    report = replay_events(
        TRANSCRIPT.read_bytes().splitlines(),
        GroupConfigStore(GroupConfig, config_dir / "groups"),
        PersonaStore(config_dir / "personas"),
        seed=0,
    )
    totals = report.totals
    print()
    print(report.format_totals())

    assert report.problems == []
    assert totals.messages == 500
    assert totals.bot_lines > 30
    assert sum(totals.outcomes.values()) == 500
    assert 3 <= totals.llm_calls_per_100 <= 40
    rows = routed(report)
    # Every @bot is answered (or folded into the member's turn being answered) ...
    at_rows = [r for r in rows if r.trigger == "at"]
    assert at_rows and all(r.outcome in LLM | {"merge"} for r in at_rows)
    # ... and nothing the gate calls noise, a face or a bystander reaches the model.
    gated = [r for r in rows if r.gate in ("skip:noise", "skip:face", "skip:bystander")]
    assert len(gated) > 100 and all(r.outcome == "skip" for r in gated)
    # Low-engagement phrases stay rare.
    assert totals.phrases <= totals.llm_calls


def test_the_groups_worldbook_keys_are_a_stake_in_the_replay(tmp_path: Path) -> None:
    """Issue 32: naming the persona's world gives the bot a stake (named in the replay)."""
    (tmp_path / "rhodes_island.json").write_text(
        (ROOT / "tests/unit/memory/fixtures/rhodes_island.json").read_text("utf-8"), "utf-8"
    )
    config = GroupConfig.model_validate(
        {"worldbook": {"books": ["rhodes_island"]}, "routing": {"ambient": {"rate": 1.0}}}
    )
    lines = [msg(ALICE, 95, T0, "凯尔希医生今天又在加班"), msg(BOB, 96, T0 + 400, "今天又在加班")]
    with_books = run(lines, config=config, stake_keys=WorldbookLibrary(tmp_path))
    without = run(lines, config=config)
    stakes = [(r.record or {}).get("stake") for r in routed(with_books)]
    assert stakes == ["worldbook", "no_stake"]
    assert [(r.record or {}).get("stake") for r in routed(without)] == ["no_stake", "no_stake"]


def dm(user: int, mid: int, t: float, words: str, sub_type: str = "friend") -> str:
    return json.dumps(
        {
            "post_type": "message",
            "message_type": "private",
            "sub_type": sub_type,
            "self_id": BOT,
            "user_id": user,
            "message_id": mid,
            "time": t,
            "sender": {"user_id": user, "nickname": f"u{user}"},
            "message": [text(words)],
        },
        ensure_ascii=False,
    )


def test_private_messages_replay_as_the_live_edge_answers_them() -> None:
    """A friend's DM is a private turn (shown as 私聊); a stranger's is refused as the live
    `[private]` gate refuses it, until the config lets strangers in."""
    lines = [dm(ALICE, 11, T0, "在吗"), dm(CAROL, 12, T0 + 30, "你好", sub_type="other")]
    report = run(lines)
    friend, stranger = routed(report)
    assert (friend.group_id, friend.trigger, friend.outcome) == (0, "private", "reply")
    assert (stranger.outcome, stranger.reason) == ("private_refused", "strangers_off")
    assert report.totals.llm_calls == 1
    assert "私聊" in report.format_table()

    opened = GroupConfig(
        routing=RoutingConfig(ambient=AmbientConfig(enabled=False)),
        private={"strangers": True},
    )
    assert run(lines, config=opened).totals.llm_calls == 2
