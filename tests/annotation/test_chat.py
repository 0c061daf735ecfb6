"""A worker's live chat through its form posts (which wait for the whole reply, as a page
without JavaScript does): turns stored in the catalog, bot failures, retries, ending,
flags, idempotency, ownership, CSRF and the rate limit. The bots are OpenAI-compatible fake
servers on 127.0.0.1. The streamed path (the page's script) is test_chat_replies.py's."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from annotation import chat
from annotation.chat import usable_chats
from endpoints import chat as endpoint_chat
from evalhub.models import Conversation, Turn
from tests.annotation.chat_setup import bot_system, chat_campaign, items, say, start, url
from tests.endpoints import openai_fake
from tests.endpoints.openai_fake import FakePool

pytestmark = pytest.mark.django_db


@pytest.fixture
def fakes():
    with FakePool() as pool:
        yield pool


@pytest.fixture
def one_bot(fakes):
    """A campaign of one conversation with a bot that counts what it heard."""
    server = fakes.start(openai_fake.counting)
    system = bot_system(server, slug="counter")
    campaign = chat_campaign([system], batch_size=1)
    return server, system, campaign


def conversation_of(assignment, item):
    return Conversation.objects.get(external_id=chat.external_id(assignment, item))


def test_a_message_gets_the_bots_reply_stored_with_speakers_times_and_latency(client, one_bot):
    server, system, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    response = say(client, assignment, item, "Hello there", 0)
    assert response.status_code == 302 and response["Location"] == assignment.get_absolute_url()
    conversation = conversation_of(assignment, item)
    assert conversation.source == "chat" and conversation.metadata["incomplete"] is True
    assert conversation.domain == f"chat-{campaign.slug}"
    speakers = {s.index: s.system_id for s in conversation.speakers.all()}
    assert speakers == {0: None, 1: system.pk}
    human, bot = conversation.turns.order_by("position")
    assert (human.speaker, human.text, human.latency_ms) == (0, "Hello there", None)
    assert (bot.speaker, bot.text) == (1, "counter: heard 1, 0 mine")
    assert bot.latency_ms is not None and bot.timestamp >= human.timestamp
    assert server.requests[0]["messages"] == [{"role": "user", "content": "Hello there"}]


def test_the_page_shows_the_conversation_and_the_form_for_the_next_turn(client, one_bot):
    _, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello there", 0)
    page = client.get(assignment.get_absolute_url()).content.decode()
    assert "counter: heard 1, 0 mine" in page
    assert 'name="position" value="2"' in page
    assert "counter" not in page.replace("counter: heard", "")  # the system is never named
    assert Turn.objects.count() == 2


def test_the_json_path_stores_the_message_and_leaves_the_reply_due(client, one_bot):
    server, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    response = say(client, assignment, item, "Hi", 0, json=True)
    state = response.json()
    assert response.status_code == 200
    assert [t["text"] for t in state["turns"]] == ["Hi"]
    assert state["waiting"] and not state["streaming"] and not state["can_send"]
    # The script opens the reply's stream next; the post itself asked nothing.
    assert server.requests == [] and Turn.objects.count() == 1


def test_a_double_submitted_message_stores_one_turn_and_asks_the_bot_once(client, one_bot):
    server, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    again = say(client, assignment, item, "Hello", 0, json=True)
    assert again.status_code == 200 and len(again.json()["turns"]) == 2
    assert Turn.objects.count() == 2 and len(server.requests) == 1


def test_a_message_from_an_out_of_date_page_is_refused(client, one_bot):
    _, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    response = say(client, assignment, item, "Something else", 0, json=True)
    assert response.status_code == 409 and "out of date" in response.json()["errors"][0]["message"]
    assert Turn.objects.count() == 2


def test_an_empty_or_too_long_message_is_refused_on_the_page(client, one_bot):
    _, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    empty = say(client, assignment, item, "   ", 0)
    long = say(client, assignment, item, "x" * 501, 0)
    assert empty.status_code == 409 and "Write a message" in empty.content.decode()
    assert long.status_code == 409 and "501 characters" in long.content.decode()
    assert not Turn.objects.exists()


# Issue 23, finding 12: NUL characters (PostgreSQL stores none; these were 500s there) ------


def test_a_message_holding_a_nul_is_refused_and_nothing_is_stored(client, one_bot):
    server, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    page = say(client, assignment, item, "Hel\x00lo", 0)
    script = client.post(  # as the page's script posts: asking for JSON
        url("send", assignment, item, json=True),
        {"text": "Hel\x00lo", "position": 0},
        HTTP_ACCEPT="application/json",
    )
    assert page.status_code == 400 and "holds a NUL character" in page.content.decode()
    assert script.status_code == 400
    assert script.json()["errors"][0]["field"] == "text"
    assert not Turn.objects.exists() and server.requests == []
    # The worker sends it again without the NUL, and the chat goes on.
    assert say(client, assignment, item, "Hello", 0).status_code == 302
    assert Turn.objects.count() == 2


def state_of(assignment, item) -> dict:
    return chat.chat_state(assignment, item).as_json()


def test_a_bot_replying_with_nul_characters_has_its_reply_stored_without_them(client, fakes):
    server = fakes.start(lambda payload: openai_fake.completion("hi\u0000 there\u0000"))
    campaign = chat_campaign([bot_system(server, slug="nul")], batch_size=1)
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    state = state_of(assignment, item)
    assert state["error"] == "" and state["turns"][-1]["text"] == "hi there"
    assert not state["waiting"] and state["can_send"]
    assert say(client, assignment, item, "Again", 2).status_code == 302
    assert list(Turn.objects.order_by("position").values_list("text", flat=True)) == [
        "Hello",
        "hi there",
        "Again",
        "hi there",
    ]


def test_a_bot_replying_nothing_but_nul_is_a_failed_reply_that_can_be_retried(client, fakes):
    server = fakes.start(openai_fake.then(openai_fake.completion("\u0000"), openai_fake.counting))
    campaign = chat_campaign([bot_system(server, slug="mute")], batch_size=1)
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    state = state_of(assignment, item)
    assert "did not give a usable answer" in state["error"] and not state["waiting"]
    assert state["can_retry"] and Turn.objects.count() == 1
    assert client.post(url("retry", assignment, item)).status_code == 302
    retried = state_of(assignment, item)
    assert retried["error"] == "" and retried["turns"][-1]["text"] == "mute: heard 1, 0 mine"


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        # One attempt: the worker may ask again (what was shown cannot be taken back).
        (openai_fake.MALFORMED, "did not give a usable answer"),
        (openai_fake.EMPTY_CHOICES, "did not give a usable answer"),
        (openai_fake.Reply(403, b'{"error": "refused"}'), "answered with an error (HTTP 403)"),
        (openai_fake.rate_limited("30"), "busy right now (it asks to wait 30 s)"),
    ],
)
def test_a_failed_reply_is_explained_and_can_be_retried(client, fakes, failure, message):
    server = fakes.start(openai_fake.then(failure, openai_fake.counting))
    campaign = chat_campaign([bot_system(server, slug="flaky")], batch_size=1)
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    state = state_of(assignment, item)
    assert message in state["error"] and state["can_retry"] and state["can_end"]
    assert Turn.objects.count() == 1 and len(server.requests) == 1
    assert message in client.get(assignment.get_absolute_url()).content.decode()
    client.post(url("retry", assignment, item))
    retried = state_of(assignment, item)
    assert retried["error"] == "" and retried["turns"][-1]["text"] == "flaky: heard 1, 0 mine"
    assert Turn.objects.filter(speaker=1).count() == 1


def test_a_slow_bot_times_out_with_a_clear_message(client, fakes, settings):
    settings.EVALHUB_CHAT_REPLY_TIMEOUT_SECONDS = 1.0
    server = fakes.start(openai_fake.trickle(openai_fake.counting, 0.05))
    campaign = chat_campaign([bot_system(server, slug="slow")], batch_size=1)
    assignment = start(client, campaign)
    item = items(assignment)[0]
    started = time.monotonic()
    say(client, assignment, item, "Hello", 0)
    # The whole reply fits in the worker's wait (a loaded machine gets a second more).
    assert time.monotonic() - started < 2.0
    state = state_of(assignment, item)
    assert "took too long" in state["error"] and Turn.objects.count() == 1
    assert conversation_of(assignment, item).metadata["chat"]["error"] == state["error"]


def test_ending_after_a_failure_keeps_the_conversation_incomplete_and_unrated(client, fakes):
    server = fakes.start(lambda payload: openai_fake.MALFORMED)
    campaign = chat_campaign([bot_system(server, slug="broken")], batch_size=1)
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    response = client.post(url("end", assignment, item))
    assert response.status_code == 302
    conversation = conversation_of(assignment, item)
    assert conversation.metadata["chat"]["status"] == "incomplete"
    assert conversation.metadata["incomplete"] is True
    assert not usable_chats().exists() and usable_chats(include_incomplete=True).count() == 1
    page = client.get(assignment.get_absolute_url()).content.decode()
    assert "not rated" in page
    done = client.post(reverse_submit(assignment, item))
    assert done.status_code == 302
    assert assignment.judgments.get().payload == {
        "conversation": conversation.external_id,
        "complete": False,
    }


def reverse_submit(assignment, item):
    from django.urls import reverse

    return reverse("annotation:submit-item", args=[assignment.public_id, item.pk])


def test_ending_before_the_minimum_is_refused(client, one_bot):
    _, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    response = client.post(url("end", assignment, item, json=True))
    assert (
        response.status_code == 409
        and "at least 2 messages" in response.json()["errors"][0]["message"]
    )
    assert conversation_of(assignment, item).metadata["chat"]["status"] == "open"


def test_the_conversation_ends_complete_after_the_last_turn(client, one_bot):
    _, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    for n in range(3):
        say(client, assignment, item, f"message {n}", 2 * n)
    conversation = conversation_of(assignment, item)
    assert conversation.metadata["chat"]["status"] == "complete"
    assert conversation.metadata["incomplete"] is False
    assert list(usable_chats()) == [conversation]
    refused = say(client, assignment, item, "one more", 6, json=True)
    assert refused.status_code == 409 and "has ended" in refused.json()["errors"][0]["message"]
    assert Turn.objects.count() == 6
    page = client.get(assignment.get_absolute_url()).content.decode()
    assert "Rate the chatbot" in page and 'name="rating_quality"' in page


def test_a_worker_may_end_after_the_minimum(client, one_bot):
    _, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "one", 0)
    say(client, assignment, item, "two", 2)
    state = client.post(url("end", assignment, item, json=True)).json()
    assert state["status"] == "complete"
    assert conversation_of(assignment, item).metadata["chat"]["ended_at"]


def test_a_bot_turn_can_be_flagged_and_unflagged_and_a_worker_turn_cannot(client, one_bot):
    _, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    flagged = client.post(url("flag", assignment, item), {"position": 1, "offensive": "1"})
    assert flagged.status_code == 302
    assert Turn.objects.get(position=1).flagged_offensive is True
    client.post(url("flag", assignment, item), {"position": 1, "offensive": "0"})
    assert Turn.objects.get(position=1).flagged_offensive is False
    refused = client.post(url("flag", assignment, item, json=True), {"position": 0})
    assert refused.status_code == 409
    assert Turn.objects.filter(flagged_offensive=True).count() == 0


def test_another_worker_cannot_talk_in_my_conversation(client, one_bot):
    _, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    other = Client()
    response = say(other, assignment, item, "Hello", 0)
    assert response.status_code == 404 and not Turn.objects.exists()


def test_a_message_without_the_csrf_token_is_refused(one_bot):
    _, _, campaign = one_bot
    browser = Client(enforce_csrf_checks=True)
    assignment = start(browser, campaign)
    item = items(assignment)[0]
    response = say(browser, assignment, item, "Hello", 0, json=True)
    assert response.status_code == 403 and not Turn.objects.exists()


def test_messages_are_rate_limited_per_worker(client, one_bot, settings):
    settings.EVALHUB_CHAT_MESSAGES_PER_MINUTE = 1
    _, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    response = say(client, assignment, item, "Again", 2, json=True)
    assert response.status_code == 429 and "too fast" in response.json()["errors"][0]["message"]
    assert Turn.objects.count() == 2


def test_the_item_form_cannot_be_submitted_before_the_conversation_ends(client, one_bot):
    _, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    response = client.post(reverse_submit(assignment, item), {"rating_quality": "3"})
    assert response.status_code == 400 and "End the conversation" in response.content.decode()
    assert not assignment.judgments.exists()


def test_a_reply_that_never_arrived_can_be_retried(client, one_bot):
    server, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    Turn.objects.filter(position=1).delete()
    conversation = conversation_of(assignment, item)
    # As if the process streaming the reply had died ten minutes ago.
    conversation.metadata["chat"]["streaming_until"] = "2000-01-01T00:00:00+00:00"
    conversation.save()
    page = client.get(assignment.get_absolute_url()).content.decode()
    assert "reply never arrived" in page and "Try that turn again" in page
    assert client.post(url("retry", assignment, item)).status_code == 302
    state = state_of(assignment, item)
    assert state["turns"][-1]["text"] == "counter: heard 1, 0 mine" and state["error"] == ""
    assert len(server.requests) == 2 and Turn.objects.count() == 2


def test_a_reply_being_streamed_cannot_be_retried(client, one_bot):
    _, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    Turn.objects.filter(position=1).delete()
    conversation = conversation_of(assignment, item)
    later = timezone.now() + timedelta(minutes=1)
    conversation.metadata["chat"]["streaming_until"] = later.isoformat()
    conversation.save()
    refused = client.post(url("retry", assignment, item, json=True))
    assert refused.status_code == 409 and "still coming" in refused.json()["errors"][0]["message"]
    assert refused.json()["state"]["streaming"] is True and Turn.objects.count() == 1
    # Without JavaScript the page says the bot is typing and looks again in a moment.
    page = client.get(assignment.get_absolute_url()).content.decode()
    assert 'http-equiv="refresh"' in page and 'id="chat-typing" hidden' not in page


def test_a_message_whose_reply_nobody_asked_for_offers_to_ask(client, one_bot):
    """A page without JavaScript whose post was cut short before the bot was asked."""
    server, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0, json=True)  # the reply is due, never streamed
    page = client.get(assignment.get_absolute_url()).content.decode()
    assert "has not been asked for its reply yet" in page
    assert 'id="chat-retry" hidden' not in page and server.requests == []
    client.post(url("retry", assignment, item))
    assert state_of(assignment, item)["turns"][-1]["text"] == "counter: heard 1, 0 mine"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_racing_copies_of_a_message_store_one_turn(client, fakes):
    server = fakes.start(openai_fake.counting)
    campaign = chat_campaign([bot_system(server, slug="racer")], batch_size=1)
    assignment = start(client, campaign)
    item = items(assignment)[0]
    barrier = threading.Barrier(2)
    errors = []

    def send():
        try:
            barrier.wait()
            chat.send(assignment, item, "Hello", 0)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert list(Turn.objects.values_list("speaker", "text")) == [(0, "Hello")]
    assert chat.chat_state(assignment, item).due and server.requests == []


def test_a_batch_past_its_time_takes_no_more_messages(client, one_bot):
    server, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    assignment.expires_at = timezone.now() - timedelta(minutes=1)
    assignment.save(update_fields=["expires_at"])
    response = say(client, assignment, item, "Hello", 0, json=True)
    assert (
        response.status_code == 409
        and "time for this batch ran out" in response.json()["errors"][0]["message"]
    )
    assert not Turn.objects.exists() and server.requests == []


def test_ending_a_conversation_never_started_is_refused(client, one_bot):
    _, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    response = client.post(url("end", assignment, item))
    assert response.status_code == 409 and "Send at least 2 messages" in response.content.decode()
    assert not Conversation.objects.exists()


def test_a_late_form_post_after_the_end_leads_to_the_rating(client, one_bot):
    _, _, campaign = one_bot
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "one", 0)
    say(client, assignment, item, "two", 2)
    client.post(url("end", assignment, item))
    response = say(client, assignment, item, "three", 4)
    assert response.status_code == 302 and response["Location"] == assignment.get_absolute_url()
    assert Turn.objects.count() == 4


def test_without_javascript_a_failed_turn_is_retried_with_a_form_post(client, fakes):
    server = fakes.start(
        openai_fake.then(openai_fake.Reply(403, b"no"), openai_fake.counting, times=1)
    )
    campaign = chat_campaign([bot_system(server, slug="flaky")], batch_size=1)
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    page = client.get(assignment.get_absolute_url()).content.decode()
    assert "Try that turn again" in page and "kept as incomplete" in page
    assert 'id="chat-retry" hidden' not in page
    response = client.post(url("retry", assignment, item))
    assert response.status_code == 302
    assert Turn.objects.get(position=1).text == "flaky: heard 1, 0 mine"
    # The retry form stays in the page for the script, hidden.
    assert 'id="chat-retry" hidden' in client.get(assignment.get_absolute_url()).content.decode()


def test_a_system_removed_from_the_catalog_is_a_clear_message(client, fakes):
    server = fakes.start(openai_fake.counting)
    system = bot_system(server, slug="gone-bot")
    campaign = chat_campaign([system], batch_size=1)
    assignment = start(client, campaign)
    item = items(assignment)[0]
    system.delete()
    response = say(client, assignment, item, "Hello", 0, json=True)
    assert (
        response.status_code == 409
        and "no longer available" in response.json()["errors"][0]["message"]
    )
    assert not Conversation.objects.exists()


def test_a_spent_chat_share_tells_the_worker_keeps_the_turn_and_lets_them_end(client, fakes):
    server = fakes.start(openai_fake.counting)
    system = bot_system(server, slug="thrifty")
    system.endpoint.daily_budget, system.endpoint.chat_share = 2, 50  # one chat request
    system.endpoint.save()
    campaign = chat_campaign([system], batch_size=1)
    assignment = start(client, campaign)
    item = items(assignment)[0]
    say(client, assignment, item, "Hello", 0)
    response = say(client, assignment, item, "And how are you?", 2)
    state = state_of(assignment, item)
    assert response.status_code == 302 and state["error"] == endpoint_chat.LIMIT_REACHED
    assert state["can_end"] and [t["text"] for t in state["turns"]][-1] == "And how are you?"
    assert len(server.requests) == 1
    page = client.get(assignment.get_absolute_url())
    assert page.status_code == 200 and "answered all the messages" in page.content.decode()
    ended = client.post(url("end", assignment, item, json=True)).json()
    assert ended["status"] == "incomplete"
    assert Turn.objects.filter(conversation=conversation_of(assignment, item)).count() == 3
