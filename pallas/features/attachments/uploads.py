"""Group file uploads (OneBot `notice.group_upload`): remembered briefly, read on the next @.

An upload notice has no message id, so it cannot be quoted. Instead the uploader's newest
file is kept in the StateStore for `UPLOAD_TTL_S`; when that same member next addresses the
bot, the file is read into that turn (once: it is taken out of the store).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pallas.core import state_keys
from pallas.core.state import StateStore
from pallas.features.attachments.files import FileRef

UPLOAD_TTL_S = 600.0


def upload_key(bot_id: int, group_id: int, user_id: int) -> str:
    return state_keys.upload(bot_id, group_id, user_id)


def upload_info(file: Mapping[str, Any], url: str = "") -> dict[str, Any] | None:
    """The JSON kept for one uploaded file (`file` is the notice's `file` object)."""
    name = str(file.get("name") or "")
    if not name:
        return None
    size = file.get("size")
    return {
        "name": name,
        "url": str(url or file.get("url") or ""),
        "size": int(size) if isinstance(size, int | float | str) and str(size).isdigit() else None,
        "id": str(file.get("id") or ""),
        "busid": file.get("busid"),
    }


async def remember_upload(
    state: StateStore, bot_id: int, group_id: int, user_id: int, info: Mapping[str, Any]
) -> None:
    await state.set(upload_key(bot_id, group_id, user_id), dict(info), ttl=UPLOAD_TTL_S)


async def take_upload(
    state: StateStore, bot_id: int, group_id: int, user_id: int
) -> FileRef | None:
    key = upload_key(bot_id, group_id, user_id)
    info = await state.get(key)
    if not isinstance(info, dict) or not info.get("name"):
        return None
    await state.delete(key)
    size = info.get("size")
    return FileRef(str(info["name"]), str(info.get("url") or ""), size, "upload")
