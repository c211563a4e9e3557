from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.unit.images.local_http import LocalHttpServer


@pytest.fixture
async def http_server() -> AsyncIterator[LocalHttpServer]:
    server = LocalHttpServer()
    await server.start()
    try:
        yield server
    finally:
        await server.close()
