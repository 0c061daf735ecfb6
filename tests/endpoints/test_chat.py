"""Chat campaigns reach systems through their endpoints: who may use which endpoint, both
protocols (OpenAI-compatible replies streamed, EvalHub's whole), the budget, and the
messages a worker sees when a bot fails."""

import asyncio
from contextlib import aclosing

import pytest

from endpoints import chat
from endpoints.chat import ReplyFailed
from endpoints.client import BotClient, BudgetExhausted, Endpoint, LocalLimiter, RetryPolicy
from endpoints.models import BotEndpoint, EndpointCall, EndpointUsage
from endpoints.streaming import StreamResult
from tests import factories
from tests.endpoints import bots, openai_fake, sse_fake

# The stream reaches the database from worker threads (sync_to_async).
pytestmark = pytest.mark.django_db(transaction=True)
TURNS = [{"speaker": 0, "text": "Hello bot"}]


@pytest.fixture
def evalhub_bot():
    with bots.BotPool() as pool:
        yield pool.start(bots.echo)


def endpoint(server_url, owner=None, **fields):
    system = factories.system(owner)
    BotEndpoint.objects.create(system=system, url=server_url, **{"timeout_seconds": 5, **fields})
    return system


def owner_id(owner=None):
    """The campaign owner a chat reply is asked for (None: a campaign nobody owns)."""
    return owner.pk if owner else None


def pieces_and_text(owner_id, system, conversation_id, turns) -> tuple[list[str], str]:
    """What a chat's stream yields: the pieces, and the whole reply at the end."""
    endpoint = chat.chat_endpoint(owner_id, system)

    async def read():
        pieces, result = [], None
        async with aclosing(chat.stream_reply(endpoint, conversation_id, turns)) as stream:
            async for chunk in stream:
                if isinstance(chunk, StreamResult):
                    result = chunk
                else:
                    pieces.append(chunk)
        return pieces, result.text

    return asyncio.run(read())


def reply(owner_id, system, conversation_id, turns) -> str:
    return pieces_and_text(owner_id, system, conversation_id, turns)[1]


def test_a_reply_comes_through_the_evalhub_protocol_as_speaker_1(evalhub_bot):
    owner = factories.user()
    system = endpoint(evalhub_bot.url, owner)
    text = reply(owner_id(owner), system, "chat-1", TURNS)
    assert text == "echo: Hello bot"
    assert evalhub_bot.requests[0]["speaker"] == 1
    assert evalhub_bot.requests[0]["conversation_id"] == "chat-1"


def test_a_reply_streams_through_the_openai_protocol():
    with sse_fake.StreamingPool() as pool:
        server = pool.start(sse_fake.words("echo: ", "Hello ", "bot"))
        owner = factories.user()
        system = endpoint(server.base_url, owner, protocol="openai", model_name="m")
        pieces, text = pieces_and_text(owner_id(owner), system, "chat-1", TURNS)
        assert pieces == ["echo: ", "Hello ", "bot"] and text == "echo: Hello bot"
        assert server.requests[0]["stream"] is True
        assert server.requests[0]["messages"][-1] == {"role": "user", "content": "Hello bot"}
    call = EndpointCall.objects.get()
    assert (call.purpose, call.status, call.streamed) == ("chat", "ok", True)


def test_an_openai_server_that_ignores_stream_is_read_whole():
    with openai_fake.FakePool() as pool:
        server = pool.start(openai_fake.echo)
        owner = factories.user()
        system = endpoint(server.base_url, owner, protocol="openai", model_name="m")
        assert reply(owner_id(owner), system, "chat-1", TURNS) == "echo: Hello bot"


def test_another_owners_endpoint_is_not_called_without_their_consent(evalhub_bot):
    system = endpoint(evalhub_bot.url, factories.user())
    with pytest.raises(ReplyFailed) as failed:
        reply(owner_id(factories.user()), system, "chat-1", TURNS)
    assert "can no longer be reached" in failed.value.message
    assert failed.value.transient is False and evalhub_bot.requests == []


def test_a_system_without_an_endpoint_fails_clearly():
    system = factories.system()
    with pytest.raises(ReplyFailed, match="can no longer be reached"):
        reply(owner_id(), system, "chat-1", TURNS)


def test_a_spent_budget_is_a_clear_message_and_nothing_is_sent(evalhub_bot):
    owner = factories.user()
    system = endpoint(evalhub_bot.url, owner, daily_budget=1, chat_share=100)
    reply(owner_id(owner), system, "chat-1", TURNS)
    with pytest.raises(ReplyFailed, match="answered all the messages it may answer today"):
        reply(owner_id(owner), system, "chat-1", TURNS)
    assert len(evalhub_bot.requests) == 1
    assert EndpointUsage.objects.get().requests == 1


def collection_client(system):
    """A tournament's client for the system's endpoint (what collection builds)."""
    return BotClient(
        Endpoint.from_model(system.endpoint),
        retry=RetryPolicy(attempts=1, base_delay=0, max_delay=0),
        limiter=LocalLimiter(),
        purpose="collection",
    )


def test_chats_spend_their_share_only_and_tournaments_keep_the_rest(evalhub_bot):
    owner = factories.user()
    system = endpoint(evalhub_bot.url, owner, daily_budget=5, chat_share=40)  # 2 for chats
    for n in range(2):
        reply(owner_id(owner), system, f"chat-{n}", TURNS)
    with pytest.raises(ReplyFailed, match="answered all the messages it may answer today") as out:
        reply(owner_id(owner), system, "chat-2", TURNS)
    assert "ChatShareExhausted" in out.value.detail and "(2 of 5 requests)" in out.value.detail
    for n in range(3):  # the rest of the budget is the tournaments' and judges'
        assert collection_client(system).reply(f"t-{n}", TURNS, 1) == "echo: Hello bot"
    with pytest.raises(BudgetExhausted):
        collection_client(system).reply("t-3", TURNS, 1)
    assert len(evalhub_bot.requests) == 5
    usage = EndpointUsage.objects.get()
    assert (usage.requests, usage.chat_requests) == (5, 2)
    last_chat = EndpointCall.objects.filter(purpose="chat").order_by("-id")[0]
    assert last_chat.status == "budget_exhausted"


def test_a_budget_tournaments_spent_stops_chats_with_the_same_message(evalhub_bot):
    owner = factories.user()
    system = endpoint(evalhub_bot.url, owner, daily_budget=2, chat_share=50)
    for n in range(2):
        collection_client(system).reply(f"t-{n}", TURNS, 1)
    with pytest.raises(ReplyFailed, match="answered all the messages it may answer today") as out:
        reply(owner_id(owner), system, "chat-1", TURNS)
    assert "BudgetExhausted: " in out.value.detail and "daily budget of 2" in out.value.detail
    assert len(evalhub_bot.requests) == 2


def test_a_server_error_is_explained_after_one_attempt():
    with bots.BotPool() as pool:
        server = pool.start(bots.always(500))
        owner = factories.user()
        system = endpoint(server.url, owner)
        with pytest.raises(ReplyFailed, match="answered with an error \\(HTTP 500\\)") as failed:
            reply(owner_id(owner), system, "chat-1", TURNS)
        assert len(server.requests) == 1 and "HTTP 500" in failed.value.detail


def test_a_stopped_or_refused_bot_is_said_to_be_unreachable(settings):
    settings.EVALHUB_OUTBOUND_ALLOW = []
    owner = factories.user()
    system = endpoint("http://127.0.0.1:9/reply", owner)

    with pytest.raises(ReplyFailed) as failed:
        reply(owner_id(owner), system, "chat-1", TURNS)

    assert (
        failed.value.message == "The chatbot cannot be reached right now, or broke off its answer."
    )
    assert "127.0.0.1" not in failed.value.message


def test_a_429_says_how_long_the_bot_asks_to_wait():
    with sse_fake.StreamingPool() as pool:
        limited = sse_fake.Stream(status=429, headers=(("Retry-After", "30"),), body=b"{}")
        server = pool.start(lambda payload: limited)
        owner = factories.user()
        system = endpoint(server.base_url, owner, protocol="openai", model_name="m")
        with pytest.raises(ReplyFailed) as failed:
            reply(owner_id(owner), system, "chat-1", TURNS)
    assert failed.value.message == "The chatbot is busy right now (it asks to wait 30 s)."


def test_the_whole_stream_fits_the_chat_cap(settings):
    settings.EVALHUB_CHAT_REPLY_TIMEOUT_SECONDS = 3
    owner = factories.user()
    system = endpoint("http://127.0.0.1:9/", owner, timeout_seconds=60)
    assert chat.chat_endpoint(owner_id(owner), system).timeout == 3


def test_staff_need_the_owners_consent_too(evalhub_bot):
    staff = factories.user(staff=True)
    shared = endpoint(evalhub_bot.url, factories.user(), allow_other_owners=True)
    endpoint(evalhub_bot.url, factories.user())
    factories.system(staff)  # no endpoint
    assert list(chat.chat_systems(staff)) == [shared]


def test_a_researcher_may_chat_with_their_own_and_shared_endpoints(evalhub_bot):
    researcher = factories.user()
    own = endpoint(evalhub_bot.url, researcher)
    shared = endpoint(evalhub_bot.url, factories.user(), allow_other_owners=True)
    endpoint(evalhub_bot.url, factories.user())
    assert set(chat.chat_systems(researcher)) == {own, shared}


def test_an_endpoint_with_no_chat_share_is_not_offered_to_chat_campaigns(evalhub_bot):
    researcher = factories.user()
    endpoint(evalhub_bot.url, researcher, chat_share=0)
    shared = endpoint(evalhub_bot.url, factories.user(), allow_other_owners=True, chat_share=1)
    assert list(chat.chat_systems(researcher)) == [shared]


def test_nobody_logged_in_may_chat_with_any(evalhub_bot):
    from django.contrib.auth.models import AnonymousUser

    endpoint(evalhub_bot.url, factories.user(), allow_other_owners=True)
    assert not chat.chat_systems(AnonymousUser()).exists()
    assert not chat.chat_systems(None).exists()
