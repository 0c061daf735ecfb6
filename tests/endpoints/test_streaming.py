"""The async streaming client against local servers on 127.0.0.1: OpenAI-compatible
server-sent events, EvalHub's protocol in one piece, the typed failures, the shared
budget and address policy, and a caller that stops reading."""

import asyncio
import json
from contextlib import aclosing

import pytest

from endpoints.client import (
    BotBadJSON,
    BotHTTPError,
    BotRefused,
    BotTimeout,
    BotUnreachable,
    BudgetExhausted,
    Endpoint,
    LocalLimiter,
)
from endpoints.models import BotEndpoint, EndpointCall, EndpointUsage
from endpoints.streaming import AsyncBotClient, StreamResult
from evalhub.outbound_policy import Policy
from tests import factories
from tests.endpoints import bots, sse_fake

# The client reaches the database from a worker thread (sync_to_async).
pytestmark = pytest.mark.django_db(transaction=True)

TURNS = [{"speaker": 0, "text": "hello"}]


@pytest.fixture
def streams():
    with sse_fake.StreamingPool() as pool:
        yield pool.start


@pytest.fixture
def evalhub_bots():
    with bots.BotPool() as pool:
        yield pool.start


def stored(url, *, protocol="openai", **fields) -> BotEndpoint:
    system = factories.system(factories.user(), slug=f"bot-{BotEndpoint.objects.count()}")
    return BotEndpoint.objects.create(
        system=system, url=url, protocol=protocol, model_name="m", timeout_seconds=5, **fields
    )


def client(endpoint: BotEndpoint, **options) -> AsyncBotClient:
    target = Endpoint.from_model(endpoint)
    if "timeout" in options:
        target = Endpoint(**{**target.__dict__, "timeout": options.pop("timeout")})
    return AsyncBotClient(target, limiter=LocalLimiter(), purpose="chat", **options)


async def collect(stream):
    pieces = []
    async with aclosing(stream) as chunks:
        async for chunk in chunks:
            pieces.append(chunk)
    return pieces


def test_an_openai_stream_yields_the_pieces_then_the_result(streams):
    server = streams(sse_fake.words("Hel", "lo", " there"))
    endpoint = stored(server.base_url)
    chunks = asyncio.run(collect(client(endpoint).stream_reply("c", TURNS, 1)))
    *pieces, result = chunks
    assert pieces == ["Hel", "lo", " there"]
    assert isinstance(result, StreamResult) and result.text == "Hello there"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (7, 3)
    assert result.streamed and result.first_token_ms <= result.latency_ms
    sent = server.requests[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["messages"] == [{"role": "user", "content": "hello"}]
    call = EndpointCall.objects.get()
    assert (call.status, call.http_status, call.streamed, call.purpose) == (
        "ok",
        200,
        True,
        "chat",
    )
    assert (call.prompt_tokens, call.completion_tokens) == (7, 3)
    assert call.first_token_ms is not None
    assert EndpointUsage.objects.get(endpoint=endpoint).requests == 1


def test_a_streamed_nul_is_dropped_from_the_pieces_and_the_text(streams):
    server = streams(sse_fake.words("Hel\x00", "\x00", "lo"))
    chunks = asyncio.run(collect(client(stored(server.base_url)).stream_reply("c", TURNS, 1)))
    *pieces, result = chunks
    assert pieces == ["Hel", "lo"] and result.text == "Hello"


def test_the_evalhub_protocol_comes_in_one_piece(evalhub_bots):
    server = evalhub_bots(bots.echo)
    endpoint = stored(server.url, protocol="evalhub")
    chunks = asyncio.run(collect(client(endpoint).stream_reply("c", TURNS, 1)))
    assert chunks[0] == "echo: hello" and chunks[1].text == "echo: hello"
    assert not chunks[1].streamed
    assert server.requests[0] == {"conversation_id": "c", "turns": TURNS, "speaker": 1}
    call = EndpointCall.objects.get()
    assert (call.status, call.streamed) == ("ok", False)


def test_a_server_that_ignores_stream_is_read_whole(streams):
    body = json.dumps({"choices": [{"message": {"content": "all at once"}}]}).encode()
    server = streams(lambda payload: sse_fake.Stream(body=body))
    chunks = asyncio.run(collect(client(stored(server.base_url)).stream_reply("c", TURNS, 1)))
    assert chunks[0] == "all at once" and chunks[-1].text == "all at once"


def test_a_malformed_event_is_bad_json_and_recorded(streams):
    events = (sse_fake.delta("fine"), '{"choices": [{"delta": ')
    server = streams(lambda payload: sse_fake.Stream(events))
    endpoint = stored(server.base_url)
    seen = []

    async def read():
        async with aclosing(client(endpoint).stream_reply("c", TURNS, 1)) as chunks:
            async for chunk in chunks:
                seen.append(chunk)

    with pytest.raises(BotBadJSON):
        asyncio.run(read())
    assert seen == ["fine"]
    call = EndpointCall.objects.get()
    assert (call.status, call.message) == ("invalid_json", "a streamed event is not JSON")


def test_a_server_that_closes_early_is_unreachable(streams):
    server = streams(
        lambda payload: sse_fake.Stream((sse_fake.delta("half"),), done=False, cut=True)
    )
    endpoint = stored(server.base_url)
    with pytest.raises(BotUnreachable):
        asyncio.run(collect(client(endpoint).stream_reply("c", TURNS, 1)))
    call = EndpointCall.objects.get()
    assert call.status == "unreachable" and call.streamed
    assert EndpointUsage.objects.get(endpoint=endpoint).requests == 1  # it was sent


def test_a_429_keeps_its_retry_after_and_is_not_retried(streams):
    limited = sse_fake.Stream(
        status=429, body=b'{"error": {"message": "slow down"}}', headers=(("Retry-After", "7"),)
    )
    server = streams(lambda payload: limited)
    endpoint = stored(server.base_url)
    with pytest.raises(BotHTTPError) as raised:
        asyncio.run(collect(client(endpoint).stream_reply("c", TURNS, 1)))
    assert (raised.value.status, raised.value.retry_after) == (429, 7.0)
    assert len(server.requests) == 1
    call = EndpointCall.objects.get()
    assert (call.status, call.http_status, call.message) == (
        "http_error",
        429,
        "answered HTTP 429 (Retry-After 7 s)",
    )


def test_a_stall_beyond_the_timeout_is_a_timeout(streams):
    server = streams(sse_fake.words("slow", "er", pause=1.0))
    endpoint = stored(server.base_url)
    seen = []

    async def read():
        async with aclosing(client(endpoint, timeout=0.3).stream_reply("c", TURNS, 1)) as chunks:
            async for chunk in chunks:
                seen.append(chunk)

    with pytest.raises(BotTimeout):
        asyncio.run(read())
    assert seen == ["slow"]
    call = EndpointCall.objects.get()
    assert call.status == "timeout" and call.latency_ms < 1000


def test_a_cancelled_stream_closes_the_upstream_connection_and_counts_once(streams):
    pieces = [f"w{i} " for i in range(60)]
    server = streams(sse_fake.words(*pieces, pause=0.05))
    endpoint = stored(server.base_url)
    first = []

    async def read():
        async for chunk in client(endpoint).stream_reply("c", TURNS, 1):
            first.append(chunk)  # the caller is cancelled while waiting for the next piece

    async def cancel_early():
        task = asyncio.create_task(read())
        while not first:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_early())
    assert first[0] == "w0 " and len(first) < len(pieces)
    assert server.disconnected.wait(3)
    call = EndpointCall.objects.get()
    assert (call.status, call.error_class) == ("cancelled", "CancelledError")
    assert call.message == "the caller stopped reading the stream"
    assert EndpointUsage.objects.get(endpoint=endpoint).requests == 1


def test_closing_the_generator_early_is_a_cancellation_too(streams):
    server = streams(sse_fake.words(*[f"w{i} " for i in range(60)], pause=0.05))
    endpoint = stored(server.base_url)

    async def first_piece():
        async with aclosing(client(endpoint).stream_reply("c", TURNS, 1)) as chunks:
            async for chunk in chunks:
                return chunk

    assert asyncio.run(first_piece()) == "w0 "
    assert server.disconnected.wait(3)
    assert EndpointCall.objects.get().status == "cancelled"


def test_a_refused_address_is_checked_before_connecting_and_refunded(streams):
    server = streams(sse_fake.words("never"))
    endpoint = stored(server.base_url)
    with pytest.raises(BotRefused):
        asyncio.run(collect(client(endpoint, policy=Policy()).stream_reply("c", TURNS, 1)))
    assert server.requests == []
    assert EndpointCall.objects.get().status == "refused"
    usage = EndpointUsage.objects.get(endpoint=endpoint)
    assert (usage.requests, usage.chat_requests) == (0, 0)  # a chat's charge, given back


def test_the_budget_is_shared_with_the_blocking_client(streams):
    server = streams(sse_fake.words("one"))
    endpoint = stored(server.base_url, daily_budget=1, chat_share=100)
    asyncio.run(collect(client(endpoint).stream_reply("c", TURNS, 1)))
    with pytest.raises(BudgetExhausted):
        asyncio.run(collect(client(endpoint).stream_reply("c", TURNS, 1)))
    assert len(server.requests) == 1
    statuses = list(EndpointCall.objects.order_by("id").values_list("status", flat=True))
    assert statuses == ["ok", "budget_exhausted"]
    assert EndpointUsage.objects.get(endpoint=endpoint).requests == 1


def test_the_token_is_sent_as_the_blocking_client_sends_it(streams):
    server = streams(sse_fake.words("ok"))
    endpoint = stored(server.base_url, auth_token="sk-stream-123")
    asyncio.run(collect(client(endpoint).stream_chat([{"role": "user", "content": "judge"}])))
    assert server.requests[0]["messages"] == [{"role": "user", "content": "judge"}]
