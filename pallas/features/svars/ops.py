"""Pure session-variable logic: `<svar …/>` tags in an answer, and applying ops with clamping.

Only ASCII `<svar …>` tags are ops. The variable processor rewrites `<svar` in member text to
`〈svar` (a CJK angle bracket: the prompt guard folds full-width `＜` back to `<`, not this one),
so a tag a member typed (and the model echoed) is stripped but never applied. Every function
here is pure: values in, frozen results with a `reason` out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pallas.context.prompt_guard import neutralise_member_tags as neutralise_member_tags
from pallas.features.svars.config import Scalar, SvarConfig, SvarDef

# (member_id, name); member_id 0 = a group-scope variable
VarKey = tuple[int, str]

_TAG_RE = re.compile(r"([<＜〈])\s*svar\b([^<>＜＞〈〉]*?)/?\s*[>＞〉]", re.IGNORECASE)
_CLOSE_RE = re.compile(r"[<＜〈]\s*/\s*svar\s*[>＞〉]", re.IGNORECASE)
_ATTR_RE = re.compile(r"""([A-Za-z_]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'/>]+))""")
_BLANK_LINES = re.compile(r"\n{2,}")
MEMBER_NEUTRAL = "〈svar"

OP_ALIASES: Mapping[str, str] = {
    "=": "set",
    "set": "set",
    "assign": "set",
    "+": "+",
    "add": "+",
    "inc": "+",
    "-": "-",
    "sub": "-",
    "dec": "-",
    "*": "*",
    "mul": "*",
    "/": "/",
    "div": "/",
}
_TRUE = {"true", "1", "yes", "on", "是", "真"}
_FALSE = {"false", "0", "no", "off", "否", "假"}


@dataclass(frozen=True, slots=True)
class SvarOp:
    name: str
    op: str  # raw op as written; normalised by `apply_ops`
    value: str
    user_id: int | None = None  # member-scope target; None = the member being answered
    raw: str = ""


@dataclass(frozen=True, slots=True)
class SvarChange:
    name: str
    member_id: int
    op: str
    operand: str
    old: Scalar
    new: Scalar
    clamped: bool = False


@dataclass(frozen=True, slots=True)
class SvarRejection:
    raw: str
    reason: str


@dataclass(frozen=True, slots=True)
class ApplyResult:
    values: Mapping[VarKey, Scalar]  # only the keys that changed, final values
    changes: tuple[SvarChange, ...]
    rejected: tuple[SvarRejection, ...]
    reason: str  # "applied" | "no_ops" | "all_rejected"


@dataclass(frozen=True, slots=True)
class OpOutcome:
    value: Scalar | None
    clamped: bool = False
    error: str = ""


def _attrs(body: str) -> dict[str, str]:
    return {
        m.group(1).lower(): next(g for g in m.groups()[1:] if g is not None)
        for m in _ATTR_RE.finditer(body)
    }


def split_svar_tags(text: str) -> tuple[str, tuple[SvarOp, ...]]:
    """The answer without any svar tag, and the ops of its ASCII `<svar …/>` tags, in order."""
    ops: list[SvarOp] = []

    def take(match: re.Match[str]) -> str:
        if match.group(1) == "<":
            attrs = _attrs(match.group(2))
            user = attrs.get("user") or attrs.get("member") or ""
            ops.append(
                SvarOp(
                    name=attrs.get("name", "").strip(),
                    op=attrs.get("op", "set").strip().lower(),
                    value=attrs.get("value", "").strip(),
                    user_id=int(user) if user.isdigit() else None,
                    raw=match.group(0)[:200],
                )
            )
        return ""

    cleaned = _CLOSE_RE.sub("", _TAG_RE.sub(take, text))
    if cleaned != text:
        lines = [line.rstrip() for line in cleaned.split("\n")]
        cleaned = _BLANK_LINES.sub("\n", "\n".join(lines)).strip()
    return cleaned, tuple(ops)


def strip_svar_tags(text: str) -> str:
    return split_svar_tags(text)[0] if "svar" in text.lower() else text


def coerce(var: SvarDef, value: object) -> Scalar:
    """A stored / configured value as the variable's type (the default when it does not fit)."""
    outcome = _parse_operand(var, str(value) if not isinstance(value, str) else value)
    if outcome is None:
        return var.default
    return _clamp(var, outcome)[0]


def _parse_operand(var: SvarDef, text: str) -> Scalar | None:
    text = text.strip()
    if var.type == "str":
        return text[: var.max_len]
    if var.type == "bool":
        low = text.lower()
        return True if low in _TRUE else False if low in _FALSE else None
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _clamp(var: SvarDef, value: Scalar) -> tuple[Scalar, bool]:
    """Numbers kept within [min, max] (the flag says a bound applied); ints round half up."""
    if var.type not in ("int", "float") or isinstance(value, bool | str):
        return value, False
    number = float(value)
    if var.type == "int":
        number = float(math.floor(number + 0.5))  # round half up, not banker's rounding
    bounded = number
    if var.min is not None:
        bounded = max(bounded, var.min)
    if var.max is not None:
        bounded = min(bounded, var.max)
    hit = bounded != number
    if var.type == "int":
        return int(bounded), hit
    return bounded, hit


def apply_op(var: SvarDef, current: Scalar, op: str, operand: str) -> OpOutcome:
    """One op on one value: the new (clamped) value, or an error code."""
    kind = OP_ALIASES.get(op.strip().lower())
    if kind is None:
        return OpOutcome(None, error="unknown_op")
    parsed = _parse_operand(var, operand)
    if parsed is None:
        return OpOutcome(None, error="bad_value")
    if kind == "set":
        value, clamped = _clamp(var, parsed)
        return OpOutcome(value, clamped)
    if var.type == "str":
        if kind != "+":
            return OpOutcome(None, error="op_not_for_text")
        return OpOutcome((str(current) + str(parsed))[: var.max_len])
    if var.type == "bool":
        return OpOutcome(None, error="op_not_for_bool")
    base, number = float(current), float(parsed)
    if kind == "/" and number == 0:
        return OpOutcome(None, error="division_by_zero")
    result = {"+": base + number, "-": base - number, "*": base * number, "/": base / number}[kind]
    if not math.isfinite(result):
        return OpOutcome(None, error="not_finite")
    value, clamped = _clamp(var, result)
    return OpOutcome(value, clamped)


def var_key(var: SvarDef, speaker_id: int, user_id: int | None = None) -> VarKey:
    if var.scope == "group":
        return (0, var.name)
    return (user_id if user_id is not None else speaker_id, var.name)


def current_value(var: SvarDef, values: Mapping[VarKey, Scalar], key: VarKey) -> Scalar:
    return values[key] if key in values else coerce(var, var.default)


def apply_ops(
    config: SvarConfig,
    values: Mapping[VarKey, Scalar],
    ops: Iterable[SvarOp],
    *,
    speaker_id: int,
) -> ApplyResult:
    """Apply `ops` in order over `values` (stored values; missing keys are at their default)."""
    ops = list(ops)
    if not ops:
        return ApplyResult({}, (), (), "no_ops")
    working = dict(values)
    changed: dict[VarKey, Scalar] = {}
    changes: list[SvarChange] = []
    rejected: list[SvarRejection] = []
    for index, op in enumerate(ops):
        if index >= config.max_ops_per_answer:
            rejected.append(SvarRejection(op.raw, "too_many_ops"))
            continue
        var = config.get(op.name)
        if var is None:
            rejected.append(SvarRejection(op.raw, "undeclared_variable"))
            continue
        if var.scope == "member" and (op.user_id if op.user_id is not None else speaker_id) <= 0:
            rejected.append(SvarRejection(op.raw, "no_member"))
            continue
        key = var_key(var, speaker_id, op.user_id)
        old = current_value(var, working, key)
        outcome = apply_op(var, old, op.op, op.value)
        if outcome.error or outcome.value is None:
            rejected.append(SvarRejection(op.raw, outcome.error or "no_value"))
            continue
        working[key] = changed[key] = outcome.value
        normal = OP_ALIASES.get(op.op.strip().lower(), op.op)
        changes.append(
            SvarChange(var.name, key[0], normal, op.value, old, outcome.value, outcome.clamped)
        )
    reason = "applied" if changes else "all_rejected"
    return ApplyResult(changed, tuple(changes), tuple(rejected), reason)
