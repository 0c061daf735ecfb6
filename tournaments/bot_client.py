"""The client side of the bot endpoint protocol.

EvalHub POSTs JSON to a system's registered endpoint (BotEndpoint):

    {"conversation_id": "<planned key>", "turns": [{"speaker": 0, "text": "..."}, ...],
     "speaker": <index of the speaker whose turn it is>}

with `Content-Type: application/json` and, when the endpoint has a token,
`Authorization: Bearer <token>`, and expects `200` with `{"text": "..."}`: a non-empty
string of at most `max_reply_chars` characters. The whole history is sent every time, so a
bot can be stateless; a retried conversation starts again from the seed under the same
conversation_id. Redirects are not followed: register the final URL.

Errors are typed (BotTimeout, BotUnreachable, BotHTTPError, BotBadJSON, BotBadReply,
BotBusy, LimiterUnavailable), each with `transient` saying whether trying again may help.
Transient errors are retried with exponential backoff (RetryPolicy); the request is
repeated with the same history, so the turns already collected are kept.

Concurrency. An endpoint sees at most `max_concurrency` requests in flight from EvalHub.
When the Celery broker is Redis (production), the limit is a Redis semaphore shared by
every worker process: a sorted set per endpoint whose members are leases that expire, so a
worker killed mid-request frees its slot after the lease (3 × timeout + 5 s) instead of
holding it forever. Time comes from the Redis server, so workers' clocks do not matter.
Without a Redis broker (embedded mode: one process, eager tasks) a process-local
semaphore does the same job. A slot is held only while the request is in flight, not
during the backoff between attempts.
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from django.conf import settings

logger = logging.getLogger(__name__)

DEFAULT_MAX_REPLY_CHARS = 4000
# Bytes read from a reply at most; a bot that streams more is cut off and refused.
MAX_REPLY_BYTES = 256 * 1024
DEFAULT_SLOT_WAIT_SECONDS = 300.0
USER_AGENT = "EvalHub-bot-client/1"


# Errors ---------------------------------------------------------------------------------


class BotError(Exception):
    """A bot endpoint did not give a usable reply."""

    transient = False

    def __init__(self, message: str, *, url: str = ""):
        super().__init__(message)
        self.message = message
        self.url = url
        self.attempts = 1

    def __str__(self) -> str:
        where = f"{self.url}: " if self.url else ""
        tries = f" (gave up after {self.attempts} attempts)" if self.attempts > 1 else ""
        return f"{where}{self.message}{tries}"


class BotTimeout(BotError):
    transient = True


class BotUnreachable(BotError):
    """Connection refused, reset or broken, or the host name does not resolve."""

    transient = True


class BotHTTPError(BotError):
    def __init__(self, message: str, *, url: str = "", status: int):
        super().__init__(message, url=url)
        self.status = status
        # Server errors and "slow down" may pass; a 4xx (bad token, wrong URL) will not.
        self.transient = status >= 500 or status in {408, 425, 429}


class BotBadJSON(BotError):
    """The body is not JSON. Transient: usually a proxy's error page or a truncated body."""

    transient = True


class BotBadReply(BotError):
    """Valid JSON that breaks the protocol (no text, empty, too long, too large).

    Not retried: a bot that answers in the wrong shape does so every time."""


class BotBusy(BotError):
    """No concurrency slot for the endpoint came free within the wait."""

    transient = True


class LimiterUnavailable(BotError):
    """The Redis semaphore could not be reached; the bot was not asked."""

    transient = True


# Retries --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """`attempts` requests at most; the n-th retry waits base_delay × 2^(n-1), capped at
    max_delay, scaled by a random factor in [0.5, 1] when `jitter` is on so that many
    dialogues failing together do not come back in lockstep."""

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    jitter: bool = True

    def __post_init__(self):
        if self.attempts < 1:
            raise ValueError("at least one attempt is needed")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("delays cannot be negative")

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number `retry` (1 for the first retry)."""
        delay = min(self.max_delay, self.base_delay * 2 ** (retry - 1))
        return delay * random.uniform(0.5, 1.0) if self.jitter else delay

    @classmethod
    def from_settings(cls) -> RetryPolicy:
        return cls(
            attempts=getattr(settings, "EVALHUB_BOT_RETRY_ATTEMPTS", cls.attempts),
            base_delay=getattr(settings, "EVALHUB_BOT_RETRY_BASE_DELAY", cls.base_delay),
            max_delay=getattr(settings, "EVALHUB_BOT_RETRY_MAX_DELAY", cls.max_delay),
        )


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
class Endpoint:
    """What the client needs of a BotEndpoint; `key` names it for the concurrency limit."""

    key: str
    url: str
    auth_token: str = ""
    timeout: float = 15.0
    max_concurrency: int = 2

    @classmethod
    def from_model(cls, endpoint) -> Endpoint:
        return cls(
            key=f"endpoint-{endpoint.pk}",
            url=endpoint.url,
            auth_token=endpoint.auth_token,
            timeout=endpoint.timeout_seconds,
            max_concurrency=endpoint.max_concurrency,
        )


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    # urllib would turn a redirected POST into a GET without the body; refuse instead.
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_opener = urllib.request.build_opener(_NoRedirects)


class BotClient:
    """Asks one endpoint for turns, with retries and the endpoint's concurrency limit."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        retry: RetryPolicy | None = None,
        limiter: Limiter | None = None,
        max_reply_chars: int | None = None,
        slot_wait: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        scheme = urllib.parse.urlsplit(endpoint.url).scheme
        if scheme not in {"http", "https"}:
            raise BotError(f"only http and https endpoints are supported, not {scheme!r}")
        self.endpoint = endpoint
        self.retry = retry or RetryPolicy.from_settings()
        self.limiter = limiter or default_limiter()
        self.max_reply_chars = max_reply_chars or getattr(
            settings, "EVALHUB_BOT_MAX_REPLY_CHARS", DEFAULT_MAX_REPLY_CHARS
        )
        self.slot_wait = (
            slot_wait
            if slot_wait is not None
            else getattr(settings, "EVALHUB_BOT_SLOT_WAIT_SECONDS", DEFAULT_SLOT_WAIT_SECONDS)
        )
        self.sleep = sleep

    def reply(self, conversation_id: str, turns: Sequence[dict], speaker: int) -> str:
        """The bot's next turn as `speaker`, after `turns` ([{"speaker", "text"}, ...])."""
        body = json.dumps(
            {
                "conversation_id": conversation_id,
                "turns": [{"speaker": t["speaker"], "text": t["text"]} for t in turns],
                "speaker": speaker,
            }
        ).encode()
        for attempt in range(1, self.retry.attempts + 1):
            try:
                with self.limiter.slot(
                    self.endpoint.key,
                    self.endpoint.max_concurrency,
                    wait=self.slot_wait,
                    lease=3 * self.endpoint.timeout + 5,
                ):
                    raw = self._post(body)
                return self._parse(raw)
            except BotError as error:
                error.url = error.url or self.endpoint.url
                if not error.transient or attempt == self.retry.attempts or _no_retry(error):
                    error.attempts = attempt
                    raise
                delay = self.retry.delay(attempt)
                logger.info("Retrying %s in %.2f s: %s", self.endpoint.url, delay, error)
                self.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _post(self, body: bytes) -> bytes:
        url, timeout = self.endpoint.url, self.endpoint.timeout
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }
        if self.endpoint.auth_token:
            headers["Authorization"] = f"Bearer {self.endpoint.auth_token}"
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        try:
            with _opener.open(request, timeout=timeout) as response:
                return response.read(MAX_REPLY_BYTES + 1)
        except urllib.error.HTTPError as error:
            with error:
                snippet = _snippet(error.read(300))
            if 300 <= error.code < 400:
                message = f"answered HTTP {error.code} (redirects are not followed)"
            else:
                message = f"answered HTTP {error.code}" + (f": {snippet}" if snippet else "")
            raise BotHTTPError(message, url=url, status=error.code) from None
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise BotTimeout(f"no connection within {timeout:g} s", url=url) from None
            raise BotUnreachable(f"cannot connect: {error.reason}", url=url) from None
        except TimeoutError:
            raise BotTimeout(f"no reply within {timeout:g} s", url=url) from None
        except (http.client.HTTPException, OSError) as error:
            raise BotUnreachable(f"connection broken: {error!r}", url=url) from None

    def _parse(self, raw: bytes) -> str:
        if len(raw) > MAX_REPLY_BYTES:
            raise BotBadReply(f"the reply is larger than {MAX_REPLY_BYTES} bytes")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise BotBadJSON(f"the reply is not JSON: {_snippet(raw)!r}") from None
        if not isinstance(data, dict) or "text" not in data:
            raise BotBadReply(f'the reply has no "text": {_snippet(raw)!r}')
        text = data["text"]
        if not isinstance(text, str):
            raise BotBadReply(f'"text" must be a string, not {type(text).__name__}')
        text = text.strip()
        if not text:
            raise BotBadReply('"text" is empty')
        if len(text) > self.max_reply_chars:
            raise BotBadReply(
                f'"text" has {len(text)} characters; the limit is {self.max_reply_chars}'
            )
        return text


def _no_retry(error: BotError) -> bool:
    # Waiting out a full slot wait again would only double a delay that is already long.
    return isinstance(error, BotBusy)


def _snippet(raw: bytes, size: int = 120) -> str:
    text = raw.decode("utf-8", errors="replace").strip()
    return text if len(text) <= size else text[:size] + "…"
