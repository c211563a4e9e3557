"""Every exception class Pallas defines descends from `PallasError` (pallas/core/errors.py)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from pydantic import ValidationError

import pallas
from pallas.config import GroupConfig
from pallas.core.errors import PallasError

# modules that cannot be imported on their own: alembic runs them inside its own context
_NOT_IMPORTABLE = ("pallas.core.db.migrations",)
# exception classes under pallas/ that must not descend from PallasError, with the reason
_ALLOWED: dict[str, str] = {}


def _import_all() -> None:
    for info in pkgutil.walk_packages(pallas.__path__, "pallas."):
        name = info.name
        if name.endswith(".__main__") or name.startswith(_NOT_IMPORTABLE):
            continue
        importlib.import_module(name)


def _subclasses(cls: type[BaseException]) -> set[type[BaseException]]:
    found: set[type[BaseException]] = set()
    stack = [cls]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                stack.append(sub)
    return found


def test_every_pallas_exception_descends_from_pallas_error() -> None:
    _import_all()
    ours = {
        f"{c.__module__}.{c.__qualname__}": c
        for c in _subclasses(BaseException)
        if c.__module__ == "pallas" or c.__module__.startswith("pallas.")
    }
    assert len(ours) > 10  # the walk did import the project
    stray = sorted(
        name for name, c in ours.items() if not issubclass(c, PallasError) and name not in _ALLOWED
    )
    assert stray == [], "derive these from a kind in pallas.core.errors"


def test_a_bad_pool_name_is_still_a_config_validation_error() -> None:
    # InvalidPoolName keeps ValueError as a second base for this: pydantic converts only that
    with pytest.raises(ValidationError, match="invalid shared memory pool name"):
        GroupConfig.model_validate({"memory": {"shared_pools": ["group:1"]}})
