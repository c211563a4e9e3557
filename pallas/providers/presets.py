"""The console's model presets (`data/provider_presets.toml`): base URL and models per task.

Pure data and checks: `load_presets()` reads the table once; `check_model_form` validates what
the operator typed on the 模型 page (the same rules for 测试连接 and 保存) and returns the
problems in Chinese.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PRESETS_FILE = Path(__file__).parent / "data" / "provider_presets.toml"
NO_KEY_PLACEHOLDER = "ollama"  # what the page fills in for an endpoint that takes no key
_URL = re.compile(r"^https?://[^\s/?#]+(?:/[^\s?#]*)?$")
_MODEL = re.compile(r"^[^\s\"'\\]{1,128}$")
_KEY = re.compile(r"^[\x21-\x7e]{1,512}$")  # printable ASCII, no spaces


@dataclass(frozen=True, slots=True)
class Preset:
    id: str
    label: str
    base_url: str
    chat: str
    cheap: str
    vision: str
    embedding: str
    needs_key: bool = True
    note: str = ""
    key_url: str = ""


@cache
def load_presets(path: Path = PRESETS_FILE) -> tuple[Preset, ...]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return tuple(Preset(**entry) for entry in data.get("preset", ()))


def preset(preset_id: str) -> Preset | None:
    return next((p for p in load_presets() if p.id == preset_id), None)


@dataclass(frozen=True, slots=True)
class ModelForm:
    """What the 模型 page's form holds (the key as typed: "" = keep the saved one)."""

    base_url: str
    api_key: str
    chat: str
    cheap: str
    vision: str
    embedding: str

    def stripped(self) -> ModelForm:
        values = (self.base_url, self.api_key, self.chat, self.cheap, self.vision, self.embedding)
        return ModelForm(*(v.strip() for v in values))


def check_model_form(form: ModelForm) -> list[str]:
    """The form's problems in Chinese ([] = fine)."""
    problems = []
    if not _URL.match(form.base_url):
        problems.append("接口地址要以 http:// 或 https:// 开头，不能有空格")
    if form.api_key and not _KEY.match(form.api_key):
        problems.append("API Key 只能是不含空格的英文字母、数字和符号")
    for label, value, required in (
        ("对话模型", form.chat, True),
        ("便宜模型", form.cheap, True),
        ("看图模型", form.vision, False),
        ("向量模型", form.embedding, False),
    ):
        if required and not value:
            problems.append(f"{label}不能为空")
        elif value and not _MODEL.match(value):
            problems.append(f"{label}名不能有空格或引号，最长 128 个字符")
    return problems


def key_tail(key: str) -> str:
    """How a key is shown: its last 4 characters only."""
    return f"…{key[-4:]}" if len(key) > 4 else "…"


__all__ = [
    "NO_KEY_PLACEHOLDER",
    "ModelForm",
    "Preset",
    "check_model_form",
    "key_tail",
    "load_presets",
    "preset",
]
