"""The bot's reply streamed as the page's script reads it: a JSON post makes it due, the
stream (annotation/chat_replies.py through endpoints/relay.py) relays the pieces of a fake
streaming OpenAI-compatible bot on 127.0.0.1 and stores the whole reply once; a stall,
malformed events, a stream cut short and a 429 are explained to the worker with nothing
half-stored; a worker who leaves mid-stream closes the bot's request, which alone is
counted; nobody streams another worker's assignment; and no WSGI view asks a bot."""

import asyncio
import inspect
from contextlib import aclosing

import pytest
from django.test import Client

from annotation import chat
from annotation.chat_replies import reply_events
from annotation.views import chat as chat_views
from annotation.views import worker as worker_views
from endpoints.models import BotEndpoint, EndpointCall, EndpointUsage
from endpoints.relay import Piece
from evalhub.models import Conversation, Turn
from tests import factories
from tests.annotation.chat_setup import (
    bot_system,
    chat_campaign,
    items,
    say,
    say_and_stream,
    start,
    stream,
    url,
)
from tests.endpoints import bots, sse_fake

# The stream reaches the database from worker threads (sync_to_async).
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def servers():
    with sse_fake.StreamingPool() as pool:
        yield pool.start


def talking_to(client, server, *, timeout=5.0, **config):
    campaign = chat_campaign(
        [bot_system(server, slug="streamer", timeout=timeout)], batch_size=1, config=config
    )
    assignment = start(client, campaign)
    return assignment, items(assignment)[0]


def bot_turns():
    return list(Turn.objects.filter(speaker=1).values_list("text", flat=True))


def test_the_reply_streams_piece_by_piece_and_is_stored_once_whole(client, servers):
    server = servers(sse_fake.words("The ", "sea ", "is ", "deep."))
    assignment, item = talking_to(client, server)
    say(client, assignment, item, "Tell me about the sea", 0, json=True)
    found = stream(client, assignment, item)
    assert [data["text"] for name, data in found if name == "piece"] == [
        "The ",
        "sea ",
        "is ",
        "deep.",
    ]
    name, end = found[-1]
    assert name == "end" and (end["status"], end["text"], end["error"]) == (
        "done",
        "The sea is deep.",
        "",
    )
    assert [t["text"] for t in end["state"]["turns"]] == [
        "Tell me about the sea",
        "The sea is deep.",
    ]
    assert end["state"]["can_send"] and not end["state"]["waiting"]
    assert server.requests[0]["stream"] is True
    assert bot_turns() == ["The sea is deep."]
    assert Turn.objects.get(speaker=1).latency_ms is not None
    call = EndpointCall.objects.get()
    assert (call.purpose, call.status, call.streamed) == ("chat", "ok", True)
    assert EndpointUsage.objects.get().chat_requests == 1


def test_a_second_stream_of_the_reply_asks_nothing_and_relays_what_was_stored(client, servers):
    server = servers(sse_fake.words("once"))
    assignment, item = talking_to(client, server)
    say_and_stream(client, assignment, item, "Hello", 0)
    again = stream(client, assignment, item)
    assert [name for name, _ in again] == ["end"]
    assert again[0][1]["text"] == "once" and len(server.requests) == 1
    assert bot_turns() == ["once"]


def test_two_streams_at_once_ask_the_bot_once_and_both_see_the_reply(client, servers):
    server = servers(sse_fake.words("only ", "one", pause=0.2))
    assignment, item = talking_to(client, server)
    say(client, assignment, item, "Hello", 0, json=True)

    async def read():
        async with aclosing(reply_events(assignment, item)) as events:
            return [event async for event in events]

    async def both():
        return await asyncio.gather(read(), read())

    first, second = asyncio.run(both())
    assert first[-1].text == second[-1].text == "only one"
    assert len(server.requests) == 1 and bot_turns() == ["only one"]


def test_a_double_submitted_message_stores_one_turn_and_one_reply(client, servers):
    server = servers(sse_fake.words("hi"))
    assignment, item = talking_to(client, server)
    say(client, assignment, item, "Hello", 0, json=True)
    again = say(client, assignment, item, "Hello", 0, json=True)
    assert again.status_code == 200 and len(again.json()["turns"]) == 1
    stream(client, assignment, item)
    stream(client, assignment, item)
    assert Turn.objects.count() == 2 and len(server.requests) == 1


def check_failed_and_nothing_half_stored(client, assignment, item, message):
    end = stream(client, assignment, item)[-1][1]
    assert end["status"] == "failed" and message in end["error"]
    assert end["state"]["can_retry"] and end["state"]["can_end"]
    assert bot_turns() == []
    stored = Conversation.objects.get().metadata["chat"]
    assert message in stored["error"] and stored["streaming_until"] is None
    return end


def test_a_bot_that_stalls_mid_stream_times_out_and_nothing_is_stored(client, servers, settings):
    settings.EVALHUB_CHAT_REPLY_TIMEOUT_SECONDS = 1.0
    server = servers(sse_fake.words("slow ", "and ", "slower", pause=2.0))
    assignment, item = talking_to(client, server)
    say(client, assignment, item, "Hello", 0, json=True)
    check_failed_and_nothing_half_stored(client, assignment, item, "took too long")


def test_malformed_events_are_a_clear_error_and_nothing_is_stored(client, servers):
    events = (sse_fake.delta("fine "), '{"choices": [{"delta": ')
    server = servers(lambda payload: sse_fake.Stream(events))
    assignment, item = talking_to(client, server)
    say(client, assignment, item, "Hello", 0, json=True)
    check_failed_and_nothing_half_stored(client, assignment, item, "did not give a usable answer")


def test_a_stream_cut_short_is_a_clear_error_and_nothing_is_stored(client, servers):
    cut = sse_fake.Stream((sse_fake.delta("half an "),), done=False, cut=True)
    server = servers(lambda payload: cut)
    assignment, item = talking_to(client, server)
    say(client, assignment, item, "Hello", 0, json=True)
    check_failed_and_nothing_half_stored(client, assignment, item, "broke off its answer")


def test_a_429_says_to_wait_and_the_turn_can_be_asked_again(client, servers):
    limited = sse_fake.Stream(status=429, headers=(("Retry-After", "30"),), body=b"{}")
    calls = []

    def script(payload):
        calls.append(payload)
        return limited if len(calls) == 1 else sse_fake.words("better now")(payload)

    assignment, item = talking_to(client, servers(script))
    say(client, assignment, item, "Hello", 0, json=True)
    check_failed_and_nothing_half_stored(
        client, assignment, item, "busy right now (it asks to wait 30 s)"
    )
    retried = client.post(url("retry", assignment, item, json=True)).json()
    assert retried["waiting"] and retried["error"] == ""
    end = stream(client, assignment, item)[-1][1]
    assert end["status"] == "done" and bot_turns() == ["better now"]


def read_then_leave(assignment, item, pieces: int) -> list:
    """Read `pieces` pieces of the reply, then go away (the browser closed the tab)."""

    async def read():
        seen = []
        async with aclosing(reply_events(assignment, item)) as events:
            async for event in events:
                seen.append(event)
                if len(seen) == pieces:
                    break
        return seen

    return asyncio.run(read())


def test_a_worker_who_leaves_mid_stream_closes_the_bots_request_and_only_it_counts(client, servers):
    server = servers(sse_fake.words(*[f"w{i} " for i in range(100)], pause=0.05))
    assignment, item = talking_to(client, server)
    say(client, assignment, item, "Hello", 0, json=True)
    seen = read_then_leave(assignment, item, 2)
    assert all(isinstance(event, Piece) for event in seen)
    assert server.disconnected.wait(10), "the bot was left writing to nobody"
    assert bot_turns() == []  # nothing half-written is kept
    state = chat.chat_state(assignment, item)
    assert state.error == chat.INTERRUPTED_MESSAGE and state.can_retry
    usage = EndpointUsage.objects.get()
    assert (usage.requests, usage.chat_requests) == (1, 1)
    assert EndpointCall.objects.get().status == "cancelled"


def test_an_evalhub_protocol_bot_answers_whole(client):
    with bots.BotPool() as pool:
        server = pool.start(bots.echo)
        system = factories.system(slug="whole-bot")
        BotEndpoint.objects.create(
            system=system, url=server.url, timeout_seconds=5, allow_other_owners=True
        )
        campaign = chat_campaign([system], batch_size=1)
        assignment = start(client, campaign)
        item = items(assignment)[0]
        say(client, assignment, item, "Hello bot", 0, json=True)
        found = stream(client, assignment, item)
    assert [name for name, _ in found] == ["piece", "end"]
    assert found[-1][1]["text"] == "echo: Hello bot" and bot_turns() == ["echo: Hello bot"]


def test_another_worker_cannot_stream_my_reply(client, servers):
    server = servers(sse_fake.words("private"))
    assignment, item = talking_to(client, server, conversations_per_system=2)
    say(client, assignment, item, "Hello", 0, json=True)
    stranger = Client()
    start(stranger, assignment.campaign, worker="w2")
    response = stranger.get(url("stream", assignment, item))
    assert response.status_code == 404
    assert Client().get(url("stream", assignment, item)).status_code == 404
    assert server.requests == [] and bot_turns() == []
    assert chat.chat_state(assignment, item).due  # still the owner's to ask


def test_no_wsgi_view_asks_a_bot(client, servers):
    """The page and the JSON actions store and redraw only: the bot's request is opened by
    the stream, an async view, and by the form posts' async wait, never by a sync view."""
    server = servers(sse_fake.words("later"))
    assignment, item = talking_to(client, server, min_turns=1)
    say(client, assignment, item, "Hello", 0, json=True)
    client.get(assignment.get_absolute_url())
    client.post(url("retry", assignment, item, json=True))
    assert server.requests == []
    assert inspect.iscoroutinefunction(chat_views.chat_stream)
    assert inspect.iscoroutinefunction(chat_views.chat_action.__wrapped__)
    assert not inspect.iscoroutinefunction(worker_views.assignment_page)
    stream(client, assignment, item)
    assert len(server.requests) == 1 and bot_turns() == ["later"]
