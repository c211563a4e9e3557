"""`[kb]` group config: defaults of the knowledge placeholders and how snippets render."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class KnowledgePlaceholderConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # pool of a bare 【kb】 / 【knowledge】: "" = this group's own knowledge + memory.shared_pools
    default_pool: str = ""  # knowledge pool of a bare placeholder
    default_count: int = Field(default=3, ge=1, le=20)  # entries a placeholder inserts
    default_min_score: float = Field(default=0.15, ge=0)  # weaker matches are not inserted
    max_chars: int = Field(default=800, ge=40, le=8000)  # all snippets of one placeholder
    item_template: str = "- {text}"  # one snippet; {text} and {key}
    empty_text: str = ""  # what an inactive / empty placeholder becomes
