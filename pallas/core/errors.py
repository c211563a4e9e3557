"""The root of every exception Pallas defines, and its few kinds.

`PallasError` is the one base: `except PallasError` catches every failure the project raises
on purpose, and nothing from Python or a library. Its children name the kind of failure, so a
caller that only cares about the kind (the CLI turning a storage failure into exit code 1, a
page showing a configuration problem) can catch the kind. Each project exception inherits from
the kind that fits and keeps its own name, module and raise sites:

- `ConfigError` — configuration (a group file, a console edit, a config value) is invalid;
- `InvalidInput` — input from outside (a OneBot frame, a worldbook file, a member's
  expression) is refused;
- `StorageError` — the database or the shared state store cannot do what was asked;
- `ProviderError` — an outside service Pallas calls (a TTS service, an MCP server) failed or
  cannot be used now;
- `PermissionDenied` — the caller may not do this (not logged in to the console).

A class whose meaning fits none of these descends from `PallasError` directly
(`CoreProcessorError`: any failure of a core prompt processor, which aborts the turn).

A project exception keeps a builtin base (`ValueError` …) as a second base only where a caller
outside Pallas's own `except` clauses depends on it — e.g. pydantic turns only a `ValueError`
raised in a validator into a `ValidationError` (`InvalidPoolName`).
`tests/unit/core/test_errors.py` checks that every exception class under `pallas/` descends
from `PallasError`. Failures that are part of a normal answer (a routing decision's reason, a
completion's `LLMError`, a send's result) are values, not exceptions: docs/architecture.md,
"Errors", lists them.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "InvalidInput",
    "PallasError",
    "PermissionDenied",
    "ProviderError",
    "StorageError",
]


class PallasError(Exception):
    """Base of every exception defined by Pallas."""


class ConfigError(PallasError):
    """Configuration is invalid: a file, a console edit or one value."""


class InvalidInput(PallasError):
    """Input from outside Pallas (a frame, a file, a member's text) is refused."""


class StorageError(PallasError):
    """The database or the shared state store cannot do what was asked."""


class ProviderError(PallasError):
    """An outside service Pallas calls failed or cannot be used now."""


class PermissionDenied(PallasError):
    """The caller may not do this."""
