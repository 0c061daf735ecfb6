"""The async client: a bot's reply as it is written, for pages that show it live (the arena).

    async with aclosing(AsyncBotClient(endpoint).stream_reply(key, turns, 1)) as stream:
        async for chunk in stream:
            if isinstance(chunk, StreamResult):
                ...  # the whole text, tokens, latency, time to the first token
            else:
                ...  # a piece of text

It shares the blocking client's configuration (endpoints/client.py: the endpoint's URL,
protocol, sampling, token, timeout, reply limit), its address policy (the outbound guard
of endpoints/outbound.py checks every address before connecting), its budget (one request
charged before anything is sent), its concurrency limit, its typed errors and its outcome
records (one EndpointCall per call, `streamed` when the reply came as events).

- OpenAI-compatible endpoints are asked with `"stream": true` (and
  `stream_options.include_usage`, so that servers that can report the tokens do); the
  reply is server-sent events `data: {...}` whose `choices[0].delta.content` pieces are
  yielded as they come, until `data: [DONE]` (or a `finish_reason`). A server that
  ignores `stream` and answers with one JSON document is read like the blocking client
  reads it, and yields one piece.
- EvalHub's protocol does not stream: its whole reply is one piece.
- There is one attempt: a failure is raised (BotHTTPError keeps a 429's Retry-After) for
  the caller to decide, since the text already shown cannot be taken back.
- Total deadline: the endpoint's timeout, from connecting to the last event, kept by the
  event loop; a server that stalls longer is BotTimeout.
- Budget: the request is charged before connecting and given back when it never reached
  the endpoint (address refused, no connection, cancelled before sending). A caller that
  stops reading (cancels its task or closes the generator) closes the upstream connection;
  the request counts, and the outcome, "cancelled", keeps the tokens the server reported.
"""

from __future__ import annotations

import asyncio
import json
import time
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field

import httpx
from django.conf import settings
from httpx_sse import EventSource

from evalhub.outbound_policy import Policy
from evalhub.text import without_nul

from . import outbound
from .client import (
    CONNECTION_BROKEN,
    MAX_REPLY_BYTES,
    BotBadJSON,
    BotBadReply,
    BotError,
    BotTimeout,
    BotUnreachable,
    Endpoint,
    EndpointCaller,
    connect_error,
    http_error,
    outcome_http_status,
    read_reply,
    request_headers,
)
from .dbcalls import database
from .protocols import Usage, openai_chat_body, openai_usage


@dataclass(frozen=True)
class StreamResult:
    """The end of a stream: the whole text and what it cost."""

    text: str
    usage: Usage = field(default_factory=Usage)
    latency_ms: int = 0
    first_token_ms: int | None = None
    streamed: bool = False


# One async httpx client per event loop and address policy: pooled connections belong to
# the loop that opened them.
_async_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def async_http_client(*, policy: Policy) -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    clients = _async_clients.setdefault(loop, {})
    if policy not in clients:
        clients[policy] = outbound.make_async_client(policy=policy)
    return clients[policy]


def database_refund(endpoint: Endpoint, day, purpose: str = "other") -> None:
    if endpoint.endpoint_id is None or endpoint.daily_budget is None:
        return
    from .budget import refund

    refund(endpoint.endpoint_id, day, chat=purpose == "chat")


def _today():
    from .budget import today

    return today()


class _Call:
    """What one stream learned so far: for the outcome, the budget and the result."""

    def __init__(self):
        self.started = time.monotonic()
        # Until the request is handed to the connection, and again when no connection was
        # made: nothing reached the endpoint, so its budget gets the request back.
        self.never_sent = True
        self.streamed = False
        self.first_token: float | None = None
        self.parts: list[str] = []
        self.usage = Usage()

    def elapsed_ms(self, since: float | None = None) -> float:
        return ((since or time.monotonic()) - self.started) * 1000

    def take(self, piece: str) -> None:
        if self.first_token is None:
            self.first_token = time.monotonic()
        self.parts.append(piece)


class AsyncBotClient(EndpointCaller):
    """Streams one endpoint's replies; `purpose` is the EndpointCall.Purpose recorded. The
    configuration, guard and budget are the blocking client's (EndpointCaller)."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        refund: Callable[[Endpoint, object, str], None] | None = database_refund,
        **configuration,
    ):
        super().__init__(endpoint, **configuration)
        self.refund = refund

    def stream_reply(
        self, conversation_id: str, turns: Sequence[dict], speaker: int
    ) -> AsyncIterator[str | StreamResult]:
        """The bot's next turn as `speaker` after `turns`, piece by piece, then the result."""
        body = self.protocol.body(conversation_id, turns, speaker, self.endpoint.sampling)
        return self._stream(self._streaming(body))

    def stream_chat(self, messages: Sequence[dict]) -> AsyncIterator[str | StreamResult]:
        """An OpenAI-compatible endpoint's answer to `messages`, piece by piece."""
        if self.endpoint.protocol != "openai":
            raise BotError("only OpenAI-compatible endpoints answer chat messages", url=self.url)
        return self._stream(self._streaming(openai_chat_body(messages, self.endpoint.sampling)))

    def _streaming(self, body: dict) -> dict:
        if self.endpoint.protocol == "openai":
            body = {**body, "stream": True, "stream_options": {"include_usage": True}}
        return body

    async def _stream(self, body: dict) -> AsyncIterator[str | StreamResult]:
        call = _Call()
        charged = None  # the day charged, to give it back
        outcome: BaseException | None = None
        try:
            if self.budget is not None:
                day = _today()
                await database(self.budget, self.endpoint, self.purpose)
                charged = day
            slot = await self._take_slot()
            try:
                async with aclosing(self._exchange(json.dumps(body).encode(), call)) as pieces:
                    async for piece in pieces:
                        yield piece
            finally:
                slot.__exit__(None, None, None)  # a release: quick, and never to be skipped
        except BotError as error:
            error.url = error.url or self.url
            outcome = error
            raise
        except (asyncio.CancelledError, GeneratorExit):
            outcome = asyncio.CancelledError()
            raise
        except Exception as error:
            outcome = error
            raise
        finally:
            await self._settle(call, charged, outcome)
        yield StreamResult(
            text="".join(call.parts).strip(),
            usage=call.usage,
            latency_ms=round(call.elapsed_ms()),
            first_token_ms=self._first_token_ms(call),
            streamed=call.streamed,
        )

    async def _take_slot(self):
        lease = self.timeout + settings.EVALHUB_BOT_LEASE_MARGIN_SECONDS
        slot = self.limiter.slot(
            self.endpoint.key, self.max_concurrency, wait=self.slot_wait, lease=lease
        )
        # The limiters block (a thread semaphore, or Redis): waited for off the loop.
        entering = asyncio.ensure_future(asyncio.to_thread(slot.__enter__))
        try:
            await asyncio.shield(entering)
        except asyncio.CancelledError:
            # The thread may still take the slot after the caller left: give it back then.
            entering.add_done_callback(
                lambda done: done.exception() is None and slot.__exit__(None, None, None)
            )
            raise
        return slot

    def _first_token_ms(self, call: _Call) -> int | None:
        return None if call.first_token is None else round(call.elapsed_ms(call.first_token))

    async def _settle(self, call: _Call, charged, outcome: BaseException | None) -> None:
        """Give back a request that never left, and record the outcome."""
        if charged is not None and call.never_sent and self.refund is not None:
            await database(self.refund, self.endpoint, charged, self.purpose)
        if self.record is None:
            return
        if isinstance(outcome, BotError):
            status, http_status = outcome.outcome, outcome_http_status(outcome)
        elif isinstance(outcome, asyncio.CancelledError):
            status, http_status = "cancelled", None
        elif outcome is not None:
            status, http_status = "error", None
        else:
            status, http_status = "ok", 200
        await database(
            self.record,
            self.endpoint.endpoint_id,
            purpose=self.purpose,
            status=status,
            latency_ms=call.elapsed_ms(),
            http_status=http_status,
            error=outcome,
            streamed=call.streamed,
            first_token_ms=self._first_token_ms(call),
            prompt_tokens=call.usage.prompt_tokens,
            completion_tokens=call.usage.completion_tokens,
        )

    async def _exchange(self, body: bytes, call: _Call) -> AsyncIterator[str]:
        deadline = time.monotonic() + self.timeout

        def left() -> float:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            return remaining

        http = async_http_client(policy=self.policy)
        request = http.build_request(
            "POST",
            self.url,
            content=body,
            headers=request_headers(self.endpoint),
            timeout=httpx.Timeout(self.timeout),
        )
        url = self.url
        try:
            call.never_sent = False
            response = await asyncio.wait_for(http.send(request, stream=True), left())
            try:
                if response.status_code != 200:
                    start = await asyncio.wait_for(_start_of(response), left())
                    raise http_error(response, start, url)
                kind = response.headers.get("content-type", "").split(";")[0].strip()
                if self.endpoint.protocol == "openai" and kind == "text/event-stream":
                    call.streamed = True
                    watch = _Deadline(deadline)
                    try:
                        async with aclosing(self._events(response, call, watch)) as pieces:
                            async for piece in pieces:
                                yield piece
                    finally:
                        watch.cancel()
                else:
                    raw = await asyncio.wait_for(_whole(response), left())
                    text, data = read_reply(self.protocol, raw, self.max_reply_chars)
                    if self.endpoint.protocol == "openai":
                        call.usage = openai_usage(data)
                    call.take(text)
                    yield text
            finally:
                await response.aclose()
        except httpx.ConnectTimeout:
            call.never_sent = True
            raise BotTimeout(f"no connection within {self.timeout:g} s", url=url) from None
        except (TimeoutError, httpx.TimeoutException):
            raise BotTimeout(f"no complete reply within {self.timeout:g} s", url=url) from None
        except httpx.ConnectError as error:
            call.never_sent = True
            raise connect_error(error, url) from None
        except httpx.HTTPError as error:
            raise BotUnreachable(
                f"connection broken: {error!r}", url=url, summary=CONNECTION_BROKEN
            ) from None

    async def _events(
        self, response: httpx.Response, call: _Call, deadline: _Deadline
    ) -> AsyncIterator[str]:
        events = EventSource(response).aiter_sse()
        finished = False
        size = 0
        while True:
            try:
                event = await deadline.wait(anext(events))
            except StopAsyncIteration:
                break
            if event.data.strip() == "[DONE]":
                finished = True
                break
            data = _event_json(event.data)
            if data.get("usage"):
                call.usage = openai_usage(data)
            piece, finish_reason = _delta(data)
            finished = finished or bool(finish_reason)
            if not piece:
                continue
            size += len(piece)
            if size > self.max_reply_chars:
                raise BotBadReply(
                    f"the streamed reply passed {self.max_reply_chars} characters",
                    url=self.url,
                )
            call.take(piece)
            yield piece
        if not finished:
            raise BotUnreachable(
                "the stream ended before [DONE] or a finish_reason",
                url=self.url,
                summary="the stream ended before the reply was complete",
            )
        if not "".join(call.parts).strip():
            raise BotBadReply("the streamed reply is empty", url=self.url)


class _Deadline:
    """The stream's total deadline kept by one timer, not one timer and one task per
    event (`asyncio.wait_for`): at the deadline, the task waiting for the next event is
    cancelled and the wait raises TimeoutError; a wait begun after it raises at once. Only
    waits inside `wait` are cut: the stream's consumer, running in the same task between
    events, never is."""

    def __init__(self, when: float):
        loop = asyncio.get_running_loop()
        self.expired = False
        self._cut = False
        self._waiting: asyncio.Task | None = None
        # `when` is time.monotonic(), the clock of the event loop's default time().
        self._handle = loop.call_later(max(0.0, when - time.monotonic()), self._expire)

    def _expire(self) -> None:
        self.expired = True
        if self._waiting is not None:
            self._cut = True
            self._waiting.cancel()

    async def wait(self, awaitable):
        if self.expired:
            raise TimeoutError
        task = asyncio.current_task()
        self._waiting = task
        try:
            return await awaitable
        except asyncio.CancelledError:
            # Ours alone (no other cancellation pending): the deadline passed.
            if self._cut and task.uncancel() == 0:
                raise TimeoutError from None
            raise
        finally:
            self._waiting = None
            self._cut = False

    def cancel(self) -> None:
        self._handle.cancel()


async def _start_of(response: httpx.Response) -> bytes:
    """Up to 300 bytes of an error's body, for the log."""
    snippet = b""
    async for chunk in response.aiter_bytes():
        snippet += chunk
        if len(snippet) >= 300:
            break
    return snippet


async def _whole(response: httpx.Response) -> bytes:
    raw = bytearray()
    async for chunk in response.aiter_bytes():
        raw += chunk
        if len(raw) > MAX_REPLY_BYTES:
            break
    return bytes(raw)


def _event_json(data: str) -> dict:
    try:
        value = json.loads(data)
    except json.JSONDecodeError:
        raise BotBadJSON(
            f"a streamed event is not JSON: {data[:120]!r}",
            summary="a streamed event is not JSON",
        ) from None
    if not isinstance(value, dict):
        raise BotBadReply("a streamed event is not a JSON object")
    if "error" in value:
        raise BotBadReply(
            f"the stream reported an error: {str(value['error'])[:120]}",
            summary="the stream reported an error",
        )
    return value


def _delta(data: dict) -> tuple[str, str | None]:
    """choices[0].delta.content (or "") and choices[0].finish_reason of one event."""
    choices = data.get("choices")
    if not choices:  # the last event of include_usage carries only the usage
        return "", None
    if not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise BotBadReply('a streamed event has no "choices" list')
    delta = choices[0].get("delta") or {}
    content = delta.get("content") if isinstance(delta, dict) else None
    if content is not None and not isinstance(content, str):
        raise BotBadReply(
            f"choices[0].delta.content must be a string, not {type(content).__name__}"
        )
    # Dropped as the blocking client drops them (read_reply): a model's NULs mean nothing.
    return without_nul(content or ""), choices[0].get("finish_reason")
