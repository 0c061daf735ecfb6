"""Test connection: one real request to an endpoint, its latency, and the bot's reply or the
reason it failed, so that an owner finds out before a tournament collects 90 failures.

The request is an ordinary call (the endpoint's budget, concurrency limit and address policy
apply; it is recorded with the purpose "test"), tried once: a retry would hide the latency
and the first failure the owner needs to see.

`url_warning` says at save time whether this deployment will refuse the URL's address (a
loopback or private address that EVALHUB_OUTBOUND_ALLOW does not list), where the owner can
still fix it, rather than in the server log after the first call.
"""

import ipaddress
import time
import urllib.parse
from dataclasses import asdict, dataclass

from .calls import one_line, safe_message
from .client import (
    BotClient,
    BotError,
    Endpoint,
    RetryPolicy,
    outcome_http_status,
    settings_policy,
)
from .models import BotEndpoint, EndpointCall

PROBE_CONVERSATION = "evalhub-connection-test"
PROBE_TURNS = (
    {"speaker": 0, "text": "Hello! This is EvalHub testing the connection. Please answer briefly."},
)
REPLY_CHARS = 300
ONCE = RetryPolicy(attempts=1, base_delay=0, max_delay=0, jitter=False)


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    latency_ms: int
    status: str  # an EndpointCall.Status value
    http_status: int | None
    reply: str  # the start of the bot's answer ("" when it failed)
    message: str  # why it failed, in EvalHub's words ("" when it answered)

    def as_dict(self) -> dict:
        return asdict(self)


def probe(endpoint: BotEndpoint) -> ProbeResult:
    """One request to `endpoint` as a conversation's first bot turn."""
    client = BotClient(Endpoint.from_model(endpoint), retry=ONCE, purpose=EndpointCall.Purpose.TEST)
    started = time.monotonic()
    try:
        text = client.reply(PROBE_CONVERSATION, list(PROBE_TURNS), speaker=1)
    except BotError as error:
        return ProbeResult(
            ok=False,
            latency_ms=_since(started),
            status=error.outcome,
            http_status=outcome_http_status(error),
            reply="",
            message=safe_message(error.summary),
        )
    return ProbeResult(
        ok=True,
        latency_ms=_since(started),
        status=EndpointCall.Status.OK,
        http_status=200,
        reply=one_line(text, REPLY_CHARS),
        message="",
    )


def _since(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


def url_warning(url: str) -> str:
    """Why this deployment will refuse to call `url`, or "". Only what is known without a
    DNS lookup (an address written in the URL, or localhost): a name is resolved, and
    judged, at each call."""
    host = urllib.parse.urlsplit(url).hostname or ""
    port = urllib.parse.urlsplit(url).port
    scheme = urllib.parse.urlsplit(url).scheme
    port = port or (443 if scheme == "https" else 80)
    if host == "localhost" or host.endswith(".localhost"):
        address = "127.0.0.1"
    else:
        try:
            address = str(ipaddress.ip_address(host))
        except ValueError:
            return ""
    if settings_policy().refusal(address, port, host) is None:
        return ""
    return (
        f"This EvalHub will refuse to call {host}:{port}: it is not a public address, and the "
        "operator has not allowed it (EVALHUB_OUTBOUND_ALLOW). Every call will fail until "
        "they do, or until the endpoint has a public address."
    )
