"""Lenient, error-collecting field coercion for worldbook JSON entries.

Real exports are messy: numbers as strings, 0/1 for booleans, null for "use the default",
a comma-separated string where a key list belongs. These are accepted; anything else is a
field error with the field's name. Failed fields return a harmless placeholder so the caller
can finish building and then raise once with every problem listed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0", ""}


def parse_bool(value: Any) -> bool | None:
    """bool, 0/1 or a yes/no string → bool; anything else → None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    return None


def _parse_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


class FieldReader:
    """Reads fields of one JSON object; problems are collected (shared with a parent reader)."""

    def __init__(self, raw: Mapping[str, Any], *, parent: FieldReader | None = None) -> None:
        self._raw = raw
        self._prefix = "extensions." if parent is not None else ""
        self._problems: list[str] = parent._problems if parent is not None else []

    def fail(self, name: str, message: str) -> None:
        self._problems.append(f"{self._prefix}{name}: {message}")

    def raise_if_failed(self, error_type: Callable[[str], Exception]) -> None:
        if self._problems:
            raise error_type("; ".join(self._problems))

    def _find(self, names: tuple[str, ...]) -> tuple[str, Any]:
        for name in names:
            if name in self._raw and self._raw[name] is not None:
                return name, self._raw[name]
        return names[0], None

    def raw(self, *names: str) -> Any:
        return self._find(names)[1]

    def text(self, *names: str, default: str | None = None, required: bool = False) -> str:
        name, value = self._find(names)
        if value is None:
            if required or default is None:
                self.fail(name, "missing (a string is required)")
            return default or ""
        if not isinstance(value, str):
            self.fail(name, f"must be a string, got {type(value).__name__}")
            return default or ""
        return value

    def keys(self, *names: str) -> tuple[str, ...]:
        name, value = self._find(names)
        if value is None:
            return ()
        if isinstance(value, str):
            value = value.split(",")
        if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
            self.fail(name, "must be a list of strings")
            return ()
        return tuple(k.strip() for k in value if k.strip())

    def opt_integer(self, *names: str, lo: int | None = None, hi: int | None = None) -> int | None:
        name, value = self._find(names)
        if value is None:
            return None
        number = _parse_number(value)
        if number is None or number != int(number):
            self.fail(name, f"must be an integer, got {value!r}")
            return None
        result = int(number)
        if (lo is not None and result < lo) or (hi is not None and result > hi):
            self.fail(name, f"{result} is out of range [{lo}, {hi}]")
            return None
        return result

    def integer(
        self, *names: str, default: int | None, lo: int | None = None, hi: int | None = None
    ) -> int:
        name, value = self._find(names)
        if value is None and default is None:
            self.fail(name, "missing (an integer is required)")
            return 0
        result = self.opt_integer(*names, lo=lo, hi=hi)
        if result is None:
            return default if default is not None else 0
        return result

    def number(
        self, *names: str, default: float, lo: float | None = None, hi: float | None = None
    ) -> float:
        name, value = self._find(names)
        if value is None:
            return default
        number = _parse_number(value)
        if number is None:
            self.fail(name, f"must be a number, got {value!r}")
            return default
        if (lo is not None and number < lo) or (hi is not None and number > hi):
            self.fail(name, f"{number:g} is out of range [{lo}, {hi}]")
            return default
        return number

    def opt_flag(self, *names: str) -> bool | None:
        name, value = self._find(names)
        if value is None:
            return None
        result = parse_bool(value)
        if result is None:
            self.fail(name, f"must be a boolean, got {value!r}")
        return result

    def flag(self, *names: str, default: bool) -> bool:
        result = self.opt_flag(*names)
        return default if result is None else result
