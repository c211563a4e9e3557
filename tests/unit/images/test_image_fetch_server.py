"""The fetcher against a real HTTP server on 127.0.0.1 (allowed only through the test allowance)."""

from __future__ import annotations

import base64
import hashlib
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pallas.providers.image_fetch import (
    FetchedImage,
    FetchError,
    FetchErrorReason,
    ImageFetchConfig,
    ImageFetcher,
    to_data_url,
)
from tests.unit.images.local_http import PNG_1X1, LocalHttpServer, Route

LOCAL = frozenset({"127.0.0.1"})


def allowed(**overrides: object) -> ImageFetchConfig:
    return ImageFetchConfig(allow_private_hosts=LOCAL, **overrides)  # type: ignore[arg-type]


class MapResolver:
    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        return self.table[host]


async def test_fetches_an_image_from_the_local_server_with_the_allowance(
    http_server: LocalHttpServer,
) -> None:
    http_server.routes["/cat.png"] = Route(headers=[("Content-Type", "image/png; charset=binary")])
    async with ImageFetcher(allowed()) as fetcher:
        result = await fetcher.fetch(http_server.url("/cat.png"))
    assert isinstance(result, FetchedImage)
    assert result.data == PNG_1X1
    assert result.content_type == "image/png"
    assert result.sha256 == hashlib.sha256(PNG_1X1).hexdigest()
    data_url = to_data_url(result)
    assert data_url.startswith("data:image/png;base64,")
    assert base64.b64decode(data_url.split(",", 1)[1]) == PNG_1X1


async def test_same_server_is_never_contacted_without_the_allowance(
    http_server: LocalHttpServer,
) -> None:
    http_server.routes["/cat.png"] = Route()
    async with ImageFetcher() as fetcher:
        result = await fetcher.fetch(http_server.url("/cat.png"))
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.BLOCKED_ADDRESS
    assert "loopback" in result.detail
    assert http_server.requests == []


async def test_connection_is_pinned_to_the_checked_address(http_server: LocalHttpServer) -> None:
    # The name exists only in the injected resolver: the request can only have reached the
    # server by connecting to the address that was checked, with the original Host header.
    http_server.routes["/pinned.png"] = Route()
    resolver = MapResolver({"images.pallas.test": ["127.0.0.1"]})
    async with ImageFetcher(allowed(), resolver=resolver) as fetcher:
        result = await fetcher.fetch(http_server.url("/pinned.png", host="images.pallas.test"))
    assert isinstance(result, FetchedImage)
    assert resolver.calls == ["images.pallas.test"]  # one lookup, no second one at connect
    assert http_server.requests[0].headers["host"] == f"images.pallas.test:{http_server.port}"


async def test_oversize_refused_by_content_length(http_server: LocalHttpServer) -> None:
    http_server.routes["/big.png"] = Route(body=b"\x89PNG" + b"\0" * 2000)
    async with ImageFetcher(allowed(max_bytes=1000)) as fetcher:
        result = await fetcher.fetch(http_server.url("/big.png"))
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.TOO_LARGE
    assert "Content-Length 2004" in result.detail


async def test_oversize_refused_while_streaming_without_content_length(
    http_server: LocalHttpServer,
) -> None:
    http_server.routes["/chunked.png"] = Route(body=b"x" * 5000, chunked=True, chunk_size=512)
    async with ImageFetcher(allowed(max_bytes=1000)) as fetcher:
        result = await fetcher.fetch(http_server.url("/chunked.png"))
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.TOO_LARGE
    assert "> 1000 bytes" in result.detail


async def test_exactly_at_the_cap_is_accepted(http_server: LocalHttpServer) -> None:
    http_server.routes["/edge.png"] = Route(body=b"y" * 1000, chunked=True, chunk_size=300)
    async with ImageFetcher(allowed(max_bytes=1000)) as fetcher:
        result = await fetcher.fetch(http_server.url("/edge.png"))
    assert isinstance(result, FetchedImage)
    assert result.size == 1000


@pytest.mark.parametrize(
    "content_type", ["text/html", "application/octet-stream", "image/svg+xml", None]
)
async def test_non_image_content_type_refused(
    http_server: LocalHttpServer, content_type: str | None
) -> None:
    headers = [("Content-Type", content_type)] if content_type else []
    http_server.routes["/page"] = Route(headers=headers, body=b"<html>hi</html>")
    async with ImageFetcher(allowed()) as fetcher:
        result = await fetcher.fetch(http_server.url("/page"))
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.NOT_IMAGE


async def test_http_error_status_refused(http_server: LocalHttpServer) -> None:
    async with ImageFetcher(allowed()) as fetcher:
        result = await fetcher.fetch(http_server.url("/missing.png"))
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.HTTP_STATUS
    assert result.detail == "404"


async def test_redirects_are_followed_and_each_hop_is_requested(
    http_server: LocalHttpServer,
) -> None:
    http_server.routes["/a"] = Route(status=302, headers=[("Location", "/b")], body=b"")
    http_server.routes["/b"] = Route(
        status=301, headers=[("Location", http_server.url("/final.png"))], body=b""
    )
    http_server.routes["/final.png"] = Route()
    async with ImageFetcher(allowed()) as fetcher:
        result = await fetcher.fetch(http_server.url("/a"))
    assert isinstance(result, FetchedImage)
    assert result.final_url == http_server.url("/final.png")
    assert http_server.paths() == ["/a", "/b", "/final.png"]


@pytest.mark.parametrize(
    ("location", "detail_part"),
    [
        ("http://10.0.0.1/secret.png", "10.0.0.1 (private)"),
        ("http://169.254.169.254/latest/meta-data/", "link_local"),
        ("http://[::1]:{port}/final.png", "::1 (loopback)"),
        ("http://internal.pallas.test/x.png", "192.168.1.20 (private)"),
        ("http://dual.pallas.test:{port}/final.png", "::1 (loopback)"),
        ("file:///etc/passwd", "file"),
    ],
)
async def test_redirect_to_a_refused_host_is_refused_at_the_hop(
    http_server: LocalHttpServer, location: str, detail_part: str
) -> None:
    http_server.routes["/hop"] = Route(
        status=302, headers=[("Location", location.format(port=http_server.port))], body=b""
    )
    http_server.routes["/final.png"] = Route()
    resolver = MapResolver(
        {"internal.pallas.test": ["192.168.1.20"], "dual.pallas.test": ["127.0.0.1", "::1"]}
    )
    async with ImageFetcher(allowed(), resolver=resolver) as fetcher:
        result = await fetcher.fetch(http_server.url("/hop"))
    assert isinstance(result, FetchError)
    assert result.reason in (
        FetchErrorReason.BLOCKED_ADDRESS,
        FetchErrorReason.SCHEME_NOT_ALLOWED,
    )
    assert result.detail.startswith("redirect hop 1:")
    assert detail_part in result.detail
    assert http_server.paths() == ["/hop"]  # the refused hop was never requested


async def test_redirect_loop_stops_at_the_limit(http_server: LocalHttpServer) -> None:
    http_server.routes["/loop"] = Route(status=302, headers=[("Location", "/loop")], body=b"")
    async with ImageFetcher(allowed(max_redirects=3)) as fetcher:
        result = await fetcher.fetch(http_server.url("/loop"))
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.TOO_MANY_REDIRECTS
    assert http_server.paths() == ["/loop"] * 4  # the original request + 3 redirects


async def test_redirect_without_location_is_refused(http_server: LocalHttpServer) -> None:
    http_server.routes["/r"] = Route(status=302, headers=[], body=b"")
    async with ImageFetcher(allowed()) as fetcher:
        result = await fetcher.fetch(http_server.url("/r"))
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.BAD_REDIRECT


async def test_server_that_never_answers_times_out(http_server: LocalHttpServer) -> None:
    http_server.routes["/stall.png"] = Route(stall=True)
    async with ImageFetcher(allowed(timeout_seconds=0.3)) as fetcher:
        result = await fetcher.fetch(http_server.url("/stall.png"))
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.TIMEOUT


async def test_slow_drip_body_hits_the_overall_deadline(http_server: LocalHttpServer) -> None:
    # Every chunk arrives well within a per-read timeout; only a whole-fetch deadline stops it.
    http_server.routes["/drip.png"] = Route(
        body=b"z" * 40, chunked=True, chunk_size=4, chunk_delay=0.1
    )
    async with ImageFetcher(allowed(timeout_seconds=0.45)) as fetcher:
        result = await fetcher.fetch(http_server.url("/drip.png"))
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.TIMEOUT


async def test_connection_refused_is_reported_not_raised() -> None:
    async with ImageFetcher(allowed(timeout_seconds=2)) as fetcher:
        result = await fetcher.fetch("http://127.0.0.1:9/none.png")
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.CONNECTION_ERROR


async def test_fetch_many_keeps_order_and_isolates_failures(http_server: LocalHttpServer) -> None:
    http_server.routes["/one.png"] = Route(body=b"one", headers=[("Content-Type", "image/gif")])
    http_server.routes["/two.jpg"] = Route(body=b"two", headers=[("Content-Type", "image/jpeg")])
    urls = [http_server.url("/one.png"), "http://10.0.0.1/x.png", http_server.url("/two.jpg")]
    async with ImageFetcher(allowed()) as fetcher:
        results = await fetcher.fetch_many(urls)
    assert [type(r).__name__ for r in results] == ["FetchedImage", "FetchError", "FetchedImage"]
    assert isinstance(results[0], FetchedImage) and results[0].data == b"one"
    assert isinstance(results[2], FetchedImage) and results[2].content_type == "image/jpeg"


# ----------------------------------------------------------------------------- TLS pinning


@pytest.fixture(scope="module")
def tls_material(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl CLI not available")
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=images.pallas.test",
            "-addext", "subjectAltName=DNS:images.pallas.test",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture
async def tls_server(tls_material: tuple[Path, Path]) -> AsyncIterator[LocalHttpServer]:
    cert, key = tls_material
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = LocalHttpServer()
    await server.start(ssl_context=context)
    try:
        yield server
    finally:
        await server.close()


def trusting(cert: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(cert))


async def test_https_connects_to_the_vetted_ip_and_verifies_the_host_name(
    tls_server: LocalHttpServer, tls_material: tuple[Path, Path]
) -> None:
    tls_server.routes["/tls.png"] = Route()
    resolver = MapResolver({"images.pallas.test": ["127.0.0.1"]})
    url = f"https://images.pallas.test:{tls_server.port}/tls.png"
    async with ImageFetcher(
        allowed(), resolver=resolver, ssl_context=trusting(tls_material[0])
    ) as fetcher:
        result = await fetcher.fetch(url)
    assert isinstance(result, FetchedImage), result
    assert tls_server.sni_names == ["images.pallas.test"]


async def test_https_certificate_for_another_name_is_rejected(
    tls_server: LocalHttpServer, tls_material: tuple[Path, Path]
) -> None:
    tls_server.routes["/tls.png"] = Route()
    resolver = MapResolver({"other.pallas.test": ["127.0.0.1"]})
    url = f"https://other.pallas.test:{tls_server.port}/tls.png"
    async with ImageFetcher(
        allowed(), resolver=resolver, ssl_context=trusting(tls_material[0])
    ) as fetcher:
        result = await fetcher.fetch(url)
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.CONNECTION_ERROR
    assert tls_server.requests == []
