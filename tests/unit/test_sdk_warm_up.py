"""The start-up warm-up of the OpenAI SDK's request path runs a chat completion offline: an
in-memory transport answers, nothing goes over the network, and it leaves no event loop."""

from __future__ import annotations

import asyncio
import threading

from pallas.providers.sdk_warmup import _one_completion, warm_request_path


async def test_one_offline_completion_through_the_sdk() -> None:
    assert await _one_completion() == "ok"


def test_the_warm_up_runs_in_a_thread_of_its_own() -> None:
    failures: list[BaseException] = []

    def run() -> None:
        try:
            warm_request_path()
            asyncio.get_event_loop_policy()  # no loop left running in this thread
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive() and failures == []
