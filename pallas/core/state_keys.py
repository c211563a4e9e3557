"""Every StateStore key of the bot, built in one place (one function per namespace).

Ephemeral state (pallas/core/state.py) is shared by every service and, on Redis, by every
process; a key's shape is part of that contract. The modules that own a namespace call these
builders instead of formatting keys themselves, so two features cannot collide on a prefix and
an operator can read this file to know what is stored. `NAMESPACES` lists each prefix with its
owner and how long its keys live (the TTL rule, in the owner module's words).

Ids are `bot_id`, `group_id` (0 for private chats), `user_id`, `message_id`, as in TurnInput.
The TTL constants and the TTL rules that add a margin to a config window live here too.
"""

from __future__ import annotations

from dataclasses import dataclass

from pallas.core.clock import DAY_S


@dataclass(frozen=True, slots=True)
class Namespace:
    prefix: str
    owner: str  # the module that reads and writes it
    ttl: str  # how long a key lives


NAMESPACES: tuple[Namespace, ...] = (
    Namespace("route", "product.llm.routing.router", "per-key: config windows, route_*_ttl"),
    Namespace("merge", "product.llm.merges", "PARKED_TTL_S"),
    Namespace("lines", "product.llm.merges", "LINE_TIMES_TTL_S"),
    Namespace("fresh", "product.llm.freshness", "max(max_age_s × 2, 60 s) / max(max_age_s, 60 s)"),
    Namespace("botreply", "product.llm.delivery.bot_reply_context", "TTL_SECONDS"),
    Namespace("botreply-index", "product.llm.delivery.bot_reply_context", "TTL_SECONDS"),
    Namespace("upload", "product.llm.attachments.uploads", "UPLOAD_TTL_S"),
    Namespace("sticker:sent", "product.llm.stickers.service", "SENT_TTL_S"),
    Namespace("learning:gen", "product.llm.learning.group_store", "none (a counter)"),
    Namespace("memory:extract", "product.llm.memory.extraction_hook", "STATE_TTL_S / LOCK_TTL_S"),
    Namespace("worldbook:state", "product.llm.memory.worldbook.service", "worldbook timed effects"),
    Namespace("worldbook:turn", "product.llm.memory.worldbook.service", "worldbook timed effects"),
    Namespace("session_summary", "product.llm.session.session_summary", "the hook's own TTLs"),
    Namespace("cost", "product.llm.cost.counters", "COST_DAY_TTL_S; member buckets: guard"),
    Namespace("kb:turn", "product.llm.turn_extras", "none (a counter)"),
    Namespace("memory:gen", "product.llm.memory.service", "none (a counter)"),
    Namespace("memory:page", "features.memory_commands.recall_pages", "PAGE_TTL_S"),
    Namespace("learning:sweep_lock", "product.llm.learning.group_insight_processor", "LOCK_TTL"),
    Namespace("console:login_failures", "web.auth", "LOGIN_WINDOW_S"),
    Namespace("console:revoked", "web.auth", "until the session's own expiry"),
    Namespace("provider:breaker", "providers.breaker", "STATE_TTL_S (7 days)"),
    Namespace("tools", "product.llm.turn.tool_loop", "TOOL_DAY_TTL_S / TOOL_PENDING_TTL_S"),
    Namespace("answer", "turn.parts.accounts", "ANSWER_CLAIM_TTL_S"),
    Namespace("accounts", "core.accounts", "ACCOUNTS_LIVE_TTL_S"),
    Namespace("voice", "features.voice.service", "VOICE_DAY_TTL_S"),
)


# -- routing (product.llm.routing.router) ---------------------------------------------------
ROUTE_PREFIX = "route"
ROUTE_KEY_NAMES = (
    "silenced_until",  # float: end of the silence period after a shut-up request
    "last_turn_at",  # float: when the bot last started an LLM turn (cooldown anchor)
    "ambient_times",  # list[float]: ambient engagements within the budget window
    "last_quote_at",  # float: last native QUOTE decided in the group
    "candidates",  # list[int]: QUOTE candidates, newest last (maxlen quote.candidates)
    "bot_messages",  # bounded list[int]: ids of messages the bot sent (reply_to_bot)
    "bot_replies",  # bounded list[{"t", "user", "kind"}]: kind "reply" | "phrase"
    "last_phrase",  # str: last low-engagement phrase (never repeated)
    "pending",  # bounded list[dict]: messages accumulated during cooldown / deferred
    "decisions",  # bounded list[dict]: the latest decision records (to_log_dict)
    "recent_lines",  # bounded list[{"t", "user", "text", "reply_to", "to_bot"}] (stake rules)
)
ROUTE_UNPROMPTED_TTL_S = 2 * DAY_S  # a per-day counter outlives its day
ROUTE_TURN_MARGIN_S = 60.0  # `last_turn_at` and its `turn_after` claim outlive the cooldown
ROUTE_RECENT_LINES_FACTOR = 4  # recent lines live this many thread windows (≥ 60 s each)


def route_scope(group_id: int, user_id: int) -> str:
    """`g{group}` for a group, `p{user}` for a private chat (private chats never share state)."""
    return f"g{group_id}" if group_id else f"p{user_id}"


@dataclass(frozen=True, slots=True)
class RouteKeys:
    """The keys of one routing scope: `route:{bot}:{scope}:{name}`."""

    base: str

    @classmethod
    def of(
        cls, bot_id: int, group_id: int, user_id: int = 0, *, prefix: str = ROUTE_PREFIX
    ) -> RouteKeys:
        return cls(f"{prefix}:{bot_id}:{route_scope(group_id, user_id)}")

    def key(self, name: str) -> str:
        if name not in ROUTE_KEY_NAMES:
            raise KeyError(name)
        return f"{self.base}:{name}"

    def seen(self, message_id: int) -> str:
        """Claimed once per message id: a re-delivered event is not routed twice."""
        return f"{self.base}:seen:{message_id}"

    def turn_after(self, last_turn_at: float | None) -> str:
        """Claimed by the one LLM turn that follows the turn started at `last_turn_at` (the
        cooldown anchor it read): two turns deciding on the same snapshot cannot both start."""
        return f"{self.base}:turn_after:" + ("none" if last_turn_at is None else repr(last_turn_at))

    def unprompted(self, day: str) -> str:
        """Counter of the bot's unprompted utterances (unaddressed REPLY / phrase) on `day`."""
        return f"{self.base}:unprompted:{day}"

    def in_flight(self, user_id: int | None = None) -> str:
        """Marker of a member's turn between the decision and the delivery (prefix if None)."""
        return f"{self.base}:inflight:" + ("" if user_id is None else str(user_id))


def route_turn_ttl(chat_cooldown_s: float) -> float:
    """TTL of `last_turn_at` and of the `turn_after` claim: the cooldown plus a margin."""
    return max(chat_cooldown_s, 1.0) + ROUTE_TURN_MARGIN_S


def route_recent_lines_ttl(thread_window_s: float) -> float:
    """TTL of `recent_lines`: a few thread windows."""
    return max(thread_window_s, 60.0) * ROUTE_RECENT_LINES_FACTOR


# -- model-chosen tools (product.llm.turn.tool_loop) -----------------------------------------
TOOLS_PREFIX = "tools"
TOOL_DAY_TTL_S = 2 * DAY_S  # a per-day counter outlives its local day


TOOL_PENDING_TTL_S = 600.0  # a side-effect call waits this long for an admin's confirmation


def tool_calls_today(day: str, group_id: int) -> str:
    """The group's MCP tool calls of a local day (its `[tools.mcp] daily_calls` budget),
    whichever account of the deployment made them."""
    return f"{TOOLS_PREFIX}:calls:{day}:{group_id}"


def tool_pending(bot_id: int, group_id: int, code: str = "") -> str:
    """A side-effect tool call waiting for an admin (`code` "": the group's prefix)."""
    return f"{TOOLS_PREFIX}:pending:{bot_id}:{group_id}:{code}"


def tool_pending_claim(bot_id: int, group_id: int, code: str) -> str:
    """Claimed once: the pending call was confirmed or refused (never run twice)."""
    return f"{TOOLS_PREFIX}:decided:{bot_id}:{group_id}:{code}"


# -- cost guard (product.llm.cost) -----------------------------------------------------------
COST_PREFIX = "cost"
COST_DAY_TTL_S = 2 * DAY_S  # per-day counters outlive their local day
COST_MEMBER_TTL_MARGIN_S = 60.0  # a member's bucket outlives its refill / notice window


def cost_scope(group_id: int) -> str:
    """A group's budget scope (group 0: the private chats). Shared by every account of the
    deployment in the group: two accounts spend one daily budget."""
    return f"group:{group_id}"


def cost_use(day: str, scope: str, kind: str, unit: str) -> str:
    """Today's `calls` / `tokens` of `kind` (chat, vision) in a scope (`all` or group:<id>)."""
    return f"{COST_PREFIX}:use:{day}:{scope}:{kind}:{unit}"


def cost_seeded(day: str, scope: str) -> str:
    """Claimed once a day per scope: the counters were seeded from the usage ledger."""
    return f"{COST_PREFIX}:seeded:{day}:{scope}"


def cost_limited(day: str, scope: str) -> str:
    return f"{COST_PREFIX}:limited:{day}:{scope}"


def cost_limited_members(day: str, scope: str) -> str:
    return f"{COST_PREFIX}:limited_members:{day}:{scope}"


def cost_once(day: str, what: str) -> str:
    """Claimed once a day: `what` is `cost_warning(…)` or `cost_trip(…)`."""
    return f"{COST_PREFIX}:once:{day}:{what}"


def cost_warning(scope: str | None, what: str) -> str:
    """`what` of a day's budget warning; scope None: the deployment-wide budget."""
    return "warn:deployment" if scope is None else f"warn:{scope}:{what}"


def cost_trip(scope: str) -> str:
    """A budget tripped (`deployment`, or a group:<id> scope)."""
    return f"trip:{scope}"


def cost_notices(day: str) -> str:
    return f"{COST_PREFIX}:notices:{day}"


def cost_member(user_id: int) -> str:
    """A QQ user's rate-limit bucket: one per user across every group, their private chat and
    every account of the deployment, so moving to a DM or another group does not reset it."""
    return f"{COST_PREFIX}:member:{user_id}"


def cost_conversation(day: str, user_id: int) -> str:
    """A user's conversation turns on one China day (`cost.member.conversation_daily_turns`),
    counted across groups and private chat like the bucket."""
    return f"{COST_PREFIX}:conversation:{day}:{user_id}"


def memory_generation(scope: str) -> str:
    """The cache generation of one memory scope (bumped by every write)."""
    return f"memory:gen:{scope}"


def memory_recall_page(scope: str, user_id: int) -> str:
    """int: the page of "你记得我什么" last shown to a member ("下一页" steps from it)."""
    return f"memory:page:{scope}:{user_id}"


LEARNING_SWEEP_LOCK = "learning:sweep_lock"  # one group-insight sweep at a time


def console_login_failures(client: str) -> str:
    return f"console:login_failures:{client}"


def console_revoked(sid: str) -> str:
    """A console session logged out before its expiry (a saved cookie must not come back)."""
    return f"console:revoked:{sid}"


# -- pipeline state (product.llm.turn_extras) ---------------------------------------------
def kb_turn(bot_id: int, group_id: int) -> str:
    """The group's turn counter (knowledge placeholders' per-turn activation)."""
    return f"kb:turn:{bot_id}:{group_id}"


def member(bot_id: int, group_id: int, user_id: int) -> str:
    return f"{bot_id}:{group_id}:{user_id}"


def merge_parked(bot_id: int, group_id: int, user_id: int) -> str:
    return f"merge:{member(bot_id, group_id, user_id)}"


def merge_lines(bot_id: int, group_id: int, user_id: int) -> str:
    return f"lines:{member(bot_id, group_id, user_id)}"


def freshness(name: str, bot_id: int, group_id: int, user_id: int) -> str:
    """`name`: `addressed` (the member's recent @s with their event times) or `answered`
    (their one short reply)."""
    return f"fresh:{name}:{member(bot_id, group_id, user_id)}"


def bot_reply(bot_id: int, group_id: int, message_id: int) -> str:
    return f"botreply:{bot_id}:{group_id}:{message_id}"


def bot_reply_index(bot_id: int) -> str:
    return f"botreply-index:{bot_id}"


def upload(bot_id: int, group_id: int, user_id: int) -> str:
    return f"upload:{member(bot_id, group_id, user_id)}"


def sticker_sent(bot_id: int, group_id: int, message_id: int) -> str:
    return f"sticker:sent:{bot_id}:{group_id}:{message_id}"


def learning_generation(group_id: int) -> str:
    """Bumped when a group's learning changed (every account of the group reloads it)."""
    return f"learning:gen:{group_id}"


def memory_extraction(name: str, bot_id: int, group_id: int, user_id: int = 0) -> str:
    """`name`: `pending`, `lock`, `last`, `cursor` or `report`; a private chat (group 0) has
    its own per user (`…:{bot}:p{user}`), so one friend's chat never waits on another's."""
    chat = f"p{user_id}" if not group_id else str(group_id)
    return f"memory:extract:{name}:{bot_id}:{chat}"


def worldbook_state(bot_id: int, group_id: int) -> str:
    return f"worldbook:state:{bot_id}:{group_id}"


def worldbook_turn(bot_id: int, group_id: int) -> str:
    return f"worldbook:turn:{bot_id}:{group_id}"


def session_summary(suffix: str, bot_id: int, group_id: int, user_id: int) -> str:
    return f"session_summary:{suffix}:{member(bot_id, group_id, user_id)}"


# -- several accounts in one group (turn.parts.accounts) ------------------------------------
ANSWER_CLAIM_TTL_S = 600.0  # outlives an addressed line's cooldown retries and its reply


def answer_claim(group_id: int, line_key: str) -> str:
    """Claimed by the one account that answers a group line several accounts may answer
    (`pallas.routing.accounts`); `line_key` is the same for every account's copy
    (`pallas.core.lines`), so the claim holds across accounts and, on Redis, processes."""
    return f"answer:{group_id}:{line_key}"


# -- the deployment's accounts across processes (core.accounts) -----------------------------
ACCOUNTS_LIVE = "accounts:live"  # bounded list of {"id", "t"}: each process's connected ids
ACCOUNTS_LIVE_TTL_S = 35.0  # an account not announced for this long is gone
ACCOUNTS_LIVE_MAXLEN = 512  # processes × accounts × announcements kept within the TTL


__all__ = [
    "ACCOUNTS_LIVE",
    "ACCOUNTS_LIVE_MAXLEN",
    "ACCOUNTS_LIVE_TTL_S",
    "ANSWER_CLAIM_TTL_S",
    "COST_DAY_TTL_S",
    "COST_MEMBER_TTL_MARGIN_S",
    "COST_PREFIX",
    "LEARNING_SWEEP_LOCK",
    "NAMESPACES",
    "ROUTE_KEY_NAMES",
    "ROUTE_PREFIX",
    "ROUTE_UNPROMPTED_TTL_S",
    "Namespace",
    "RouteKeys",
    "answer_claim",
    "bot_reply",
    "bot_reply_index",
    "console_login_failures",
    "console_revoked",
    "cost_limited",
    "cost_limited_members",
    "cost_member",
    "cost_notices",
    "cost_once",
    "cost_scope",
    "cost_seeded",
    "cost_trip",
    "cost_use",
    "cost_warning",
    "freshness",
    "kb_turn",
    "learning_generation",
    "memory_extraction",
    "memory_generation",
    "memory_recall_page",
    "merge_lines",
    "merge_parked",
    "route_recent_lines_ttl",
    "route_scope",
    "route_turn_ttl",
    "session_summary",
    "sticker_sent",
    "upload",
    "worldbook_state",
    "worldbook_turn",
]


# -- voice (features.voice.service) ----------------------------------------------------------
VOICE_DAY_TTL_S = 2 * DAY_S  # per-day counters outlive their local day


def voice_use(day: str, group_id: int, unit: str) -> str:
    """A group's speech of a local day: `unit` "chars" synthesised or "calls" made (its
    `[voice] daily_chars` / `daily_calls`), whichever account of the deployment spoke."""
    return f"voice:use:{day}:{group_id}:{unit}"


def voice_member(day: str, group_id: int, user_id: int) -> str:
    """A member's spoken "<名字>说 …" commands of a local day (`[voice.command] member_daily`)."""
    return f"voice:member:{day}:{group_id}:{user_id}"


# -- providers (providers.breaker) ------------------------------------------------------------
def breaker(task: str, endpoint: str) -> str:
    """One endpoint's circuit breaker for a task (`BreakerState` as JSON)."""
    return f"provider:breaker:{task}:{endpoint}"
