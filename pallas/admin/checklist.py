"""The first-run checklist: what a fresh deployment still lacks before the bot answers.

Pure: `first_run_checklist(facts)` turns what the running bot knows (`SetupFacts`) into items,
each green or red with the reason and the one action that fixes it. The console's 状态 page
shows it at the top and `/pallas status` shows it to a superuser; both hide it when every item
is green. A fact the caller cannot know (`None`) leaves its item out: `/pallas status` arrives
through a connected account, so it never asks whether one is connected.
"""

from __future__ import annotations

from dataclasses import dataclass

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
ONEBOT_PATH = "/onebot/v11/ws"


@dataclass(frozen=True, slots=True)
class SetupFacts:
    key_set: bool  # a model API key is in force (replies can be on)
    model_answers: bool | None = None  # the chat model's last call: ok / failed / no call yet
    model_error_zh: str = ""  # why the last call failed, in Chinese
    accounts_online: int | None = None  # QQ accounts connected now (None: not asked)
    superusers: int | None = None  # how many superusers are configured
    host: str | None = None  # where the bot listens (HOST)
    port: int = 8080
    access_token: str | None = None  # the OneBot access token ("" = unset; None: not known)
    groups_seen: int | None = None  # groups with at least one stored message


@dataclass(frozen=True, slots=True)
class CheckItem:
    key: str  # model / account / superuser / token / group
    ok: bool
    title: str
    reason: str  # what is so, in words
    action: str = ""  # the one thing to do (only on a red item)
    steps: tuple[tuple[str, str], ...] = ()  # (OneBot implementation, what to fill in)


@dataclass(frozen=True, slots=True)
class Checklist:
    items: tuple[CheckItem, ...]
    replies_on: bool
    headline: str  # said first: whether the bot replies, and why not

    @property
    def done(self) -> bool:
        return all(item.ok for item in self.items)

    @property
    def missing(self) -> int:
        return sum(1 for item in self.items if not item.ok)


def reverse_ws_url(host: str, port: int) -> str:
    """What a OneBot implementation on the same machine dials (0.0.0.0 is not dialable)."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"ws://{shown}:{port}{ONEBOT_PATH}"


def listens_beyond_localhost(host: str) -> bool:
    return host.strip().lower() not in LOOPBACK_HOSTS


def token_hint(token: str) -> str:
    """What to type as the token, without the token itself: the checklist is shown in the
    console and by `/pallas status` in a group chat, and a secret is never shown back."""
    if not token:
        return "（不填）"
    tail = f"，末 4 位 {token[-4:]}" if len(token) >= 12 else ""
    return f"你设置的 ONEBOT_ACCESS_TOKEN{tail}"


def onebot_steps(url: str, token: str) -> tuple[tuple[str, str], ...]:
    """Where the URL and the token go in each OneBot implementation."""
    shown = token_hint(token)
    return (
        (
            "NapCat",
            f"WebUI → 网络配置 → 新建「WebSocket 客户端」：URL 填 {url}，"
            f"Token 填 {shown}，启用后保存",
        ),
        (
            "Lagrange.OneBot",
            f'appsettings.json 的 "Implementations" 里加一项 "Type": "ReverseWebSocket"，'
            f"地址 {url}（Host / Port / Suffix 分开填），AccessToken 填 {shown}，重启 Lagrange",
        ),
        ("LLOneBot", f"设置 → 启用反向 WebSocket，地址填 {url}，Access Token 填 {shown}，保存"),
    )  # fmt: skip


def _model_item(facts: SetupFacts) -> CheckItem:
    title = "模型已配置并能应答"
    if not facts.key_set:
        return CheckItem("model", False, title, "还没有模型 API Key，机器人只记录消息、不回复",
                         "到「模型」页选服务商、填 API Key，点「测试连接」后「保存」")  # fmt: skip
    if facts.model_answers is False:
        why = facts.model_error_zh or "调用失败"
        return CheckItem("model", False, title, f"最近一次调用失败：{why}",
                         "到「模型」页点「测试连接」看原因，改好 Key 或模型名后保存")  # fmt: skip
    if facts.model_answers is None:
        return CheckItem(
            "model", True, title, "已配置 API Key，还没有调用记录（群里 @ 它一次就知道）"
        )
    return CheckItem("model", True, title, "已配置，最近一次调用成功")


def _account_item(facts: SetupFacts, online: int) -> CheckItem:
    title = "QQ 账号已连上"
    if online:
        return CheckItem("account", True, title, f"{online} 个 QQ 账号在线")
    host = facts.host or "127.0.0.1"
    url = reverse_ws_url(host, facts.port)
    token = facts.access_token or ""
    elsewhere = (
        "（OneBot 实现在别的机器或容器里时，把 127.0.0.1 换成这台机器的地址）"
        if host in ("0.0.0.0", "::", "")
        else ""
    )
    return CheckItem(
        "account",
        False,
        title,
        "没有 QQ 账号连上来",
        f"在你的 OneBot 实现里添加反向 WebSocket：地址 {url}"
        + (f"，Token 填{token_hint(token)}" if token else "，Token 不填")
        + elsewhere,
        onebot_steps(url, token),
    )


def _superuser_item(count: int) -> CheckItem:
    title = "已设置超级用户"
    if count:
        return CheckItem("superuser", True, title, f"{count} 个超级用户可以用 /pallas 管理命令")
    return CheckItem("superuser", False, title, "没有超级用户：谁也不能在 QQ 里用 /pallas 管理命令",
                     "到「模型」页填上你的 QQ 号保存，然后重启机器人"
                     '（或在 .env 里写 SUPERUSERS=["你的QQ号"]）')  # fmt: skip


def _token_item(host: str, token: str) -> CheckItem:
    title = "OneBot 访问令牌"
    if token:
        return CheckItem("token", True, title, "已设置 ONEBOT_ACCESS_TOKEN，没有它的连接会被拒绝")
    if not listens_beyond_localhost(host):
        return CheckItem("token", True, title, f"只监听本机（{host}），不设令牌也只有本机能连")
    return CheckItem(
        "token",
        False,
        title,
        f"监听 {host} 却没有令牌：能连到这台机器的人都能冒充 QQ 账号",
        "到「模型」页生成 OneBot 令牌（或在 .env 里设置 ONEBOT_ACCESS_TOKEN），"
        "OneBot 实现里填同一串，然后重启",
    )


def _group_item(groups: int) -> CheckItem:
    title = "已见到群消息"
    if groups:
        return CheckItem("group", True, title, f"已记录 {groups} 个群的消息")
    return CheckItem("group", False, title, "还没有收到任何群消息",
                     "把机器人的 QQ 号拉进一个群，在群里随便说一句话")  # fmt: skip


def first_run_checklist(facts: SetupFacts) -> Checklist:
    """Every item the facts allow, in the order an operator fixes them."""
    items = [_model_item(facts)]
    if facts.accounts_online is not None:
        items.append(_account_item(facts, facts.accounts_online))
    if facts.superusers is not None:
        items.append(_superuser_item(facts.superusers))
    if facts.host is not None and facts.access_token is not None:
        items.append(_token_item(facts.host, facts.access_token))
    if facts.groups_seen is not None:
        items.append(_group_item(facts.groups_seen))
    replies_on = facts.key_set
    if not replies_on:
        headline = "回复已关闭：还没有配置模型 API Key，机器人只记录消息、不回复。"
    elif facts.model_answers is False:
        headline = "回复已开启，但模型最近一次调用失败：群里 @ 它可能没有回应。"
    else:
        headline = "回复已开启。"
    return Checklist(tuple(items), replies_on, headline)


def checklist_lines(checklist: Checklist) -> list[str]:
    """The checklist as chat lines (`/pallas status`); [] when every item is green."""
    if checklist.done:
        return []
    lines = [checklist.headline, f"上手清单（还差 {checklist.missing} 项）："]
    for item in checklist.items:
        mark = "✅" if item.ok else "❌"
        line = f"{mark} {item.title}：{item.reason}"
        if not item.ok and item.action:
            line += f"；{item.action}"
        lines.append(line)
    return lines


__all__ = [
    "CheckItem",
    "Checklist",
    "SetupFacts",
    "checklist_lines",
    "first_run_checklist",
    "listens_beyond_localhost",
    "onebot_steps",
    "reverse_ws_url",
]
