"""Where EvalHub's outbound requests (bot endpoints, judges) may connect: the address rules
and the operator's allow-list, EVALHUB_OUTBOUND_ALLOW.

It follows OWASP's Server-Side Request Forgery Prevention Cheat Sheet
(https://cheatsheetseries.owasp.org/cheatsheets/Server_Side_Request_Forgery_Prevention_Cheat_Sheet.html):
researchers choose the URLs, so every address a host name resolves to is judged, not the
name, and an internal destination is reachable only when the operator listed it.

Three kinds of address:

- **never**: link-local (169.254.0.0/16 and fe80::/10, where clouds serve instance
  metadata and credentials), the other cloud metadata and host-service addresses
  (`NEVER`), "this network" 0.0.0.0/8 (Linux connects it to the machine itself), the
  unspecified address, multicast, and 240.0.0.0/4 with the broadcast address. Refused even
  when an allow-list entry covers them; an entry inside one stops start-up.
- **internal**: loopback, private, shared (100.64.0.0/10), unique-local and site-local
  IPv6, and anything else not globally reachable. Refused unless an entry of
  EVALHUB_OUTBOUND_ALLOW matches both the address (or the host name the URL names) and the
  port.
- **public**: everything else; allowed.

An IPv6 address that carries an IPv4 address is judged on that IPv4 address too:
IPv4-mapped (::ffff:0:0/96, the socket then talks IPv4 to it), NAT64 (64:ff9b::/96 and
the local-use 64:ff9b:1::/48), 6to4 (2002::/16), Teredo (2001::/32: its server and its
client) and the deprecated IPv4-compatible form (::a.b.c.d).

Allow-list entries, comma-separated: `host-or-network[:port]`, e.g. `10.0.0.5:8000`,
`10.1.0.0/16:11434`, `[fd00::5]:8000`, `fd00:1::/64`, `models.internal:8000`. Without a
port an entry allows every port of its addresses; name the port where you can. A host name
entry matches the URL's host name (exactly, no wildcards), whatever internal address it
resolves to; that trusts the DNS of that name, so list only names your own DNS answers.

This module is pure (no Django): the settings schema (evalhub/config.py) validates the
variable with `parse_allow_list` at start-up, and endpoints/outbound.py applies `Policy`
to every address before it connects.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

SETTING = "EVALHUB_OUTBOUND_ALLOW"


def _networks(*pairs: tuple[str, str]) -> tuple[tuple[Network, str], ...]:
    return tuple((ipaddress.ip_network(network), label) for network, label in pairs)


# Never reached, whatever the allow-list says.
NEVER = _networks(
    ("0.0.0.0/8", "a this-network address (it reaches the machine itself)"),
    ("::/128", "the unspecified address"),
    ("169.254.0.0/16", "a link-local address (cloud instance metadata lives there)"),
    ("fe80::/10", "a link-local address"),
    ("100.100.100.200/32", "a cloud metadata address (Alibaba Cloud)"),
    ("fd00:ec2::254/128", "a cloud metadata address (AWS, IPv6)"),
    ("168.63.129.16/32", "a cloud host-services address (Azure)"),
    ("192.0.0.192/32", "a cloud metadata address (Oracle Cloud)"),
    ("224.0.0.0/4", "a multicast address"),
    ("ff00::/8", "a multicast address"),
    ("240.0.0.0/4", "a reserved or broadcast address"),
)

# Internal although Python's ipaddress calls them global (deprecated site-local IPv6).
ALSO_INTERNAL = _networks(("fec0::/10", "a site-local address"))

NAT64 = ipaddress.ip_network("64:ff9b::/96")
NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


class EntryInvalid(ValueError):
    """An allow-list entry that cannot be read, or names an address that is never allowed."""


@dataclass(frozen=True)
class AllowEntry:
    """One destination the operator allows: a network or a host name, on one port or all."""

    network: Network | None = None
    host: str = ""
    port: int | None = None

    def matches(self, host: str, address: Address, port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.network is not None:
            return address.version == self.network.version and address in self.network
        return _host_key(host) == self.host

    def __str__(self) -> str:
        target = str(self.network) if self.network is not None else self.host
        if self.port is None:
            return target
        return f"[{target}]:{self.port}" if ":" in target else f"{target}:{self.port}"


def _host_key(host: str) -> str:
    return host.strip().lower().rstrip(".")


def _port(text: str, entry: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise EntryInvalid(f"{entry!r}: the port must be a number from 1 to 65535")
    return int(text)


def _network(text: str, entry: str) -> Network | None:
    """The network `text` names, None when it is not an address at all."""
    try:
        network = ipaddress.ip_network(text, strict=True)
    except ValueError as error:
        if "/" in text or ":" in text or re.fullmatch(r"[0-9.]+", text):
            raise EntryInvalid(f"{entry!r}: {error}") from None
        return None
    for never, label in NEVER:
        if network.version == never.version and network.subnet_of(never):
            raise EntryInvalid(
                f"{entry!r} is {label}: EvalHub never connects there, even when allow-listed"
            )
    return network


def _host(text: str, entry: str) -> str:
    host = _host_key(text)
    labels = host.split(".")
    if not host or len(host) > 253 or not all(_LABEL.match(label) for label in labels):
        raise EntryInvalid(
            f"{entry!r} is neither an IP address, a network (10.0.0.0/8) nor a host name "
            "(letters, digits, hyphens and dots; no wildcards)"
        )
    if labels[-1].isdigit():
        raise EntryInvalid(f"{entry!r}: a host name cannot end with a number")
    return host


def parse_entry(entry: str) -> AllowEntry:
    """`host-or-network[:port]`; an IPv6 address or network takes a port in brackets."""
    text = entry.strip()
    port = None
    if text.startswith("["):
        target, closed, rest = text[1:].partition("]")
        if not closed or (rest and not rest.startswith(":")):
            raise EntryInvalid(f"{entry!r}: write an IPv6 address with a port as [fd00::5]:8000")
        if rest:
            port = _port(rest[1:], entry)
    elif text.count(":") == 1:
        target, port_text = text.split(":")
        port = _port(port_text, entry)
    else:
        target = text  # a name, an IPv4 address or network, or IPv6 without a port
    network = _network(target, entry)
    if network is not None:
        return AllowEntry(network=network, port=port)
    return AllowEntry(host=_host(target, entry), port=port)


def parse_allow_list(entries: Iterable[str]) -> tuple[AllowEntry, ...]:
    """Every entry read; EntryInvalid naming the first one that cannot be."""
    return tuple(parse_entry(entry) for entry in entries if entry.strip())


def carried_addresses(address: Address) -> list[Address]:
    """The addresses to judge for `address`: the IPv4 addresses it carries, then itself; an
    IPv4-mapped or well-known NAT64 address is only its IPv4 address (that is where it goes,
    and the IPv6 form has no standing of its own)."""
    if address.version == 4:
        return [address]
    if address.ipv4_mapped is not None:
        return [address.ipv4_mapped]
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in NAT64:
        return [low32]
    carried: list[Address] = []
    if address.sixtofour is not None:
        carried.append(address.sixtofour)
    if address.teredo is not None:
        carried.extend(address.teredo)
    if address in NAT64_LOCAL:
        carried.append(low32)
    if address in IPV4_COMPATIBLE and int(address) > 1:
        carried.append(low32)
    return [*carried, address]


def classify(address: Address) -> tuple[str, str] | None:
    """("never" | "internal", what it is), or None for a public address."""
    for network, label in NEVER:
        if address.version == network.version and address in network:
            return "never", label
    for network, label in ALSO_INTERNAL:
        if address.version == network.version and address in network:
            return "internal", label
    if address.is_loopback:
        return "internal", "a loopback address"
    if address.is_private:
        return "internal", "a private address"
    if not address.is_global or address.is_reserved:
        return "internal", "a non-public address"
    return None


def _address(text: str) -> Address:
    return ipaddress.ip_address(text.split("%", 1)[0])  # an IPv6 zone (%eth0) aside


@dataclass(frozen=True)
class Policy:
    """The address rules with the operator's allow-list. Frozen, so it can key a cache."""

    allow: tuple[AllowEntry, ...] = ()

    @classmethod
    def from_setting(cls, entries: Iterable[str]) -> Policy:
        return cls(parse_allow_list(entries))

    def refusal(self, address: str, port: int, host: str = "") -> str | None:
        """Why a connection to `address`:`port` (for the URL's `host`) is refused, or None.
        The reason names the address: for the logs, never for an endpoint's owner."""
        ip = _address(address)
        internal = []
        for judged in carried_addresses(ip):
            kind = classify(judged)
            if kind is None:
                continue
            where = str(ip) if judged == ip else f"{ip} (carrying {judged})"
            if kind[0] == "never":
                return f"{where}, {kind[1]}, which is never reached, even when allow-listed"
            internal.append((judged, f"{where}, {kind[1]}"))
        for judged, what in internal:
            if not any(entry.matches(host, judged, port) for entry in self.allow):
                return f"{what} that no {SETTING} entry allows on port {port}"
        return None
