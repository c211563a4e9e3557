"""Which addresses and URLs the image fetcher refuses, without any network access."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from pallas.providers.address_checks import blocked_reason, parse_ip_literal
from pallas.providers.image_fetch import (
    CheckedTarget,
    FetchError,
    FetchErrorReason,
    ImageFetchConfig,
    ImageFetcher,
)

BLOCKED_ADDRESSES = [
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.255", "private"),
    ("192.168.1.1", "private"),
    ("169.254.169.254", "link_local"),  # cloud metadata endpoint
    ("100.64.0.1", "shared_cgnat"),
    ("100.127.255.255", "shared_cgnat"),
    ("0.0.0.0", "this_network"),
    ("0.1.2.3", "this_network"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("192.0.2.10", "documentation"),
    ("198.18.0.1", "benchmarking"),
    ("192.0.0.9", "ietf_protocol"),
    ("::1", "loopback"),
    ("::", "unspecified"),
    ("fe80::1", "link_local"),
    ("fc00::1", "unique_local"),
    ("fd12:3456:789a::1", "unique_local"),
    ("fec0::1", "site_local"),
    ("ff02::1", "multicast"),
    ("::ffff:127.0.0.1", "ipv4_mapped_loopback"),
    ("::ffff:10.0.0.1", "ipv4_mapped_private"),
    ("::ffff:169.254.169.254", "ipv4_mapped_link_local"),
    ("::ffff:100.64.1.1", "ipv4_mapped_shared_cgnat"),
    ("64:ff9b::7f00:1", "nat64_loopback"),
    ("2002:7f00:1::1", "6to4_loopback"),
    ("2002:c0a8:101::1", "6to4_private"),
    ("::127.0.0.1", "ipv4_compatible"),
    ("2001:db8::1", "documentation"),
    ("2001::1", "teredo"),
    ("100::1", "discard"),
    ("4000::1", "not_global_unicast"),
]

PUBLIC_ADDRESSES = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "100.63.255.255",  # just below CGNAT
    "100.128.0.0",  # just above CGNAT
    "172.15.255.255",  # just below 172.16/12
    "172.32.0.0",  # just above 172.16/12
    "2606:4700:4700::1111",
    "240e::1",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
]


@pytest.mark.parametrize(("address", "reason"), BLOCKED_ADDRESSES)
def test_non_public_addresses_are_blocked_with_a_named_reason(address: str, reason: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize("address", PUBLIC_ADDRESSES)
def test_public_addresses_pass(address: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),  # decimal
        ("0x7f000001", "127.0.0.1"),  # hex
        ("0x7f.1", "127.0.0.1"),  # hex + short form
        ("0177.0.0.1", "127.0.0.1"),  # octal
        ("017700000001", "127.0.0.1"),  # octal, one part
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("10.0x10.1", "10.16.0.1"),
        ("127.0.0.1.", "127.0.0.1"),  # trailing dot
        ("0", "0.0.0.0"),
        ("[::1]", "::1"),
        ("[::ffff:127.0.0.1]", "::ffff:7f00:1"),
        ("::ffff:7f00:1", "::ffff:7f00:1"),
    ],
)
def test_ip_literals_in_any_notation_are_recognised(host: str, expected: str) -> None:
    assert parse_ip_literal(host) == ipaddress.ip_address(expected)


@pytest.mark.parametrize(
    "host",
    ["example.com", "gchat.qpic.cn", "1.2.3.4.5", "256.1.1.1", "08.0.0.1", "4294967296", "0x", ""],
)
def test_non_literals_are_not_mistaken_for_addresses(host: str) -> None:
    assert parse_ip_literal(host) is None


class FakeResolver:
    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.calls: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append((host, port))
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return self.table[host]


DNS = {
    "intranet.example": ["10.0.0.5"],
    "metadata.example": ["169.254.169.254"],
    "mixed.example": ["93.184.216.34", "192.168.0.10"],  # one bad address is enough
    "mapped.example": ["::ffff:127.0.0.1"],
    "ula.example": ["fd00::5"],
    "cgnat.example": ["100.100.100.100"],
    "public.example": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
    "garbage.example": ["not-an-ip"],
    "empty.example": [],
}


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/a.png",
        "http://2130706433/a.png",
        "http://0x7f.1/a.png",
        "http://0x7f000001/",
        "http://127.1/",
        "https://127.0.0.1./a.png",
        "http://0/",
        "http://[::1]/a.png",
        "http://[::ffff:127.0.0.1]/a.png",
        "http://[fd00::1]:8080/",
        "http://10.0.0.1/a.png",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1/",
        "http://[fe80::1]/",
        "http://224.0.0.1/",
    ],
)
async def test_ip_literal_urls_are_refused_without_dns(url: str) -> None:
    resolver = FakeResolver(DNS)
    async with ImageFetcher(resolver=resolver) as fetcher:
        result = await fetcher.check_target(url)
        fetched = await fetcher.fetch(url)
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.BLOCKED_ADDRESS
    assert isinstance(fetched, FetchError)
    assert fetched.reason is FetchErrorReason.BLOCKED_ADDRESS
    assert resolver.calls == []


@pytest.mark.parametrize(
    ("host", "detail"),
    [
        ("intranet.example", "10.0.0.5 (private)"),
        ("metadata.example", "169.254.169.254 (link_local)"),
        ("mixed.example", "192.168.0.10 (private)"),
        ("mapped.example", "::ffff:7f00:1 (ipv4_mapped_loopback)"),
        ("ula.example", "fd00::5 (unique_local)"),
        ("cgnat.example", "100.100.100.100 (shared_cgnat)"),
    ],
)
async def test_dns_names_resolving_to_private_addresses_are_refused(host: str, detail: str) -> None:
    resolver = FakeResolver(DNS)
    async with ImageFetcher(resolver=resolver) as fetcher:
        result = await fetcher.fetch(f"https://{host}/img.jpg")
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.BLOCKED_ADDRESS
    assert result.detail.endswith(detail)
    assert resolver.calls == [(host, 443)]


async def test_public_name_is_accepted_with_all_its_addresses() -> None:
    async with ImageFetcher(resolver=FakeResolver(DNS)) as fetcher:
        target = await fetcher.check_target("http://Public.Example.:8080/a.jpg")
    assert isinstance(target, CheckedTarget)
    assert target.host == "public.example"
    assert target.port == 8080
    assert [str(a) for a in target.addresses] == [
        "93.184.216.34",
        "2606:2800:220:1:248:1893:25c8:1946",
    ]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://public.example/a.png", FetchErrorReason.SCHEME_NOT_ALLOWED),
        ("file:///etc/passwd", FetchErrorReason.SCHEME_NOT_ALLOWED),
        ("gopher://public.example:70/", FetchErrorReason.SCHEME_NOT_ALLOWED),
        ("javascript:alert(1)", FetchErrorReason.SCHEME_NOT_ALLOWED),
        ("//public.example/a.png", FetchErrorReason.SCHEME_NOT_ALLOWED),
        ("http://user:pw@public.example/a.png", FetchErrorReason.USERINFO_NOT_ALLOWED),
        ("http://public.example@127.0.0.1/a.png", FetchErrorReason.USERINFO_NOT_ALLOWED),
        ("http:///a.png", FetchErrorReason.INVALID_URL),
        ("http://nxdomain.example/a.png", FetchErrorReason.DNS_FAILURE),
        ("http://garbage.example/a.png", FetchErrorReason.DNS_FAILURE),
        ("http://empty.example/a.png", FetchErrorReason.DNS_FAILURE),
    ],
)
async def test_bad_urls_are_refused_with_a_clear_reason(url: str, reason: FetchErrorReason) -> None:
    async with ImageFetcher(resolver=FakeResolver(DNS)) as fetcher:
        result = await fetcher.fetch(url)
    assert isinstance(result, FetchError)
    assert result.reason is reason
    assert result.url == url


async def test_https_only_config_refuses_plain_http() -> None:
    config = ImageFetchConfig(allowed_schemes=frozenset({"https"}))
    async with ImageFetcher(config, resolver=FakeResolver(DNS)) as fetcher:
        result = await fetcher.check_target("http://public.example/a.png")
    assert isinstance(result, FetchError)
    assert result.reason is FetchErrorReason.SCHEME_NOT_ALLOWED


async def test_allowance_only_covers_the_listed_host() -> None:
    config = ImageFetchConfig(allow_private_hosts=frozenset({"127.0.0.1"}))
    async with ImageFetcher(config, resolver=FakeResolver(DNS)) as fetcher:
        allowed = await fetcher.check_target("http://127.0.0.1:9/a.png")
        still_refused = await fetcher.check_target("http://10.0.0.1/a.png")
        also_refused = await fetcher.check_target("http://[::1]/a.png")
    assert isinstance(allowed, CheckedTarget)
    assert isinstance(still_refused, FetchError)
    assert isinstance(also_refused, FetchError)


def test_config_defaults_and_validation() -> None:
    config = ImageFetchConfig()
    assert config.max_bytes == 10 * 1024 * 1024
    assert config.timeout_seconds == 10.0
    assert config.allowed_schemes == frozenset({"http", "https"})
    assert config.allow_private_hosts == frozenset()
    with pytest.raises(ValueError):
        ImageFetchConfig(allowed_schemes=frozenset({"file"}))
    with pytest.raises(ValueError):
        ImageFetchConfig(max_bytes=0)
    with pytest.raises(ValueError):
        ImageFetchConfig(unknown_field=1)  # type: ignore[call-arg]
