"""Arithmetic: "算一下 12*34+5", "计算 (3+4)/2", "1+2*3等于多少", "2^10是多少", "100/7=?",
"3×4÷2=？".

Fires only when the whole message is an arithmetic expression (digits, + - * / // % ^ ** × ÷ x,
parentheses; full-width forms are folded) with at least one operator between operands, together
with a calc verb before it (算 / 算一下 / 计算 / calc / what is …) or a question after it
(等于多少 / 是多少 / 等于几 / =? / =). Does NOT fire on "12点见", "3个人", "我不会算数",
"1+1" alone (no question), "1+1=2" (a statement), "1/2的人是多少", nor on date- or
phone-like strings ("2026-11-29", "138-0013-8000") even with a verb.

Evaluation walks the `ast` of the expression — numbers, + - * / // % **, unary minus/plus and
parentheses only; no names, calls or attributes; never `eval()`. Guards: expression ≤ 120 chars,
|exponent| ≤ 64, every intermediate |value| ≤ 1e100; division by zero → ok=False.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable

from pallas.core.errors import InvalidInput
from pallas.features.tools._text import compact_request
from pallas.features.tools.base import ToolCall, ToolEnv, ToolOutput, failure, success

MAX_EXPRESSION_CHARS = 120
MAX_EXPONENT = 64
MAX_MAGNITUDE = 1e100

_LEAD = r"(?:请|请你|你|帮我|帮忙|给我|麻烦|麻烦你|帮我们)?"
_VERB = (
    r"(?:算一下|算一算|算算|算下|计算一下|计算下|计算|算|口算|心算"
    r"|calc|calculate|compute|what\s+is|what's|whats|how\s+much\s+is)"
)
_ASK = r"(?:=|(?:=|等于|是|得|等于是|结果是)\s*(?:多少|几|啥|什么|多少来着))"
_EXPR = r"[\d.\s+\-*/×÷x^%()]+"
_REQUEST_RE = re.compile(
    rf"{_LEAD}(?P<verb>{_VERB})\s*:?\s*(?P<expr>{_EXPR}?)\s*(?P<ask>{_ASK})?"
    rf"|{_LEAD}(?P<expr2>{_EXPR}?)\s*(?P<ask2>{_ASK})"
)
# An operator between two operands (a leading minus alone is not arithmetic).
_HAS_OPERATOR_RE = re.compile(r"[\d.)]\s*(?:\*\*|//|[+\-*/×÷x^%])\s*[-+]?\s*[\d.(]")
_NOT_ARITHMETIC_RES = (
    re.compile(r"\d{4}\s*[-/.]\s*\d{1,2}\s*[-/.]\s*\d{1,2}"),  # 2026-11-29, 2026/11/29
    re.compile(r"\d{1,2}\s*[-/.]\s*\d{1,2}\s*[-/.]\s*\d{4}"),  # 11/29/2026
    re.compile(r"\+?\d+(?:\s*-\s*\d+){2,}"),  # 138-0013-8000, 1-2-3 (phone / code / date)
    re.compile(r"\+?\d{1,4}\s*-\s*\d{7,}"),  # 86-13800138000, 010-12345678
)

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
_FAILURES = {
    "too_long": f"算式太长了，最多 {MAX_EXPRESSION_CHARS} 个字符",
    "bad_expression": "表达式看不懂",
    "division_by_zero": "不能除以 0",
    "exponent_too_large": f"指数太大了，最多 {MAX_EXPONENT}",
    "too_large": "结果太大了，算不动",
    "not_real": "结果不是实数",
}


class CalcError(InvalidInput):
    """A calculation refused or failed; `reason` is one of the `_FAILURES` keys."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CalcTool:
    name = "calc"
    label = "计算"

    def match(self, text: str) -> ToolCall | None:
        compact = compact_request(text)
        found = _REQUEST_RE.fullmatch(compact)
        if found is None:
            return None
        expr = (found.group("expr") or found.group("expr2") or "").strip()
        if not _is_arithmetic(expr):
            return None
        if found.group("verb") is None and found.group("ask2") is None:
            return None
        return ToolCall(self.name, (("expression", expr),), found.group(0))

    async def run(self, call: ToolCall, env: ToolEnv) -> ToolOutput:
        expr = call.arg("expression").strip()
        try:
            value = evaluate(expr)
        except CalcError as exc:
            return failure(self, exc.reason, _FAILURES[exc.reason])
        return success(self, f"{_display(expr)} = {format_number(value)}")


def _is_arithmetic(expr: str) -> bool:
    if not expr or _HAS_OPERATOR_RE.search(expr) is None:
        return False
    return not any(p.fullmatch(expr) for p in _NOT_ARITHMETIC_RES)


def _display(expr: str) -> str:
    return re.sub(r"\s+", "", expr)


def evaluate(expr: str) -> int | float:
    """The value of an arithmetic expression, or `CalcError` (never evaluates names or calls)."""
    if len(expr) > MAX_EXPRESSION_CHARS:
        raise CalcError("too_long")
    try:
        tree = ast.parse(to_python(expr), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise CalcError("bad_expression") from exc
    try:
        return _eval(tree.body)
    except ZeroDivisionError as exc:
        raise CalcError("division_by_zero") from exc
    except (OverflowError, MemoryError) as exc:
        raise CalcError("too_large") from exc
    except RecursionError as exc:
        raise CalcError("bad_expression") from exc


def to_python(expr: str) -> str:
    """Fold the chat spellings into Python syntax: × ÷ x ^, 15% (a percent), leading zeros."""
    text = expr.replace("×", "*").replace("÷", "/").replace("x", "*").replace("^", "**")
    text = re.sub(r"(\d+(?:\.\d+)?)%(?!\s*[\d.(])", r"(\1/100)", text)
    return re.sub(r"(?<![\d.])0+(?=\d)", "", text)


def _eval(node: ast.expr) -> int | float:
    if isinstance(node, ast.Constant):
        return _checked(_number(node.value))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _checked(_UNARY[type(node.op)](_eval(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise CalcError("exponent_too_large")
        return _checked(_BINARY[type(node.op)](left, right))
    raise CalcError("bad_expression")


def _number(value: object) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalcError("bad_expression")
    return value


def _checked(value: object) -> int | float:
    if isinstance(value, complex):
        raise CalcError("not_real")
    if not isinstance(value, int | float):
        raise CalcError("bad_expression")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalcError("too_large")
    if abs(value) > MAX_MAGNITUDE:
        raise CalcError("too_large")
    return value


def format_number(value: int | float) -> str:
    """Integers exactly; floats to at most 6 decimals without trailing zeros (tiny/huge: 6 sig.)."""
    if isinstance(value, int):
        return str(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if abs(value) >= 1e15 or abs(value) < 1e-6:
        return f"{value:.6g}"
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text
