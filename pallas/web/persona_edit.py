"""Console edits of persona packs (`config/personas/<name>.toml`): validated, atomic, comments kept.

A change is checked by `PersonaPack` (the model the bot's `PersonaStore` loads with) before
anything is written; a rejected one raises `ConfigRejected` with a Chinese reason. The preview
runs the context layer's own guard / persona / self-identity processors and system-prompt
assembler over the pack, so what it shows is what the model is sent.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tomlkit
from pydantic import ValidationError
from tomlkit.items import Table

from pallas.config import GroupConfig
from pallas.context.chat_prompt import draft_request
from pallas.context.pipeline import PromptDraft
from pallas.context.processor_inputs import ChatTurnContext
from pallas.context.processors import GuardProcessor, PersonaProcessor, SelfIdentityProcessor
from pallas.features.persona import PersonaPack
from pallas.web.config_edit import ConfigRejected, write_atomic

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# the pack's top-level text fields the form edits, with their Chinese labels
TEXT_FIELDS: tuple[tuple[str, str], ...] = (
    ("name", "名字"),
    ("bot_label", "机器人自己在群聊记录里的称呼"),
    ("other_bot_label", "同部署的其他机器人的称呼"),
    ("assistant_label", "群环境摘录里机器人的称呼"),
    ("quote_label", "成员引用机器人时的标题"),
)
SECTION_FIELDS: tuple[tuple[str, str], ...] = (
    ("base", "人设正文（sections.base）"),
    ("self_identity", "自我标识（sections.self_identity，留空则按登录昵称生成）"),
)
LABELS = dict(TEXT_FIELDS) | {f"sections.{k}": v for k, v in SECTION_FIELDS} | {"aliases": "别名"}

_REASONS_ZH = {
    "string_too_short": "不能为空",
    "string_too_long": "太长",
    "string_type": "应该是文字（用引号括起来）",
    "list_type": '应该是列表，如 ["帕拉斯", "牛牛"]',
    "extra_forbidden": "不认识的键（人设文件里没有这一项）",
    "dict_type": "应该是一个表",
    "bool_type": "应该是 true 或 false",
    "int_type": "应该是整数",
}


@dataclass(frozen=True, slots=True)
class PersonaRow:
    file: str  # the name groups use: `persona = "<file>"`
    name: str
    aliases: tuple[str, ...]
    groups: tuple[int, ...]  # groups whose own config names this persona
    default: bool  # groups that name none use it
    error: str  # why the file does not load ("" when it does)


def persona_path(personas_dir: Path, name: str) -> Path:
    """The pack's file; `ConfigRejected` for a name that is not a plain file name."""
    if not NAME.match(name):
        raise ConfigRejected(f"人设名「{name}」只能由字母、数字、- 和 _ 组成")
    return personas_dir / f"{name}.toml"


def describe_zh(error: ValidationError) -> str:
    """A pydantic error in Chinese: the field's label, what is wrong, the value typed."""
    parts = []
    for item in error.errors():
        loc = ".".join(str(p) for p in item.get("loc", ()))
        label = LABELS.get(loc, loc or "文件")
        reason = _REASONS_ZH.get(str(item.get("type")), str(item.get("msg")))
        if item.get("type") == "string_too_long":
            reason += f"（最多 {item.get('ctx', {}).get('max_length')} 字）"
        parts.append(
            f"{label}（{loc}）：{reason}" if loc and label != loc else f"{label}：{reason}"
        )
    return "；".join(parts)


def validate_persona_text(text: str) -> PersonaPack:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigRejected(f"不是合法的 TOML：{exc}") from exc
    try:
        return PersonaPack.model_validate(data)
    except ValidationError as exc:
        raise ConfigRejected(describe_zh(exc)) from exc


def read_persona(personas_dir: Path, name: str) -> str:
    path = persona_path(personas_dir, name)
    if not path.is_file():
        raise ConfigRejected(f"人设「{name}」不存在")
    return path.read_text(encoding="utf-8")


def save_persona_text(personas_dir: Path, name: str, text: str) -> PersonaPack:
    """Validate the whole file, then replace it atomically (only an installed persona)."""
    read_persona(personas_dir, name)
    pack = validate_persona_text(text)
    write_atomic(persona_path(personas_dir, name), text)
    return pack


def split_aliases(text: str) -> list[str]:
    """`帕拉斯, 牛牛`, `帕拉斯、牛牛` or one per line → the alias list."""
    return [a.strip() for a in re.split(r"[,，、\n]", text) if a.strip()]


def form_text(current: str, form: Mapping[str, str]) -> tuple[str, list[str]]:
    """The file with the form's fields written in (tomlkit: comments and other keys kept),
    and the keys whose value changed."""
    doc = tomlkit.parse(current)
    changed: list[str] = []

    def put(table: Any, key: str, value: Any, dotted: str) -> None:
        old = table.get(key)
        if (old.unwrap() if hasattr(old, "unwrap") else old) != value:
            changed.append(dotted)
            table[key] = (
                tomlkit.string(value, multiline="\n" in value) if isinstance(value, str) else value
            )

    for key, _ in TEXT_FIELDS:
        put(doc, key, form.get(key, "").strip(), key)
    put(doc, "aliases", split_aliases(form.get("aliases", "")), "aliases")
    sections = doc.get("sections")
    if not isinstance(sections, Table):
        sections = tomlkit.table()
        doc["sections"] = sections
    for key, _ in SECTION_FIELDS:
        value = form.get(key, "").replace("\r\n", "\n").strip()
        put(sections, key, f"\n{value}\n" if value else "", f"sections.{key}")
    return tomlkit.dumps(doc), changed


def list_personas(personas_dir: Path, groups_dir: Path) -> list[PersonaRow]:
    users: dict[str, list[int]] = {}
    for path in sorted(groups_dir.glob("*.toml")):
        if not path.stem.isdigit():
            continue
        try:
            name = tomllib.loads(path.read_text(encoding="utf-8")).get("persona")
        except (OSError, tomllib.TOMLDecodeError):
            continue
        if isinstance(name, str):
            users.setdefault(name, []).append(int(path.stem))
    default = _default_persona(groups_dir)
    rows = []
    for path in sorted(personas_dir.glob("*.toml")):
        groups = tuple(users.get(path.stem, ()))
        is_default = path.stem == default
        try:
            pack = validate_persona_text(path.read_text(encoding="utf-8"))
        except (ConfigRejected, OSError) as exc:
            rows.append(PersonaRow(path.stem, "", (), groups, is_default, str(exc)))
            continue
        rows.append(PersonaRow(path.stem, pack.name, tuple(pack.aliases), groups, is_default, ""))
    return rows


def _default_persona(groups_dir: Path) -> str:
    """The persona of groups that do not name one (default.toml, else the built-in)."""
    try:
        data = tomllib.loads((groups_dir / "default.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        data = {}
    name = data.get("persona")
    return name if isinstance(name, str) else str(GroupConfig.model_fields["persona"].default)


async def preview_system_prompt(pack: PersonaPack, nickname: str = "") -> str:
    """The head of the system prompt this pack produces (guard, persona, self-identity), by the
    chat pipeline's own processors and assembler."""
    ctx = ChatTurnContext(
        bot_id=0,
        group_id=0,
        user_id=0,
        now=datetime.now(UTC),
        current_text="",
        persona_name=pack.name,
        persona_text=pack.sections.base,
        self_identity_text=pack.sections.self_identity,
        bot_nickname=nickname or pack.name,
        bot_label=pack.bot_label,
        other_bot_label=pack.other_bot_label,
        assistant_label=pack.assistant_label,
    )
    draft = PromptDraft()
    for processor in (GuardProcessor(), PersonaProcessor(), SelfIdentityProcessor()):
        draft = await processor.process(draft, ctx)
    request = draft_request(draft)
    return str(request[0]["content"]) if request else ""
