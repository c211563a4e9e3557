"""`[svars]` group config: the declared session variables (name, type, default, bounds, scope)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

VarType = Literal["int", "float", "str", "bool"]
VarScope = Literal["group", "member"]
Scalar = bool | int | float | str

NAME_RE = re.compile(r"^[A-Za-z_\u4e00-\u9fff][A-Za-z0-9_\u4e00-\u9fff]{0,31}$")


class SvarDef(BaseModel):
    """One declared variable; `min` / `max` clamp numeric results (None = unbounded)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    label: str = ""  # shown in $[svars::table] / list instead of the name
    type: VarType = "int"
    default: Scalar = 0
    min: float | None = None
    max: float | None = None
    scope: VarScope = "group"  # "member": one value per member (the speaker by default)
    visible: bool = True  # False: kept out of $[svars::table] / list (still $[svars::name])
    max_len: int = Field(default=200, ge=1, le=2000)  # str values are cut to this

    @model_validator(mode="after")
    def _check(self) -> SvarDef:
        if not NAME_RE.match(self.name):
            raise ValueError(f"invalid variable name {self.name!r}")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"variable {self.name!r}: min > max")
        if self.type in ("int", "float") and (
            isinstance(self.default, bool) or not isinstance(self.default, int | float)
        ):
            raise ValueError(f"variable {self.name!r}: default must be a number")
        if self.type == "bool" and not isinstance(self.default, bool):
            raise ValueError(f"variable {self.name!r}: default must be true/false")
        if self.type == "str" and not isinstance(self.default, str):
            raise ValueError(f"variable {self.name!r}: default must be a string")
        return self

    @property
    def display(self) -> str:
        return self.label or self.name


class SvarConfig(BaseModel):
    """Session variables of a group. Nothing happens until variables are declared."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    variables: list[SvarDef] = Field(default_factory=list)  # declared session variables
    # apply <svar> tags from the model's answer (False: tags are still stripped, never applied)
    apply_from_answer: bool = True
    # a 【会话变量】 section with the current values and the tag syntax, for the model
    state_section: bool = True
    # svar changes applied per answer at most
    max_ops_per_answer: int = Field(default=16, ge=0, le=200)

    @model_validator(mode="after")
    def _unique(self) -> SvarConfig:
        names = [v.name for v in self.variables]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate session variable names: {names}")
        return self

    def get(self, name: str) -> SvarDef | None:
        return next((v for v in self.variables if v.name == name), None)
