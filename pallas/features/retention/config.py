"""`[retention]`: how long a group's rows are kept (`config/groups/*.toml`; 0 = forever).

Set it in `default.toml` for every group (the deployment-wide rule) and override it per group.
Memories, knowledge, learned expressions and stickers are not pruned by age: they are what the
bot learned, deleted by their own commands.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RetentionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    messages_days: int = Field(default=0, ge=0, le=36_500)  # the recorded group messages
    sessions_days: int = Field(default=0, ge=0, le=36_500)  # members' session turns, summaries
    snapshots_days: int = Field(default=0, ge=0, le=36_500)  # injection snapshots (analyzer)
    usage_days: int = Field(default=0, ge=0, le=36_500)  # usage ledger rows (cost reports)
    audit_days: int = Field(default=0, ge=0, le=36_500)  # session-variable change log
    routes_days: int = Field(default=0, ge=0, le=36_500)  # routing decisions (console, why)

    def days(self, kind: str) -> int:
        return int(getattr(self, f"{kind}_days"))
