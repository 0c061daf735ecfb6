"""The client side of the bot endpoint protocols.

An endpoint (BotEndpoint) speaks EvalHub's protocol or the OpenAI-compatible chat
completions protocol (endpoints/protocols.py says what is sent and read). EvalHub
POSTs JSON with `Content-Type: application/json` and, when the endpoint has a token,
`Authorization: Bearer <token>`, and expects `200` with a non-empty text of at most
`max_reply_chars` characters. The whole history is sent every time, so a bot can be
stateless; a retried conversation starts again from the seed under the same conversation
id. Redirects are not followed: register the final URL. Where requests may go, and their
total deadline (`timeout`, from connecting to the last byte), is endpoints/outbound.py's
job: connections are reused (one httpx client per process).

Outcomes. Every request (retries included) leaves an EndpointCall for a stored endpoint
(endpoints/calls.py): status, HTTP status, latency, error class and a short summary that
never quotes the reply, so that the endpoint's owner can see why calls fail.

Errors are typed (BotTimeout, BotUnreachable, BotRefused, BotHTTPError, BotBadJSON,
BotBadReply, BotBusy, BudgetExhausted, LimiterUnavailable), each with `transient` saying
whether trying again may help. Transient errors are retried (tenacity) with exponential
backoff (RetryPolicy), or after the `Retry-After` a 429 or 503 gives when it is at most
EVALHUB_BOT_RETRY_AFTER_MAX_SECONDS; the request is repeated with the same history, so the
turns already collected are kept.

Budget. An endpoint with a daily budget is charged one request per HTTP request, retries
included, before it is sent (endpoints/budget.py); a spent budget is
BudgetExhausted and nothing is sent. A chat campaign's requests (purpose "chat") must also
fit the endpoint's chat share of the budget (ChatShareExhausted).

Concurrency. An endpoint sees at most `max_concurrency` requests in flight from EvalHub.
When the Celery broker is Redis (production), the limit is a Redis semaphore shared by
every worker process: a sorted set per endpoint whose members are leases that expire, so a
worker killed mid-request frees its slot after the lease (the request's total deadline +
EVALHUB_BOT_LEASE_MARGIN_SECONDS) instead of holding it forever; since a request cannot
outlive its deadline, it cannot outlive its lease. Time comes from the Redis server, so
workers' clocks do not matter. Without a Redis broker (embedded mode: one process, eager
tasks) a process-local semaphore does the same job. A slot is held only while the request
is in flight, not during the backoff between attempts.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Protocol

import httpx
import tenacity
from django.conf import settings

from evalhub.outbound_policy import Policy
from evalhub.text import without_nul

from . import outbound
from .protocols import (
    PROTOCOLS,
    ReplyShapeError,
    Sampling,
    Usage,
    WireProtocol,
    openai_chat_body,
    openai_usage,
)

logger = logging.getLogger(__name__)

# Bytes read from a reply at most; a bot that streams more is cut off and refused.
MAX_REPLY_BYTES = 256 * 1024


# Errors ---------------------------------------------------------------------------------


class BotError(Exception):
    """A bot endpoint did not give a usable reply. `outcome` is the EndpointCall status it
    is recorded as. `summary` is what an endpoint's owner and a judge run's owner read: it
    never quotes the upstream body nor names an address the policy refused. `message` (and
    str(), which adds the URL) may, for the logs and staff (EndpointCall.detail)."""

    transient = False
    outcome = "error"

    def __init__(self, message: str, *, url: str = "", summary: str = ""):
        # A message may quote the start of an upstream body, which is the model's text.
        message = without_nul(message)
        super().__init__(message)
        self.message = message
        self.summary = without_nul(summary) or message
        self.url = url
        self.attempts = 1

    def __str__(self) -> str:
        where = f"{self.url}: " if self.url else ""
        tries = f" (gave up after {self.attempts} attempts)" if self.attempts > 1 else ""
        return f"{where}{self.message}{tries}"


class BotTimeout(BotError):
    transient = True
    outcome = "timeout"


class BotUnreachable(BotError):
    """Connection refused, reset or broken, or the host name does not resolve."""

    transient = True
    outcome = "unreachable"


class BotRefused(BotError):
    """The endpoint's address is refused by the address policy (endpoints/outbound.py)."""

    outcome = "refused"


class BotHTTPError(BotError):
    outcome = "http_error"

    def __init__(
        self, message: str, *, url: str = "", status: int, retry_after=None, summary: str = ""
    ):
        super().__init__(message, url=url, summary=summary)
        self.status = status
        # The body's start, for callers that tell one refusal from another (a judge whose
        # server refuses `response_format`); never shown to an owner, as `message` is not.
        self.body_start = ""
        self.retry_after: float | None = retry_after  # seconds, from a 429 or 503
        # Server errors and "slow down" may pass; a 4xx (bad token, wrong URL) will not.
        self.transient = status >= 500 or status in {408, 425, 429}


def refuses_parameter(error: BotError, name: str) -> bool:
    """Whether `error` is the server refusing the request parameter `name` (a 400 or 422
    whose body names it): what an OpenAI-compatible server that lacks a feature answers."""
    return (
        isinstance(error, BotHTTPError) and error.status in (400, 422) and name in error.body_start
    )


class BotBadJSON(BotError):
    """The body is not JSON. Transient: usually a proxy's error page or a truncated body."""

    transient = True
    outcome = "invalid_json"


class BotBadReply(BotError):
    """Valid JSON that breaks the protocol (no text, empty, too long, too large).

    Not retried: a bot that answers in the wrong shape does so every time."""

    outcome = "invalid_reply"


class BotBusy(BotError):
    """No concurrency slot for the endpoint came free within the wait."""

    transient = True
    outcome = "busy"


class BudgetExhausted(BotError):
    """The endpoint's requests for today are spent; nothing was sent. Not retried today."""

    outcome = "budget_exhausted"


class ChatShareExhausted(BudgetExhausted):
    """The share of today's budget chat campaigns may spend is spent (tournaments and
    judges keep theirs); nothing was sent."""


class LimiterUnavailable(BotError):
    """The Redis semaphore could not be reached; the bot was not asked."""

    transient = True
    outcome = "limiter_unavailable"


# Retries --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """`attempts` requests at most; the n-th retry waits base_delay × 2^(n-1), capped at
    max_delay, scaled by a random factor in [0.5, 1] when `jitter` is on so that many
    dialogues failing together do not come back in lockstep. A Retry-After of at most
    `max_retry_after` seconds (None: EVALHUB_BOT_RETRY_AFTER_MAX_SECONDS) replaces the
    backoff; a longer one ends the retries."""

    attempts: int
    base_delay: float
    max_delay: float
    jitter: bool = True
    max_retry_after: float | None = None

    def __post_init__(self):
        if self.attempts < 1:
            raise ValueError("at least one attempt is needed")
        if self.base_delay < 0 or self.max_delay < 0 or (self.max_retry_after or 0) < 0:
            raise ValueError("delays cannot be negative")

    def retry_after_cap(self) -> float:
        if self.max_retry_after is not None:
            return self.max_retry_after
        return settings.EVALHUB_BOT_RETRY_AFTER_MAX_SECONDS

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number `retry` (1 for the first retry)."""
        delay = min(self.max_delay, self.base_delay * 2 ** (retry - 1))
        return delay * random.uniform(0.5, 1.0) if self.jitter else delay

    @classmethod
    def from_settings(cls) -> RetryPolicy:
        return cls(
            attempts=settings.EVALHUB_BOT_RETRY_ATTEMPTS,
            base_delay=settings.EVALHUB_BOT_RETRY_BASE_DELAY,
            max_delay=settings.EVALHUB_BOT_RETRY_MAX_DELAY,
            max_retry_after=settings.EVALHUB_BOT_RETRY_AFTER_MAX_SECONDS,
        )


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


# Concurrency limits ---------------------------------------------------------------------


class Limiter(Protocol):
    def slot(self, key: str, limit: int, *, wait: float, lease: float):
        """A context manager holding one of `limit` slots of `key` (BotBusy after `wait`)."""


class LocalLimiter:
    """Process-local semaphores, one per (endpoint key, limit)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._semaphores: dict[tuple[str, int], threading.BoundedSemaphore] = {}

    @contextmanager
    def slot(self, key: str, limit: int, *, wait: float, lease: float) -> Iterator[None]:
        with self._lock:
            semaphore = self._semaphores.setdefault((key, limit), threading.BoundedSemaphore(limit))
        if not semaphore.acquire(timeout=wait):
            raise BotBusy(f"no free slot among {limit} for {key} within {wait:g} s")
        try:
            yield
        finally:
            semaphore.release()


# Atomic: drop expired leases, then take a slot if fewer than the limit are held. Scores are
# lease expiry times in milliseconds of the Redis server's clock.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
  if redis.call('PTTL', KEYS[1]) < lease + 1000 then
    redis.call('PEXPIRE', KEYS[1], lease + 1000)
  end
  return 1
end
return 0
"""


class RedisLimiter:
    """A semaphore in Redis shared by every process that uses the same Redis database."""

    prefix = "evalhub:bot-slots:"

    def __init__(self, client):
        self.client = client
        self._acquire = client.register_script(_ACQUIRE)

    @classmethod
    def from_url(cls, url: str) -> RedisLimiter:
        import redis

        return cls(redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5))

    @contextmanager
    def slot(self, key: str, limit: int, *, wait: float, lease: float) -> Iterator[None]:
        import redis

        name = self.prefix + key
        token = uuid.uuid4().hex
        deadline = time.monotonic() + wait
        pause = 0.005
        try:
            while not self._acquire(keys=[name], args=[limit, max(1, int(lease * 1000)), token]):
                if time.monotonic() >= deadline:
                    raise BotBusy(f"no free slot among {limit} for {key} within {wait:g} s")
                time.sleep(pause)
                pause = min(pause * 2, 0.1)
        except redis.RedisError as error:
            raise LimiterUnavailable(f"the Redis concurrency limiter failed: {error}") from error
        try:
            yield
        finally:
            try:
                self.client.zrem(name, token)
            except redis.RedisError:
                # The lease expires on its own; the reply already in hand stays good.
                logger.warning("Could not release slot %s of %s; its lease will expire", token, key)


_local_limiter = LocalLimiter()
_redis_limiters: dict[str, RedisLimiter] = {}
_redis_lock = threading.Lock()


def default_limiter() -> Limiter:
    """Redis-backed when the Celery broker is Redis (several worker processes), else local."""
    url = settings.CELERY_BROKER_URL or ""
    if not url.startswith(("redis://", "rediss://")):
        return _local_limiter
    with _redis_lock:
        if url not in _redis_limiters:
            _redis_limiters[url] = RedisLimiter.from_url(url)
        return _redis_limiters[url]


# The client -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ChatReply:
    """A chat completion's text and the tokens the server reported (judging/)."""

    text: str
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class Endpoint:
    """What the client needs of a BotEndpoint; `key` names it for the concurrency limit.
    A timeout or concurrency of None takes the settings' default; a daily budget is
    enforced only for an endpoint stored in the database (`endpoint_id`)."""

    key: str
    url: str
    auth_token: str = field(default="", repr=False)  # never in logs
    timeout: float | None = None
    max_concurrency: int | None = None
    protocol: str = "evalhub"
    sampling: Sampling = field(default_factory=Sampling)
    endpoint_id: int | None = None
    daily_budget: int | None = None
    chat_share: int = 100  # percent of the budget chat campaigns may spend
    # Whether a judge asks for structured output (BotEndpoint.structured_output is "auto").
    structured_output: bool = False

    @classmethod
    def from_model(cls, endpoint) -> Endpoint:
        return cls(
            key=f"endpoint-{endpoint.pk}",
            url=endpoint.url,
            auth_token=endpoint.auth_token,
            timeout=endpoint.timeout_seconds,
            max_concurrency=endpoint.max_concurrency,
            protocol=endpoint.protocol,
            sampling=Sampling(
                model=endpoint.model_name,
                system_prompt=endpoint.system_prompt,
                temperature=endpoint.temperature,
                top_p=endpoint.top_p,
                max_tokens=endpoint.max_tokens,
                stop=tuple(endpoint.stop or ()),
            ),
            endpoint_id=endpoint.pk,
            daily_budget=endpoint.daily_budget,
            chat_share=endpoint.chat_share,
            structured_output=endpoint.structured_output == endpoint.StructuredOutput.AUTO,
        )


@lru_cache(maxsize=8)
def _policy(entries: tuple[str, ...]) -> Policy:
    return Policy.from_setting(entries)


def settings_policy() -> Policy:
    """The address policy with the operator's allow-list (EVALHUB_OUTBOUND_ALLOW)."""
    return _policy(tuple(settings.EVALHUB_OUTBOUND_ALLOW))


_http_clients: dict[Policy, httpx.Client] = {}
_http_lock = threading.Lock()


def http_client(*, policy: Policy) -> httpx.Client:
    """The process's shared httpx client for this address policy (connection reuse)."""
    with _http_lock:
        if policy not in _http_clients:
            _http_clients[policy] = outbound.make_client(policy=policy)
        return _http_clients[policy]


def database_budget(endpoint: Endpoint, purpose: str = "other") -> None:
    """Charge one request to a stored endpoint's budget (BudgetExhausted when spent); a chat
    campaign's request (`purpose` "chat") also to the chat share (ChatShareExhausted)."""
    if endpoint.endpoint_id is None or endpoint.daily_budget is None:
        return
    # The ORM only when there is something to charge.
    from .budget import chat_limit, spend, used_today

    budget = endpoint.daily_budget
    chat = purpose == "chat"
    limit = chat_limit(budget, endpoint.chat_share) if chat else None
    if spend(endpoint.endpoint_id, budget, chat_limit=limit):
        return
    if chat and used_today(endpoint.endpoint_id) < budget:
        raise ChatShareExhausted(
            f"the chat campaigns' share of the daily budget ({limit} of {budget} requests) "
            "is spent; it renews at midnight UTC"
        )
    raise BudgetExhausted(
        f"the daily budget of {budget} requests is spent; it renews at midnight UTC"
    )


def database_record(endpoint_id: int | None, **outcome) -> None:
    """Store a request's outcome for a stored endpoint (endpoints/calls.py)."""
    if endpoint_id is None:
        return
    from .calls import record  # the ORM only when there is something to record

    record(endpoint_id, **outcome)


def outcome_http_status(error: BotError | None) -> int | None:
    """The HTTP status a request ended with, when it got one."""
    if error is None or isinstance(error, BotBadJSON | BotBadReply):
        return 200  # a reply came, in the wrong shape
    return getattr(error, "status", None)


class EndpointCaller:
    """One endpoint's call configuration, shared by the blocking client (BotClient) and the
    streaming one (endpoints/streaming.py): the protocol and URL, timeout, concurrency limit,
    reply cap, budget, outcome record, and the address policy (where it may connect)."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        limiter: Limiter | None = None,
        max_reply_chars: int | None = None,
        slot_wait: float | None = None,
        budget: Callable[[Endpoint, str], None] | None = database_budget,
        policy: Policy | None = None,
        purpose: str = "other",
        record: Callable[..., None] | None = database_record,
    ):
        scheme = urllib.parse.urlsplit(endpoint.url).scheme
        if scheme not in {"http", "https"}:
            raise BotError(f"only http and https endpoints are supported, not {scheme!r}")
        if endpoint.protocol not in PROTOCOLS:
            raise BotError(f"unknown protocol {endpoint.protocol!r}")
        self.endpoint = endpoint
        self.protocol = PROTOCOLS[endpoint.protocol]
        self.url = self.protocol.url(endpoint.url)
        self.timeout = endpoint.timeout or settings.EVALHUB_BOT_TIMEOUT_SECONDS
        self.max_concurrency = endpoint.max_concurrency or settings.EVALHUB_BOT_MAX_CONCURRENCY
        self.limiter = limiter or default_limiter()
        self.max_reply_chars = max_reply_chars or settings.EVALHUB_BOT_MAX_REPLY_CHARS
        self.slot_wait = (
            slot_wait if slot_wait is not None else settings.EVALHUB_BOT_SLOT_WAIT_SECONDS
        )
        self.budget = budget
        self.purpose = purpose
        self.record = record
        self.policy = policy if policy is not None else settings_policy()


class BotClient(EndpointCaller):
    """Asks one endpoint for turns, with retries, its budget and its concurrency limit, and
    records each request's outcome (`purpose` says who asked: an EndpointCall.Purpose)."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        **configuration,
    ):
        super().__init__(endpoint, **configuration)
        self.retry = retry or RetryPolicy.from_settings()
        self.sleep = sleep
        self.http = http_client(policy=self.policy)

    def reply(self, conversation_id: str, turns: Sequence[dict], speaker: int) -> str:
        """The bot's next turn as `speaker`, after `turns` ([{"speaker", "text"}, ...])."""
        body = self.protocol.body(conversation_id, turns, speaker, self.endpoint.sampling)
        return self._ask(body, self._parse)

    def chat(self, messages: Sequence[dict], *, response_format: dict | None = None) -> ChatReply:
        """An OpenAI-compatible endpoint's answer to `messages` (a judge's prompt), with the
        tokens it reports using; the same retries, budget and concurrency as `reply`.
        `response_format` is sent as given (a judge's JSON schema: structured output)."""
        if self.endpoint.protocol != "openai":
            raise BotError("only OpenAI-compatible endpoints answer chat messages", url=self.url)
        body = openai_chat_body(messages, self.endpoint.sampling, response_format)
        return self._ask(body, self._parse_chat)

    def _ask(self, body: dict, parse: Callable[[bytes], object]):
        raw_body = json.dumps(body).encode()
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.retry.attempts),
            retry=tenacity.retry_if_exception(self._retryable),
            wait=self._wait,
            sleep=self.sleep,
            before_sleep=self._log_retry,
            reraise=True,
        )
        for attempt in retrying:
            with attempt:
                started = time.monotonic()
                try:
                    result = parse(self._attempt(raw_body))
                except BotError as error:
                    error.url = error.url or self.url
                    error.attempts = attempt.retry_state.attempt_number
                    self._record(started, error)
                    raise
                self._record(started, None)
                return result
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _record(self, started: float, error: BotError | None, *, streamed=False) -> None:
        if self.record is None:
            return
        self.record(
            self.endpoint.endpoint_id,
            purpose=self.purpose,
            status=error.outcome if error is not None else "ok",
            latency_ms=(time.monotonic() - started) * 1000,
            http_status=outcome_http_status(error),
            error=error,
            streamed=streamed,
        )

    def _retryable(self, error: BaseException) -> bool:
        if not isinstance(error, BotError) or not error.transient:
            return False
        if isinstance(error, BotBusy):
            # Waiting out a full slot wait again would only double a delay already long.
            return False
        retry_after = getattr(error, "retry_after", None)
        return retry_after is None or retry_after <= self.retry.retry_after_cap()

    def _wait(self, state: tenacity.RetryCallState) -> float:
        retry_after = getattr(state.outcome.exception(), "retry_after", None)
        if retry_after is not None:
            return retry_after
        return self.retry.delay(state.attempt_number)

    def _log_retry(self, state: tenacity.RetryCallState) -> None:
        logger.info(
            "Retrying %s in %.2f s: %s", self.url, state.upcoming_sleep, state.outcome.exception()
        )

    def _attempt(self, body: bytes) -> bytes:
        if self.budget is not None:
            self.budget(self.endpoint, self.purpose)
        lease = self.timeout + settings.EVALHUB_BOT_LEASE_MARGIN_SECONDS
        with self.limiter.slot(
            self.endpoint.key, self.max_concurrency, wait=self.slot_wait, lease=lease
        ):
            return self._post(body)

    def _post(self, body: bytes) -> bytes:
        url, timeout = self.url, self.timeout
        headers = request_headers(self.endpoint)
        try:
            with (
                outbound.deadline(timeout),
                self.http.stream(
                    "POST", url, content=body, headers=headers, timeout=timeout
                ) as response,
            ):
                if response.status_code != 200:
                    raise self._http_error(response)
                raw = bytearray()
                for chunk in response.iter_bytes():
                    raw += chunk
                    if len(raw) > MAX_REPLY_BYTES:
                        break
                return bytes(raw)
        except httpx.ConnectTimeout:
            raise BotTimeout(f"no connection within {timeout:g} s", url=url) from None
        except httpx.TimeoutException:
            raise BotTimeout(f"no reply within {timeout:g} s", url=url) from None
        except httpx.ConnectError as error:
            raise connect_error(error, url) from None
        except httpx.HTTPError as error:
            raise BotUnreachable(
                f"connection broken: {error!r}", url=url, summary=CONNECTION_BROKEN
            ) from None

    def _http_error(self, response: httpx.Response) -> BotHTTPError:
        snippet = b""
        if not 300 <= response.status_code < 400:
            for chunk in response.iter_bytes():
                snippet += chunk
                if len(snippet) >= 300:
                    break
        return http_error(response, snippet, self.url)

    def _parse(self, raw: bytes) -> str:
        return self._read(raw)[0]

    def _parse_chat(self, raw: bytes) -> ChatReply:
        text, data = self._read(raw)
        return ChatReply(text, openai_usage(data))

    def _read(self, raw: bytes) -> tuple[str, object]:
        return read_reply(self.protocol, raw, self.max_reply_chars)


def request_headers(endpoint: Endpoint) -> dict[str, str]:
    """What every request to `endpoint` carries, blocking or streamed."""
    headers = {"Content-Type": "application/json"}
    if endpoint.auth_token:
        headers["Authorization"] = f"Bearer {endpoint.auth_token}"
    return headers


def read_reply(protocol: WireProtocol, raw: bytes, max_reply_chars: int) -> tuple[str, object]:
    """A whole (not streamed) reply's text and its JSON document, or the typed error."""
    field_name = protocol.field
    if len(raw) > MAX_REPLY_BYTES:
        raise BotBadReply(f"the reply is larger than {MAX_REPLY_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except RecursionError:  # "[[[[..." deeper than Python's json goes, well under the size cap
        raise BotBadJSON(
            "the reply is JSON nested too deeply", summary="the reply is not usable JSON"
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BotBadJSON(
            f"the reply is not JSON: {_snippet(raw)!r}", summary="the reply is not JSON"
        ) from None
    try:
        text = protocol.text(data)
    except ReplyShapeError as error:
        raise BotBadReply(f"{error}: {_snippet(raw)!r}", summary=str(error)) from None
    # A model's NUL characters are dropped, never refused (evalhub/text.py): the turn,
    # the collection or the judge run waiting for this reply goes on.
    text = without_nul(text).strip()
    if not text:
        raise BotBadReply(f"{field_name} is empty")
    if len(text) > max_reply_chars:
        raise BotBadReply(
            f"{field_name} has {len(text)} characters; the limit is {max_reply_chars}"
        )
    return text, data


CONNECTION_BROKEN = "the connection broke before the reply was complete"


def connect_error(error: httpx.ConnectError, url: str) -> BotError:
    """BotRefused when the address policy refused the host, else BotUnreachable."""
    if isinstance(error.__cause__, outbound.AddressRefused):
        return BotRefused(
            str(error),
            url=url,
            summary="the host resolves to an address outbound requests may not reach "
            "(loopback, private, link-local, multicast or reserved)",
        )
    return BotUnreachable(
        f"cannot connect: {error}",
        url=url,
        summary="cannot connect (connection refused or reset, or the name does not resolve)",
    )


def http_error(response: httpx.Response, snippet: bytes, url: str) -> BotHTTPError:
    """The error for a non-200 answer; `snippet` (the body's start) is for the log only."""
    status = response.status_code
    if 300 <= status < 400:
        summary = message = f"answered HTTP {status} (redirects are not followed)"
    else:
        summary = f"answered HTTP {status}"
        quoted = _snippet(snippet[:300])
        message = summary + (f": {quoted}" if quoted else "")
    retry_after = None
    if status in (429, 503):
        retry_after = parse_retry_after(response.headers.get("Retry-After"))
        if retry_after is not None:
            message += f" (Retry-After {retry_after:g} s)"
            summary += f" (Retry-After {retry_after:g} s)"
    error = BotHTTPError(message, url=url, status=status, retry_after=retry_after, summary=summary)
    error.body_start = snippet[:300].decode("utf-8", errors="replace")
    return error


def _snippet(raw: bytes, size: int = 120) -> str:
    text = raw.decode("utf-8", errors="replace").strip()
    return text if len(text) <= size else text[:size] + "…"
