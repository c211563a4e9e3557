"""The per-group configuration model: everything an admin can tune for one group.

Built from `config/groups/default.toml` and `config/groups/<group_id>.toml` over these
embedded defaults (see `pallas.core.config_files.GroupConfigStore`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class GroupConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = True  # False: record only, never speak
    record: bool = True  # False: do not store this group's messages either
    persona: str = "pallas"  # file name under config/personas/ (without .toml)
    admins: list[int] = Field(default_factory=list)  # extra admins besides owner/admin roles
    other_bot_ids: list[int] = Field(default_factory=list)  # same-deployment bots ("别的牛")
