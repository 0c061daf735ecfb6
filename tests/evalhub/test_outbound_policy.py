"""Where outbound requests may connect (evalhub/outbound_policy.py): link-local and cloud
metadata never, loopback and private only where the operator's allow-list names address
and port, IPv6 judged on the IPv4 address it carries, and the allow-list's syntax."""

import ipaddress

import pytest

from evalhub.outbound_policy import (
    AllowEntry,
    EntryInvalid,
    Policy,
    classify,
    parse_allow_list,
    parse_entry,
)

NOTHING_ALLOWED = Policy()


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", ("internal", "a loopback address")),
        ("::1", ("internal", "a loopback address")),
        ("10.1.2.3", ("internal", "a private address")),
        ("172.16.0.1", ("internal", "a private address")),
        ("192.168.1.1", ("internal", "a private address")),
        ("fd00::1", ("internal", "a private address")),
        ("fec0::1", ("internal", "a site-local address")),
        ("100.64.0.1", ("internal", "a non-public address")),
        ("192.0.2.1", ("internal", "a private address")),  # documentation
        (
            "169.254.169.254",
            ("never", "a link-local address (cloud instance metadata lives there)"),
        ),
        ("169.254.0.1", ("never", "a link-local address (cloud instance metadata lives there)")),
        ("fe80::1", ("never", "a link-local address")),
        ("100.100.100.200", ("never", "a cloud metadata address (Alibaba Cloud)")),
        ("fd00:ec2::254", ("never", "a cloud metadata address (AWS, IPv6)")),
        ("168.63.129.16", ("never", "a cloud host-services address (Azure)")),
        ("192.0.0.192", ("never", "a cloud metadata address (Oracle Cloud)")),
        ("224.0.0.1", ("never", "a multicast address")),
        ("ff02::1", ("never", "a multicast address")),
        ("240.0.0.1", ("never", "a reserved or broadcast address")),
        ("255.255.255.255", ("never", "a reserved or broadcast address")),
        ("0.0.0.0", ("never", "a this-network address (it reaches the machine itself)")),
        ("::", ("never", "the unspecified address")),
        ("93.184.216.34", None),
        ("2606:4700::1111", None),
    ],
)
def test_each_kind_of_address(address, kind):
    assert classify(ipaddress.ip_address(address)) == kind


@pytest.mark.parametrize(
    "address",
    ["93.184.216.34", "2606:4700::1111", "2002:808:808::1", "64:ff9b::808:808", "::ffff:8.8.8.8"],
)
def test_a_public_address_is_allowed_on_any_port(address):
    assert NOTHING_ALLOWED.refusal(address, 8443) is None


@pytest.mark.parametrize(
    ("address", "carried"),
    [
        ("::ffff:127.0.0.1", "127.0.0.1"),  # IPv4-mapped: the socket talks IPv4
        ("::ffff:10.0.0.5", "10.0.0.5"),
        ("2002:7f00:1::1", "127.0.0.1"),  # 6to4
        ("2002:a00:5::", "10.0.0.5"),
        ("64:ff9b::7f00:1", "127.0.0.1"),  # NAT64, well-known prefix
        ("64:ff9b:1::a00:5", "10.0.0.5"),  # NAT64, local-use prefix
        ("2001:0:4136:e378:8000:63bf:f5ff:fffa", "10.0.0.5"),  # Teredo: the client
        ("::10.0.0.5", "10.0.0.5"),  # IPv4-compatible (deprecated)
    ],
)
def test_ipv6_carrying_a_private_ipv4_address_is_refused_on_it(address, carried):
    reason = NOTHING_ALLOWED.refusal(address, 80)
    assert reason is not None and carried in reason


@pytest.mark.parametrize(
    "address", ["::ffff:169.254.169.254", "2002:a9fe:a9fe::1", "64:ff9b::a9fe:a9fe"]
)
def test_ipv6_carrying_the_metadata_address_is_never_reached(address):
    everything = Policy.from_setting(["0.0.0.0/0", "::/0"])
    reason = everything.refusal(address, 80)
    assert reason is not None and "169.254.169.254" in reason
    assert "never reached, even when allow-listed" in reason


def test_the_allow_list_is_checked_on_the_carried_address():
    policy = Policy.from_setting(["10.0.0.0/8:8000"])
    assert policy.refusal("2002:a00:5::", 8000) is None
    assert policy.refusal("::ffff:10.0.0.5", 8000) is None
    assert "10.0.0.5" in policy.refusal("2002:a00:5::", 8001)


def test_loopback_is_refused_without_an_entry():
    reason = NOTHING_ALLOWED.refusal("127.0.0.1", 8000, "127.0.0.1")
    assert reason == (
        "127.0.0.1, a loopback address that no EVALHUB_OUTBOUND_ALLOW entry allows on port 8000"
    )


def test_an_entry_allows_its_address_on_its_port_only():
    policy = Policy.from_setting(["10.0.0.5:8000"])
    assert policy.refusal("10.0.0.5", 8000) is None
    assert policy.refusal("10.0.0.5", 8001) is not None  # another port: a port scan
    assert policy.refusal("10.0.0.6", 8000) is not None  # another address


def test_an_entry_without_a_port_allows_every_port_of_its_network():
    policy = Policy.from_setting(["10.1.0.0/16", "fd00:1::/64"])
    assert policy.refusal("10.1.200.3", 22) is None
    assert policy.refusal("fd00:1::77", 11434) is None
    assert policy.refusal("10.2.0.1", 22) is not None
    assert policy.refusal("fd00:2::1", 11434) is not None


def test_a_host_name_entry_allows_what_that_name_resolves_to_on_its_port():
    policy = Policy.from_setting(["Models.Internal:9000"])
    assert policy.refusal("192.168.1.7", 9000, "models.internal") is None
    assert policy.refusal("192.168.1.7", 9000, "MODELS.internal.") is None
    assert policy.refusal("192.168.1.7", 9001, "models.internal") is not None
    assert policy.refusal("192.168.1.7", 9000, "other.internal") is not None


@pytest.mark.parametrize(
    ("entries", "address", "host"),
    [
        (["0.0.0.0/0"], "169.254.169.254", ""),
        (["metadata.google.internal"], "169.254.169.254", "metadata.google.internal"),
        (["::/0"], "fe80::1", ""),
        (["::/0"], "fe80::1%eth0", ""),
        (["100.100.0.0/16"], "100.100.100.200", ""),
        (["fd00::/8"], "fd00:ec2::254", ""),
        (["0.0.0.0/0"], "0.0.0.0", ""),
    ],
)
def test_link_local_and_metadata_addresses_are_refused_even_when_an_entry_covers_them(
    entries, address, host
):
    reason = Policy.from_setting(entries).refusal(address, 80, host)
    assert reason is not None and "never reached, even when allow-listed" in reason


@pytest.mark.parametrize(
    ("text", "entry"),
    [
        ("10.0.0.5", AllowEntry(network=ipaddress.ip_network("10.0.0.5/32"))),
        ("10.0.0.5:8000", AllowEntry(network=ipaddress.ip_network("10.0.0.5/32"), port=8000)),
        ("10.1.0.0/16:11434", AllowEntry(network=ipaddress.ip_network("10.1.0.0/16"), port=11434)),
        ("fd00::/64", AllowEntry(network=ipaddress.ip_network("fd00::/64"))),
        ("[fd00::5]:8000", AllowEntry(network=ipaddress.ip_network("fd00::5/128"), port=8000)),
        ("[fd00::/64]", AllowEntry(network=ipaddress.ip_network("fd00::/64"))),
        (" Models.Internal.:9000 ", AllowEntry(host="models.internal", port=9000)),
        ("localhost", AllowEntry(host="localhost")),
    ],
)
def test_entries_are_read(text, entry):
    assert parse_entry(text) == entry


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("10.0.0.1/8", "has host bits set"),
        ("10.0.0", "does not appear to be an IPv4 or IPv6 network"),
        ("models.internal:0", "the port must be a number from 1 to 65535"),
        ("models.internal:http", "the port must be a number from 1 to 65535"),
        ("[fd00::5:8000", "write an IPv6 address with a port as [fd00::5]:8000"),
        ("*.internal", "no wildcards"),
        ("bad_name", "neither an IP address"),
        ("host.123", "a host name cannot end with a number"),
        ("169.254.169.254", "never connects there"),
        ("169.254.0.0/16:80", "never connects there"),
        ("[fe80::1]:80", "never connects there"),
        ("100.100.100.200", "never connects there"),
    ],
)
def test_a_bad_entry_is_refused_with_the_reason(text, why):
    with pytest.raises(EntryInvalid) as refused:
        parse_entry(text)
    assert repr(text) in str(refused.value) and why in str(refused.value)


def test_a_list_skips_empty_entries_and_keeps_the_order():
    assert [str(e) for e in parse_allow_list(["10.0.0.5:8000", " ", "[fd00::5]:80", "a.b"])] == [
        "10.0.0.5/32:8000",
        "[fd00::5/128]:80",
        "a.b",
    ]


def test_a_policy_is_hashable_so_it_keys_the_shared_http_clients():
    assert hash(Policy.from_setting(["10.0.0.5:8000"])) == hash(
        Policy.from_setting(["10.0.0.5:8000"])
    )
