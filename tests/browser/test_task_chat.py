"""A worker holds two chats with fake streaming OpenAI-compatible bots on 127.0.0.1, sees the
replies' tokens arrive, meets a failure mid-way and retries it, then rates both
conversations and compares them side by side; and the same without JavaScript."""

import threading

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment, Judgment
from evalhub.models import Conversation, Turn
from tests.annotation.chat_setup import bot_system, chat_campaign
from tests.endpoints import openai_fake, sse_fake
from tests.endpoints.openai_fake import FakePool

pytestmark = pytest.mark.django_db(transaction=True)
DIMENSIONS = ["engagingness", "quality"]


REPLY = ("Nice ", "to ", "meet ", "you ", "again.")


def failing_second_request():
    """Streams its reply slowly enough to see the tokens arrive; the second request of the
    run fails, every other one is answered."""
    calls = 0
    lock = threading.Lock()

    def run(payload):
        nonlocal calls
        with lock:
            calls += 1
            n = calls
        if n == 2:
            return sse_fake.Stream(status=500, body=b'{"error": "overloaded"}')
        return sse_fake.words(*REPLY, pause=0.3)(payload)

    return run


def rate(page, value):
    for dimension in DIMENSIONS:
        page.locator(f"label:has(input[name=rating_{dimension}][value='{value}'])").click()


def test_worker_chats_twice_retries_a_failure_rates_and_compares(page, screenshot):
    with sse_fake.StreamingPool() as fakes:
        server = fakes.start(failing_second_request())
        systems = [bot_system(server, slug=slug) for slug in ("alpha-bot", "beta-bot")]
        campaign = chat_campaign(
            systems,
            slug="chat-pair",
            config={"dimensions": DIMENSIONS, "min_turns": 2, "max_turns": 4},
        )

        page.goto(f"{campaign.start_url()}?worker=chatter")
        expect(page.locator(".progress")).to_have_text("Conversation 1 of 2")
        page.locator("#chat-text").fill("Hello, who are you?")
        page.locator("#chat-send-button").click()
        # The reply's tokens arrive one by one while the button waits.
        # (A reply still streaming is drawn "is-streaming": its first tokens are shown
        # before the bot has written the rest.)
        streaming = page.locator(".chat-turn.bot.is-streaming .text")
        expect(streaming).to_contain_text("Nice")
        expect(page.locator("#chat-send-button")).to_be_disabled()
        # The live region waits for the whole reply before a screen reader reads it.
        expect(page.locator("#chat-turns")).to_have_attribute("aria-busy", "true")
        expect(page.locator(".chat-turn.bot .text")).to_have_text("Nice to meet you again.")
        expect(page.locator("#chat-turns")).to_have_attribute("aria-busy", "false")
        expect(page.locator(".chat-turn.bot.is-streaming")).to_have_count(0)
        expect(page.locator("#chat-typing")).to_be_hidden()
        expect(page.locator("#chat-send-button")).to_be_enabled()
        # The bot fails on the second message: the worker is told and tries that turn again.
        page.locator("#chat-text").fill("What do you like?")
        page.locator("#chat-send-button").click()
        expect(page.locator("#chat-error")).to_contain_text("answered with an error (HTTP 500)")
        expect(page.locator("#chat-send")).to_be_hidden()
        page.get_by_role("button", name="Try that turn again").click()
        expect(page.locator(".chat-turn.bot")).to_have_count(2)
        expect(page.locator("#chat-error")).to_be_hidden()
        expect(page.locator("#chat-send")).to_be_visible()
        page.locator(".chat-turn.bot .chat-flag button").first.click()
        expect(page.locator(".chat-turn.bot").first).to_contain_text("Flagged as offensive")
        screenshot("worker-chat")
        page.get_by_role("button", name="End the conversation and rate it").click()

        expect(page.locator(".progress")).to_have_text("Item 1 of 2")
        expect(page.locator(".dialogue .turn")).to_have_count(4)
        rate(page, "4")
        page.get_by_role("button", name="Next").click()

        expect(page.locator(".progress")).to_have_text("Conversation 2 of 2")
        page.locator("#chat-text").fill("Hi again")
        page.locator("#chat-send-button").click()
        expect(page.locator(".chat-turn.bot")).to_have_count(1)
        page.locator("#chat-text").fill("Tell me a story")
        page.locator("#chat-send-button").click()
        expect(page.locator(".chat-turn.bot")).to_have_count(2)
        page.get_by_role("button", name="End the conversation and rate it").click()

        expect(page.locator("h2", has_text="Compare your two conversations")).to_be_visible()
        rate(page, "2")
        for dimension in DIMENSIONS:
            page.locator(f"label:has(input[name=compare_{dimension}][value='left'])").click()
        screenshot("worker-chat-compare")
        page.get_by_role("button", name="Finish").click()
        expect(page.get_by_test_id("completion-code")).to_be_visible()

    assignment = Assignment.objects.get(worker__external_id="link:chatter")
    assert assignment.status == "submitted"
    conversations = Conversation.objects.filter(source="chat").order_by("metadata__chat__item")
    assert [c.metadata["chat"]["status"] for c in conversations] == ["complete", "complete"]
    assert {c.metadata["chat"]["system"] for c in conversations} == {"alpha-bot", "beta-bot"}
    assert Turn.objects.filter(speaker=1, latency_ms__isnull=False).count() == 4
    assert Turn.objects.filter(flagged_offensive=True).count() == 1
    first, second = (j.payload for j in Judgment.objects.order_by("item__order_in_batch"))
    assert first["ratings"] == {"engagingness": 4, "quality": 4} and "comparison" not in first
    assert second["ratings"] == {"engagingness": 2, "quality": 2}
    comparison = second["comparison"]
    assert (comparison["a"], comparison["b"]) == (first["conversation"], second["conversation"])
    assert set(comparison["choices"].values()) == {comparison["left"]}


def test_without_javascript_each_turn_is_one_form_post(browser, live_server):
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        with FakePool() as fakes:
            server = fakes.start(openai_fake.counting)
            campaign = chat_campaign(
                [bot_system(server, slug="plain-bot")],
                slug="chat-plain",
                batch_size=1,
                config={"dimensions": DIMENSIONS, "min_turns": 1, "max_turns": 2},
            )
            page.goto(f"{campaign.start_url()}?worker=plain")
            page.locator("#chat-text").fill("Hello without scripts")
            page.locator("#chat-send-button").click()
            expect(page.locator(".chat-turn.bot .text")).to_have_text("plain-bot: heard 1, 0 mine")
            page.locator("#chat-text").fill("Second and last")
            page.locator("#chat-send-button").click()
            # The last turn ends the conversation: the rating form follows.
            expect(page.locator(".dialogue .turn")).to_have_count(4)
            rate(page, "3")
            page.get_by_role("button", name="Finish").click()
            expect(page.get_by_test_id("completion-code")).to_be_visible()
    finally:
        context.close()
    judgment = Judgment.objects.get()
    assert judgment.payload["ratings"] == {"engagingness": 3, "quality": 3}
    assert Conversation.objects.get().metadata["chat"]["status"] == "complete"
