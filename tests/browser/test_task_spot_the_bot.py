"""A Prolific participant does a whole Spot The Bot batch in Chromium and gets their code."""

import random

import pytest
from playwright.sync_api import expect

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.models import Assignment, Judgment
from evalhub.models import Conversation
from tests import factories
from tests.annotation.builders import MIDDLE, campaign

pytestmark = pytest.mark.django_db(transaction=True)
KIND = get_kind("spot_the_bot")

GARDEN = [
    "Morning! Are your tomatoes ripe yet?",
    "A few of them. The rest are still green.",
    "Mine got eaten by snails overnight.",
    "Snails love tomatoes. Try a ring of crushed eggshells.",
    "Does that really work?",
    "It slows them down. Copper tape works better.",
]
PHONE = (390, 844)


def conversation(external_id, speakers, texts):
    factories.conversation(external_id, speakers, texts, domain="garden")


def spot_the_bot_campaign():
    bots = factories.system(None, slug="weedbot"), factories.system(None, slug="sprout-lm")
    conversation("garden-1", bots, GARDEN)
    conversation("garden-2", bots[::-1], GARDEN)
    conversation("garden-people", [None, None], GARDEN)
    config = {"segment_lengths": [2, 3], "gold_conversations": ["garden-people"]}
    c = campaign(
        "spot_the_bot",
        slug="spot",
        title="Spot the bot",
        batch_size=3,
        redundancy=1,
        task_config=config,
        instructions="Decide for each speaker whether a person or a chatbot wrote their turns.",
    )
    loaded = Conversation.objects.prefetch_related("speakers__system", "turns")
    add_items(c, KIND.build_from_conversations(loaded, config, random.Random(7)), rng=MIDDLE)
    return c


def choose(page, name, value):
    page.locator(f'input[name="{name}"][value="{value}"]').check()


def test_participant_spots_bots_and_gets_the_completion_code(page, screenshot):
    spot_the_bot_campaign()
    page.goto("/work/spot/?worker=pp-4411")
    expect(page.locator(".progress")).to_have_text("Item 1 of 3")
    assert "weedbot" not in page.content() and "sprout-lm" not in page.content()

    # An incomplete answer comes back with the message next to the unanswered question.
    choose(page, "label_0", "human")
    page.get_by_role("button", name="Next").click()
    speaker_2 = page.locator("fieldset.has-error").first
    expect(speaker_2).to_contain_text("Choose an answer for Speaker 2.")
    expect(speaker_2.locator("legend")).to_have_text("Speaker 2 is")
    expect(page.locator('input[name="label_0"][value="human"]')).to_be_checked()

    # Keys go to the first unanswered question: Speaker 2, then the three features.
    for key in ("b", "1", "3", "2"):
        page.keyboard.press(key)
    expect(page.locator('input[name="label_1"][value="bot"]')).to_be_checked()
    expect(page.locator('input[name="better_fluency"][value="1"]')).to_be_checked()
    expect(page.locator("label.choice.selected")).to_have_count(5)
    page.keyboard.press("Enter")

    expect(page.locator(".progress")).to_have_text("Item 2 of 3")
    first = Judgment.objects.get()
    assert first.payload == {
        "labels": ["human", "bot"],
        "better": {"sensibleness": 0, "specificity": None, "fluency": 1},
    }
    assert first.client_duration_ms is not None

    for position in (2, 3):
        expect(page.locator(".progress")).to_have_text(f"Item {position} of 3")
        choose(page, "label_0", "bot")
        choose(page, "label_1", "unsure")
        for feature in ("sensibleness", "specificity", "fluency"):
            choose(page, f"better_{feature}", "none")
        if position == 2:
            # Scrolled to the top, so the sticky progress bar is drawn where it belongs.
            page.evaluate("window.scrollTo(0, 0)")
            screenshot("worker-spot-the-bot")
            page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE[0], f"the page scrolls sideways on a phone ({width}px)"
            page.evaluate("window.scrollTo(0, 0)")
            screenshot("worker-spot-the-bot-phone")
        page.get_by_role("button", name="Finish" if position == 3 else "Next").click()

    code = page.get_by_test_id("completion-code")
    expect(code).to_be_visible()
    assignment = Assignment.objects.get(worker__external_id="link:pp-4411")
    assert assignment.status == "submitted"
    assert code.inner_text().strip() == assignment.completion_code
    assert Judgment.objects.filter(assignment=assignment).count() == 3
