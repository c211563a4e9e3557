"""`pallas replay FILE.jsonl`: run a OneBot v11 event log through the real routing.

Every line is one OneBot v11 event (JSON object). Message events become `TurnInput`s the way the
live edge builds them (`pallas.onebot.convert.turn_input_from_event`), with `to_me` worked out
the way the NoneBot OneBot adapter does it: a reply to a message whose sender is the bot, a
leading or trailing @bot, or a leading NICKNAME (the persona's name and aliases). Each turn goes
through the real `Router` over a `MemoryStateStore`, with a `FakeClock` that follows each
event's `time` and one `random.Random(seed)`, so a replay is deterministic.

How the replay stands in for what happens after routing on a live bot:

- **The bot's own lines** in the file (`user_id == self_id`, or `post_type == "message_sent"`)
  are what the bot actually sent. They are fed back with `record_bot_reply` so follow-up
  windows, recent-reply penalties, QUOTE candidates and reply-to-bot detection behave as live.
- **Replies.** When routing decides an LLM turn (REPLY / QUOTE / FOLLOW_UP / TOOL), the member
  is in flight until the answer is delivered. If one of the bot's own lines follows within
  `claim_window_s` (preferring one that quotes the message or @s the member), that line is taken
  as the delivery of this turn (with any further bubbles sent within `bubble_gap_s`). Otherwise
  the replay simulates a delivered answer `reply_latency_s` after the decision (LLM latency plus
  the first bubble's typing delay): `record_bot_reply` with a synthetic negative message id,
  then `finish_turn`. Either way cooldowns, follow-up windows and recent-bot-reply penalties
  evolve as they would live, and quick messages from the same member meanwhile are merged.
- **Low-engagement phrases** are recorded by the router itself; a short bot line right after a
  PASS-phrase decision is taken as that phrase (not fed back a second time).
- **The route step is the live one**: `RouteStep` (pallas/turn/route.py, built by
  `pallas.app.build_replay_route_step`) — freshness, tool plan, routing, and the next step — is
  the same object the live `ChatTurnService` calls; a message too old when (re-)routed is
  counted `stale` with its freshness reason.
- **Cooldown.** An addressed message that arrives during the chat cooldown is accumulated and,
  as the cooldown contract says, routed again when the cooldown ends (the live retry delay and
  `[chat] max_accumulate_retries`); other accumulated messages wait for the next LLM turn,
  which drains them.
- Tool requests are planned as live (the group's `[tools]` config; superusers are unknown to a
  replay, so only owner/admin roles and configured admins count as admins). Relationships and
  learned expressions do not run: affinity unknown, no group expressions.

Malformed lines (bad JSON / UTF-8, not an object, message events without ids or time) are
reported with their line numbers and skipped; everything else is still replayed. Totals count
each member message once, by its final outcome, so they add up to the number of messages.
`unprompted` counts the final decisions where the bot speaks (an LLM turn or a phrase) although
nobody addressed it, per 100 messages and per calendar day (UTC+8) of the log, broken down by
`<trigger>:<stake or reason>:<llm|phrase>`. (Routing, not the replay, decides that a leading
nickname the adapter took as `to_me` is only a third-person mention: "牛牛也是干员吧".)

The package: `events` reads and checks the JSONL and works out `to_me`, `simulation` runs the
routing loop and the simulated deliveries, `matching` pairs the bot's own lines with the turns
they deliver, `report` holds the report values and renders the table, totals and JSON, and `cli`
registers `pallas replay`.
"""

from __future__ import annotations

from pallas.cli.replay.cli import OverlayConfigStore, register_replay
from pallas.cli.replay.events import BOT_POST_TYPES, adapter_to_me
from pallas.cli.replay.report import (
    DISPLAY_TZ,
    LLM_OUTCOMES,
    OUTCOME_ORDER,
    ReplayProblem,
    ReplayReport,
    ReplayRow,
    ReplayTotals,
    format_table,
    format_totals,
)
from pallas.cli.replay.simulation import (
    SYNTHETIC_ID_BASE,
    ConfigSource,
    PersonaSource,
    replay_events,
    replay_events_async,
)

__all__ = [
    "BOT_POST_TYPES",
    "DISPLAY_TZ",
    "LLM_OUTCOMES",
    "OUTCOME_ORDER",
    "SYNTHETIC_ID_BASE",
    "ConfigSource",
    "OverlayConfigStore",
    "PersonaSource",
    "ReplayProblem",
    "ReplayReport",
    "ReplayRow",
    "ReplayTotals",
    "adapter_to_me",
    "format_table",
    "format_totals",
    "register_replay",
    "replay_events",
    "replay_events_async",
]
