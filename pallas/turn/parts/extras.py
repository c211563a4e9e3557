"""What the svars, kb-placeholder and attachment processors need, read once per REPLY turn.

The processors themselves stay free of database and network access; this module reads, before
the pipeline runs:

- the session variables the turn sees (`SvarView`),
- a `KnowledgeLookup` bound to the turn (placeholders resolve through it, cached per turn),
- shared text files and voice messages (`AttachmentText`), fetched with the SSRF-safe fetcher,
- the number of images this turn attaches and the model's image token cost,

and, after a delivered reply, commits the answer's `<svar>` ops (`commit_svars`). A failure in
any of these is logged and the turn goes on without it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from pallas.config import GroupConfig
from pallas.context.processor_inputs import ChatTurnContext
from pallas.core import state_keys
from pallas.core.clock import Clock
from pallas.core.db.repositories.messages import MessageRepository
from pallas.core.eager import eager_gather
from pallas.core.state import StateStore
from pallas.core.turn import TurnInput
from pallas.features.attachments import (
    AttachmentText,
    FileRef,
    audio_fetcher,
    fetch_text,
    file_refs,
    take_upload,
    text_fetcher,
    voice_urls,
    wanted,
)
from pallas.features.kb import PLACEHOLDER_RE, KnowledgeLookup
from pallas.features.memory import MemoryService, readable_scopes
from pallas.features.svars import CommitHold, NoHold, SvarOp, SvarService, SvarView, result_trace
from pallas.providers.client import LLMClient
from pallas.providers.image_fetch import FetchError
from pallas.providers.models import ModelProfile

log = logging.getLogger("pallas.turn")
T = TypeVar("T")


@dataclass
class TurnExtras:
    messages: MessageRepository
    state: StateStore
    clock: Clock
    llm: LLMClient
    svars: SvarService
    memory: MemoryService
    transcribe: bool = False  # PALLAS_TRANSCRIBE_MODEL is set: voice messages can be transcribed

    async def enrich(
        self,
        ctx: ChatTurnContext,
        turn: TurnInput,
        config: GroupConfig,
        profile: ModelProfile,
        *,
        addressed: bool,
        image_count: int = 0,
    ) -> ChatTurnContext:
        # stepped eagerly: warm reads finish without a loop round; downloads get a task
        view, lookup, attachments = await eager_gather(
            self._guard(
                "svars", self.svars.view(turn.bot_id, turn.group_id, turn.user_id, config.svars)
            ),
            self._guard("kb", self._lookup(ctx, turn, config)),
            self._guard("attachments", self._attachments(turn, config, addressed)),
        )
        images: int | None = 0
        if profile.supports_images:
            images = await self._guard("images", self._image_count(turn, config, image_count))
        return replace(
            ctx,
            svars=view,
            knowledge=lookup,
            attachments=tuple(attachments or ()),
            turn_image_count=images or 0,
            image_token_cost=profile.image_tokens,
        )

    async def _guard(self, what: str, coro: Awaitable[T]) -> T | None:
        try:
            return await coro
        except Exception:
            log.exception("pipeline state %s failed; the turn goes on without it", what)
            return None

    async def _image_count(self, turn: TurnInput, config: GroupConfig, own: int) -> int:
        """Images `prepare_vision_request` will attach: own (+ merged) and quoted, capped."""
        cap = config.images.max_images_per_turn
        quoted = 0
        if turn.reply_to is not None and own < cap:
            rows = await self.messages.find_by_message_ids(
                turn.bot_id, turn.group_id, [turn.reply_to]
            )
            row = rows.get(turn.reply_to)
            quoted = sum(1 for s in row.segments if s.get("type") == "image") if row else 0
        return min(own, cap) + min(quoted, max(0, cap - own))

    # -- knowledge placeholders ----------------------------------------------------------------
    async def _lookup(
        self, ctx: ChatTurnContext, turn: TurnInput, config: GroupConfig
    ) -> KnowledgeLookup | None:
        admin_text = "\n".join(
            [
                ctx.persona_text,
                ctx.self_identity_text,
                *(o.text for o in config.context.prompt_overrides),
            ]
        )
        if turn.group_id == 0 or not PLACEHOLDER_RE.search(admin_text):
            return None
        turn_index = await self.state.incr(state_keys.kb_turn(turn.bot_id, turn.group_id))
        return KnowledgeLookup(
            service=self.memory,
            config=config.kb,
            memory_config=config.memory,
            bot_id=turn.bot_id,
            group_id=turn.group_id,
            default_scopes=readable_scopes(turn.bot_id, turn.group_id, config.memory.shared_pools),
            query=ctx.current_text,
            now=self.clock.now(),
            turn_index=turn_index,
        )

    # -- attachments ---------------------------------------------------------------------------
    async def _attachments(
        self, turn: TurnInput, config: GroupConfig, addressed: bool
    ) -> list[AttachmentText]:
        """The turn's files and voices. The look-ups (the quoted row, a pending upload) run in
        the caller's task (`enrich` steps them eagerly); fetching and transcribing — under
        `asyncio.timeout`, bound to the current task — run in a task of their own."""
        cfg = config.attachments
        segments = [s.to_dict() for s in turn.segments]
        refs: list[FileRef] | None = None  # None: files are not read for this turn
        if cfg.read_files and addressed and cfg.max_files:
            refs = file_refs(segments, "message")
            if turn.reply_to is not None:
                rows = await self.messages.find_by_message_ids(
                    turn.bot_id, turn.group_id, [turn.reply_to]
                )
                if (quoted := rows.get(turn.reply_to)) is not None:
                    refs += file_refs(quoted.segments, "quoted")
            if not refs:  # a file this member uploaded just before (group_upload notice)
                upload = await take_upload(self.state, turn.bot_id, turn.group_id, turn.user_id)
                refs += [upload] if upload is not None else []
            refs = refs[: cfg.max_files]
        voices = voice_urls(segments)
        if not refs and not voices:
            return []  # what `_files([])` and `_voices(turn, [])` give, without a task
        return await asyncio.ensure_future(self._fetch(turn, config, refs, voices))

    async def _fetch(
        self, turn: TurnInput, config: GroupConfig, refs: list[FileRef] | None, voices: list[str]
    ) -> list[AttachmentText]:
        out: list[AttachmentText] = []
        if refs is not None:
            out += await self._files(refs, config)
        out += await self._voices(turn, voices, config)
        return out

    async def _files(self, refs: Sequence[FileRef], config: GroupConfig) -> list[AttachmentText]:
        cfg = config.attachments
        todo = []
        out: list[AttachmentText] = []
        for ref in refs:
            skip = wanted(ref, cfg.extensions, cfg.max_file_bytes)
            if skip == "not_text_file":
                continue
            if skip:
                out.append(AttachmentText("file", ref.name, "", skip, origin=ref.origin))
            else:
                todo.append(ref)
        if todo:
            async with text_fetcher(config.images, cfg.max_file_bytes) as fetcher:
                out += await asyncio.gather(
                    *(fetch_text(fetcher, r, cfg.max_file_chars) for r in todo)
                )
        return out

    async def _voices(
        self, turn: TurnInput, urls: Sequence[str], config: GroupConfig
    ) -> list[AttachmentText]:
        cfg = config.attachments
        llm = self.llm
        if not urls:
            return []
        if not (cfg.transcribe_voice and self.transcribe):
            return [AttachmentText("voice", "语音", "", "placeholder") for _ in urls]
        out = []
        async with audio_fetcher(config.images, cfg.max_voice_bytes) as fetcher:
            for url in urls:
                fetched = await fetcher.fetch(url) if url else None
                if fetched is None or isinstance(fetched, FetchError):
                    out.append(AttachmentText("voice", "语音", "", "placeholder"))
                    continue
                name = url.rsplit("/", 1)[-1].split("?", 1)[0] or "voice.amr"
                text = await llm.transcribe(
                    fetched.data, name, bot_id=turn.bot_id, group_id=turn.group_id
                )
                text = (text or "")[: cfg.max_transcript_chars]
                out.append(
                    AttachmentText("voice", "语音", text, "transcribed" if text else "placeholder")
                )
        return out

    # -- session variables ---------------------------------------------------------------------
    def svar_hold(
        self, turn: TurnInput, config: GroupConfig, ops: Sequence[SvarOp]
    ) -> CommitHold | NoHold:
        """Engaged before the final bubble so the group's next turn waits for `commit_svars`."""
        if not ops or not _answer_ops_apply(config):
            return NoHold()
        return self.svars.pending.hold(turn.bot_id, turn.group_id)

    async def commit_svars(
        self, turn: TurnInput, config: GroupConfig, ops: Sequence[SvarOp], turn_id: str
    ) -> dict[str, Any]:
        """Apply a delivered answer's ops (called only after a complete delivery)."""
        if not _answer_ops_apply(config):
            return {"reason": "svars_off", "tags": len(ops)}
        try:
            result = await self.svars.apply(
                turn.bot_id,
                turn.group_id,
                turn.user_id,
                config.svars,
                ops,
                turn_id=turn_id,
                actor="model",
            )
        except Exception:
            log.exception("group %s: committing session variables failed", turn.group_id)
            return {"reason": "commit_failed", "tags": len(ops)}
        return result_trace(result)


def _answer_ops_apply(config: GroupConfig) -> bool:
    """Whether a delivered answer's `<svar>` tags change the group's variables."""
    return config.svars.apply_from_answer and "svars" not in config.context.disabled_processors


__all__ = ["SvarView", "TurnExtras"]
