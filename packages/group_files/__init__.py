"""Group file uploads: remember a member's newly uploaded file for their next @ to the bot.

Thin on purpose: the URL comes with the notice (Lagrange / NapCat) or from the OneBot
extension `get_group_file_url`; everything else is `pallas.features.attachments.uploads`.
"""

from __future__ import annotations

import logging

from nonebot import on_notice
from nonebot.adapters.onebot.v11 import Bot, GroupUploadNoticeEvent
from nonebot.plugin import PluginMetadata

from pallas.features.attachments import remember_upload, upload_info
from pallas.onebot.lifespan import app_or_none

__plugin_meta__ = PluginMetadata(
    name="group_files",
    description="Uploaded .txt/.md files are read into the uploader's next message to the bot",
    usage="upload a file, then @帕拉斯",
)

log = logging.getLogger("pallas.attachments")

# The priority of the inbound message entry (`pallas.onebot.lifespan`): NoneBot opens a task group
# per priority level for every event, so a notice matcher on a level of its own cost every
# group message one more (~20 µs); on the same level the two types simply skip each other.
uploads = on_notice(priority=1, block=False)


@uploads.handle()
async def remember(bot: Bot, event: GroupUploadNoticeEvent) -> None:
    app = app_or_none()  # a plain call: a sync `Depends` would run in a worker thread
    if app is None:
        return
    runtime = app.runtime
    if not runtime.group_configs.get(event.group_id).attachments.read_files:
        return
    file = event.file.model_dump()
    url = str(file.get("url") or "")
    if not url:
        try:
            result = await bot.call_api(
                "get_group_file_url",
                group_id=event.group_id,
                file_id=event.file.id,
                busid=event.file.busid,
            )
            url = str((result or {}).get("url") or "")
        except Exception as exc:  # not every implementation has the extension
            log.info("group %s: no URL for uploaded file %s: %s", event.group_id, file, exc)
    info = upload_info(file, url)
    if info is not None:
        await remember_upload(runtime.state, int(bot.self_id), event.group_id, event.user_id, info)
