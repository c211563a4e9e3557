"""Safe image downloads for vision requests (SSRF-hardened).

QQ image URLs expire quickly, so images are downloaded here and handed to the provider as data
URLs. A URL comes from untrusted group members, so every fetch is treated as hostile:

* only the configured schemes (http / https) are accepted; URLs with user-info are refused;
* the host is resolved once (``loop.getaddrinfo``, never blocking the event loop) and the fetch
  is refused if ANY resolved address is non-public: loopback, private, link-local, multicast,
  reserved, unspecified, CGNAT 100.64/10, 0.0.0.0/8, documentation / benchmarking ranges,
  unique-local fc00::/7, site-local fec0::/10, Teredo, and IPv4-mapped / NAT64 / 6to4 IPv6
  addresses whose embedded IPv4 address is any of those. IP literals in the URL (including the
  legacy ``inet_aton`` forms ``http://2130706433/`` and ``http://0x7f.1/``) are checked without
  DNS;
* the connection is **pinned** to the address that was checked: the request URL's host is
  replaced by that IP, the original ``Host`` header is sent explicitly and, for https, the
  original host name is passed as httpx's ``sni_hostname`` request extension. httpcore uses that
  value as ``server_hostname`` for both SNI and certificate verification, so TLS still verifies
  the certificate against the real host name while the TCP connection goes to the vetted IP.
  No second DNS lookup happens between check and connect, which closes the DNS-rebinding window.
  Keep-alive is disabled so a pooled connection (keyed by IP) is never reused for another host
  name, env proxies are ignored (``trust_env=False``), and cookies are never stored;
* redirects are followed manually (``max_redirects``); every hop is checked the same way;
* the body must be ``image/*`` (SVG refused: it is a document, not a bitmap) and is capped at
  ``max_bytes`` both via ``Content-Length`` and while streaming raw (undecoded) bytes;
* the whole fetch (DNS, every hop, body) runs under one deadline of ``timeout_seconds``.

``fetch`` never raises for an expected failure: it returns a ``FetchError`` whose ``reason`` says
why, so the caller can drop that image and continue the turn. Which addresses are refused, and
how a host is parsed and resolved, is `address_checks`.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import ipaddress
import ssl
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Self

import certifi
import httpx
from pydantic import BaseModel, ConfigDict, Field, field_validator

from pallas.providers.address_checks import (
    IPAddress,
    blocked_reason,
    normalise_host,
    parse_ip_literal,
    system_resolver,
)

#: ``(host, port) -> list of IP address strings``. Injected in tests; defaults to getaddrinfo.
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]

MIB = 1024 * 1024
_SUPPORTED_SCHEMES = frozenset({"http", "https"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_REFUSED_IMAGE_TYPES = frozenset({"image/svg+xml"})
_MAX_ADDRESSES_TRIED = 3
_USER_AGENT = "Mozilla/5.0 (compatible; PallasBot image fetcher)"


class ImageFetchConfig(BaseModel):
    """Limits for image downloads. ``allow_private_hosts`` is a test-only allowance."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_bytes: int = Field(default=10 * MIB, gt=0)  # larger images are not fetched
    timeout_seconds: float = Field(default=10.0, gt=0)  # download timeout per image
    max_redirects: int = Field(default=3, ge=0, le=10)  # redirects followed per image
    # URL schemes images are fetched from
    allowed_schemes: frozenset[str] = frozenset({"http", "https"})
    # Current + quoted images attached to one reply turn (vision models only).
    max_images_per_turn: int = Field(default=4, ge=0, le=16)
    # Host names or IP strings that may resolve to / be non-public addresses. Off by default;
    # only tests enable it for their own 127.0.0.1 server. Never set this in production.
    allow_private_hosts: frozenset[str] = frozenset()

    @field_validator("allowed_schemes")
    @classmethod
    def _check_schemes(cls, value: frozenset[str]) -> frozenset[str]:
        lowered = frozenset(s.strip().lower() for s in value)
        unsupported = lowered - _SUPPORTED_SCHEMES
        if unsupported:
            raise ValueError(f"unsupported schemes: {sorted(unsupported)}; only http/https")
        if not lowered:
            raise ValueError("allowed_schemes must not be empty")
        return lowered

    @field_validator("allow_private_hosts")
    @classmethod
    def _normalise_hosts(cls, value: frozenset[str]) -> frozenset[str]:
        return frozenset(normalise_host(h) for h in value if h.strip())


class FetchErrorReason(StrEnum):
    INVALID_URL = "invalid_url"
    SCHEME_NOT_ALLOWED = "scheme_not_allowed"
    USERINFO_NOT_ALLOWED = "userinfo_not_allowed"
    DNS_FAILURE = "dns_failure"
    BLOCKED_ADDRESS = "blocked_address"
    TOO_MANY_REDIRECTS = "too_many_redirects"
    BAD_REDIRECT = "bad_redirect"
    HTTP_STATUS = "http_status"
    NOT_IMAGE = "not_image"
    UNSUPPORTED_ENCODING = "unsupported_encoding"
    TOO_LARGE = "too_large"
    EMPTY_BODY = "empty_body"
    TIMEOUT = "timeout"
    CONNECTION_ERROR = "connection_error"


@dataclass(frozen=True, slots=True)
class FetchedImage:
    url: str  # the URL that was asked for
    content_type: str  # bare media type, e.g. "image/png"
    data: bytes = field(repr=False)
    sha256: str  # hex digest of `data`
    final_url: str = ""  # after redirects

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass(frozen=True, slots=True)
class FetchError:
    url: str
    reason: FetchErrorReason
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.reason.value}: {self.detail}" if self.detail else self.reason.value


@dataclass(frozen=True, slots=True)
class CheckedTarget:
    """A URL whose host resolved only to permitted addresses; connect to `addresses` only."""

    url: httpx.URL
    host: str  # normalised host name (lower-case, no trailing dot, no brackets)
    port: int
    addresses: tuple[IPAddress, ...]


# --------------------------------------------------------------------------- fetcher


@dataclass(frozen=True, slots=True)
class _Redirect:
    location: httpx.URL


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """The verifying context every fetcher shares. Loading the CA bundle costs ~45 ms of CPU,
    too long to spend on the event loop each time a turn has a picture; the context holds no
    per-connection state (the host name is checked per connection)."""
    return ssl.create_default_context(cafile=certifi.where())


class ImageFetcher:
    """Downloads images from untrusted URLs. Use as an async context manager or call `aclose`."""

    def __init__(
        self,
        config: ImageFetchConfig | None = None,
        *,
        resolver: Resolver | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        """`resolver` and `ssl_context` (extra trust anchors) are for tests and custom CAs;
        pass a verifying context (it replaces the default certifi trust store)."""
        self.config = config or ImageFetchConfig()
        self._resolver: Resolver = resolver or system_resolver
        self._client = httpx.AsyncClient(
            verify=ssl_context if ssl_context is not None else default_ssl_context(),
            follow_redirects=False,
            trust_env=False,  # an env proxy would connect by name and defeat the pinning
            timeout=httpx.Timeout(self.config.timeout_seconds),
            limits=httpx.Limits(max_keepalive_connections=0),
            cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
            headers={"User-Agent": _USER_AGENT, "Accept": "image/*", "Accept-Encoding": "identity"},
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    def accepts(self, media_type: str) -> bool:
        """Whether a body of this media type is wanted (subclasses fetch other media)."""
        return media_type.startswith("image/") and media_type not in _REFUSED_IMAGE_TYPES

    def _is_allowed_private(self, host: str, ip: IPAddress) -> bool:
        allowance = self.config.allow_private_hosts
        return bool(allowance) and (host in allowance or str(ip) in allowance)

    async def check_target(self, url: str | httpx.URL) -> CheckedTarget | FetchError:
        """Parse `url`, resolve its host once and check every address. Does not connect."""
        raw = str(url)
        try:
            parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
        except (httpx.InvalidURL, TypeError, ValueError) as exc:
            return FetchError(raw, FetchErrorReason.INVALID_URL, str(exc))
        scheme = parsed.scheme.lower()
        if scheme not in self.config.allowed_schemes:
            return FetchError(raw, FetchErrorReason.SCHEME_NOT_ALLOWED, scheme or "<none>")
        if parsed.userinfo:
            return FetchError(raw, FetchErrorReason.USERINFO_NOT_ALLOWED, "credentials in URL")
        host = normalise_host(parsed.raw_host.decode("ascii", "replace"))  # IDNA, not unicode
        if not host:
            return FetchError(raw, FetchErrorReason.INVALID_URL, "missing host")
        port = parsed.port or _DEFAULT_PORTS[scheme]

        literal = parse_ip_literal(host)
        if literal is not None:
            addresses: list[IPAddress] = [literal]
        else:
            try:
                resolved = await self._resolver(host, port)
            except (OSError, UnicodeError) as exc:
                return FetchError(raw, FetchErrorReason.DNS_FAILURE, f"{host}: {exc}")
            addresses = []
            for text in resolved:
                try:
                    addresses.append(ipaddress.ip_address(str(text).split("%", 1)[0]))
                except ValueError:
                    return FetchError(raw, FetchErrorReason.DNS_FAILURE, f"{host}: bad {text!r}")
            if not addresses:
                return FetchError(raw, FetchErrorReason.DNS_FAILURE, f"{host}: no addresses")

        for ip in addresses:
            reason = blocked_reason(ip)
            if reason is not None and not self._is_allowed_private(host, ip):
                return FetchError(
                    raw, FetchErrorReason.BLOCKED_ADDRESS, f"{host} -> {ip} ({reason})"
                )
        unique = tuple(dict.fromkeys(addresses))
        return CheckedTarget(url=parsed, host=host, port=port, addresses=unique)

    async def fetch(self, url: str) -> FetchedImage | FetchError:
        """Download one image. Expected failures come back as `FetchError`, never raised."""
        try:
            async with asyncio.timeout(self.config.timeout_seconds):
                return await self._fetch(url)
        except (TimeoutError, httpx.TimeoutException):
            return FetchError(url, FetchErrorReason.TIMEOUT, f"> {self.config.timeout_seconds}s")

    async def fetch_many(
        self, urls: Iterable[str], *, concurrency: int = 3
    ) -> list[FetchedImage | FetchError]:
        """Fetch several images concurrently; results keep the order of `urls`."""
        semaphore = asyncio.Semaphore(max(1, concurrency))

        async def one(u: str) -> FetchedImage | FetchError:
            async with semaphore:
                return await self.fetch(u)

        return list(await asyncio.gather(*(one(u) for u in urls)))

    async def _fetch(self, url: str) -> FetchedImage | FetchError:
        current: str | httpx.URL = url
        for hop in range(self.config.max_redirects + 1):
            target = await self.check_target(current)
            if isinstance(target, FetchError):
                detail = f"redirect hop {hop}: {target.detail}" if hop else target.detail
                return FetchError(url, target.reason, detail)
            outcome = await self._request_pinned(url, target)
            if not isinstance(outcome, _Redirect):
                return outcome
            current = outcome.location
        return FetchError(
            url, FetchErrorReason.TOO_MANY_REDIRECTS, f"more than {self.config.max_redirects}"
        )

    async def _request_pinned(
        self, url: str, target: CheckedTarget
    ) -> FetchedImage | FetchError | _Redirect:
        last_error = ""
        for ip in target.addresses[:_MAX_ADDRESSES_TRIED]:
            try:
                return await self._request_one(url, target, ip)
            except httpx.ConnectError as exc:  # try the next vetted address
                last_error = f"{target.host} -> {ip}: {exc}"
        return FetchError(url, FetchErrorReason.CONNECTION_ERROR, last_error)

    async def _request_one(
        self, url: str, target: CheckedTarget, ip: IPAddress
    ) -> FetchedImage | FetchError | _Redirect:
        pinned = target.url.copy_with(host=str(ip))
        extensions: dict[str, str] = {}
        if target.url.scheme == "https":
            extensions["sni_hostname"] = target.host
        headers = {"Host": target.url.netloc.decode("ascii")}
        max_bytes = self.config.max_bytes
        try:
            async with self._client.stream(
                "GET", pinned, headers=headers, extensions=extensions
            ) as response:
                if response.status_code in _REDIRECT_STATUSES:
                    location = response.headers.get("location", "").strip()
                    if not location:
                        return FetchError(url, FetchErrorReason.BAD_REDIRECT, "no Location")
                    try:
                        return _Redirect(target.url.join(location))
                    except (httpx.InvalidURL, ValueError) as exc:
                        return FetchError(url, FetchErrorReason.BAD_REDIRECT, str(exc))
                if not 200 <= response.status_code < 300:
                    return FetchError(url, FetchErrorReason.HTTP_STATUS, str(response.status_code))
                media_type = _media_type(response.headers.get("content-type"))
                if not self.accepts(media_type):
                    return FetchError(url, FetchErrorReason.NOT_IMAGE, media_type or "<none>")
                encoding = response.headers.get("content-encoding", "identity").strip().lower()
                if encoding not in ("", "identity"):
                    return FetchError(url, FetchErrorReason.UNSUPPORTED_ENCODING, encoding)
                declared = response.headers.get("content-length", "").strip()
                if declared.isdigit() and int(declared) > max_bytes:
                    return FetchError(url, FetchErrorReason.TOO_LARGE, f"Content-Length {declared}")
                chunks: list[bytes] = []
                total = 0
                async for chunk in response.aiter_raw():
                    total += len(chunk)
                    if total > max_bytes:
                        return FetchError(url, FetchErrorReason.TOO_LARGE, f"> {max_bytes} bytes")
                    chunks.append(chunk)
        except (httpx.ConnectError, httpx.TimeoutException):
            raise  # next address / the caller's deadline handling
        except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
            return FetchError(
                url, FetchErrorReason.CONNECTION_ERROR, f"{type(exc).__name__}: {exc}"
            )
        data = b"".join(chunks)
        if not data:
            return FetchError(url, FetchErrorReason.EMPTY_BODY)
        return FetchedImage(
            url=url,
            content_type=media_type,
            data=data,
            sha256=hashlib.sha256(data).hexdigest(),
            final_url=str(target.url),
        )


def to_data_url(image: FetchedImage) -> str:
    """``data:image/png;base64,...`` for an OpenAI-style ``image_url`` content block."""
    return f"data:{image.content_type};base64,{base64.b64encode(image.data).decode('ascii')}"
