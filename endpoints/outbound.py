"""Outbound HTTP to bot endpoints: an httpx client that checks where it connects and
enforces a total deadline per request.

Address policy. A host name is resolved once, every address it resolves to is checked, and
the connection goes to a checked address (TLS still verifies the certificate against the
host name). Checking and then letting the HTTP library resolve again would let a DNS
answer that changes in between (DNS rebinding) reach an internal address. What is checked
is evalhub/outbound_policy.py's `Policy`: link-local and cloud metadata addresses are
refused always, loopback and private ones unless the operator's allow-list
(EVALHUB_OUTBOUND_ALLOW) names the address or host and the port, public ones are allowed;
one refused address refuses the host. Proxies from the environment are ignored and
redirects are never followed.

The async client (endpoints/streaming.py) connects through the same check
(AsyncGuardedBackend: the name is resolved in a thread, every address checked, and the
connection made to a checked address); its total deadline is kept by the event loop.

Total deadline. httpx's timeouts bound each socket operation, so a bot that sends one byte
every second never times out. Here every connect, read and write waits at most until the
request's deadline (`deadline(seconds)` around the request), so the request ends in time
and cannot outlive its concurrency lease.
"""

from __future__ import annotations

import asyncio
import contextvars
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

import httpcore
import httpx

from evalhub.outbound_policy import Policy

USER_AGENT = "EvalHub-bot-client/2"

_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "evalhub_bot_deadline", default=None
)


class AddressRefused(httpcore.ConnectError):
    """The host resolves to an address the policy refuses."""


class Unresolvable(httpcore.ConnectError):
    """The host name does not resolve (perhaps for now: DNS may come back)."""


class DeadlinePassed(httpcore.TimeoutException):
    """The request's total deadline passed during a connect, read or write."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every socket operation inside the block ends by `seconds` from now."""
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def _bounded(timeout: float | None) -> float | None:
    """`timeout` shortened to what is left before the deadline."""
    end = _deadline.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise DeadlinePassed("the request's total deadline passed")
    return left if timeout is None else min(timeout, left)


def resolve_checked(host: str, port: int, *, policy: Policy) -> list[tuple]:
    """The getaddrinfo results for host:port, after checking every address."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise Unresolvable(f"cannot resolve {host}: {error}") from None
    if not infos:
        raise Unresolvable(f"{host} resolves to no address")
    for info in infos:
        reason = policy.refusal(info[4][0], port, host)
        if reason is not None:
            raise AddressRefused(f"{host} resolves to {reason}")
    return infos


class _DeadlineStream(httpcore.NetworkStream):
    """A network stream whose reads and writes end by the request's deadline."""

    def __init__(self, stream: httpcore.NetworkStream):
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _bounded(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _bounded(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        return _DeadlineStream(
            self._stream.start_tls(ssl_context, server_hostname, _bounded(timeout))
        )

    def get_extra_info(self, info: str):
        return self._stream.get_extra_info(info)


class GuardedBackend(httpcore.SyncBackend):
    """Connects only to checked addresses, within the deadline; no unix sockets."""

    def __init__(self, *, policy: Policy):
        self.policy = policy

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        infos = resolve_checked(host, port, policy=self.policy)
        last_error: Exception | None = None
        for info in infos:
            address = info[4][0]
            try:
                stream = super().connect_tcp(
                    address, port, _bounded(timeout), local_address, socket_options
                )
            except httpcore.ConnectError as error:
                last_error = error
                continue
            return _DeadlineStream(stream)
        raise last_error or AddressRefused(f"cannot connect to {host}")

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise AddressRefused("unix sockets are not allowed for bot endpoints")


class GuardedTransport(httpx.HTTPTransport):
    """httpx's transport with the connection pool built on GuardedBackend."""

    def __init__(self, *, policy: Policy, max_connections: int = 100):
        super().__init__(trust_env=False)
        # httpx has no public hook for the network backend, so the pool it built is
        # replaced by one with the same TLS context and ours (httpx is pinned).
        self._pool = httpcore.ConnectionPool(
            ssl_context=self._pool._ssl_context,
            max_connections=max_connections,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=GuardedBackend(policy=policy),
        )


def make_client(*, policy: Policy) -> httpx.Client:
    """A reusable client (keep-alive connections) that never follows redirects."""
    return httpx.Client(
        transport=GuardedTransport(policy=policy),
        follow_redirects=False,
        trust_env=False,
        headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
    )


class AsyncGuardedBackend(httpcore.AsyncNetworkBackend):
    """The async twin of GuardedBackend: connects only to checked addresses."""

    def __init__(self, *, policy: Policy):
        self.policy = policy
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        check = partial(resolve_checked, host, port, policy=self.policy)
        infos = await asyncio.to_thread(check)  # getaddrinfo blocks
        last_error: Exception | None = None
        for info in infos:
            try:
                return await self._backend.connect_tcp(
                    info[4][0], port, timeout, local_address, socket_options
                )
            except httpcore.ConnectError as error:
                last_error = error
        raise last_error or AddressRefused(f"cannot connect to {host}")

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise AddressRefused("unix sockets are not allowed for bot endpoints")

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


class AsyncGuardedTransport(httpx.AsyncHTTPTransport):
    """httpx's async transport with the connection pool built on AsyncGuardedBackend."""

    def __init__(self, *, policy: Policy, max_connections: int = 100):
        super().__init__(trust_env=False)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=self._pool._ssl_context,
            max_connections=max_connections,
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=AsyncGuardedBackend(policy=policy),
        )


def make_async_client(*, policy: Policy) -> httpx.AsyncClient:
    """The async client: the same policy, headers and no redirects as `make_client`."""
    return httpx.AsyncClient(
        transport=AsyncGuardedTransport(policy=policy),
        follow_redirects=False,
        trust_env=False,
        headers={"User-Agent": USER_AGENT, "Accept": "application/json, text/event-stream"},
    )
