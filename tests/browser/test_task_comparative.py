"""A Prolific participant compares dialogues side by side in Chromium and gets their code."""

import random

import pytest
from playwright.sync_api import expect

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.models import Assignment, Judgment
from evalhub.models import Conversation, Speaker, Turn
from tests import factories
from tests.annotation.builders import MIDDLE, campaign

pytestmark = pytest.mark.django_db(transaction=True)
KIND = get_kind("comparative")
DIMENSIONS = KIND.clean_config({})["dimensions"]

TRAIN = [
    "My train was cancelled again this morning.",
    "Oh no, that is the third time this week, isn't it?",
    "Yes, and I missed my meeting.",
    "That sounds really frustrating. Could you join it by phone?",
]
SOUP = [
    "My train was cancelled again this morning.",
    "I like soup.",
    "Sorry, what?",
    "Tomato soup is the best soup.",
]
PHONE = (390, 844)


def with_human(external_id, system, texts):
    c = Conversation.objects.create(external_id=external_id, domain="commute")
    Speaker.objects.create(conversation=c, index=0, system=None)
    Speaker.objects.create(conversation=c, index=1, system=system)
    Turn.objects.bulk_create(
        Turn(conversation=c, position=p, speaker=p % 2, text=t) for p, t in enumerate(texts)
    )


def comparative_campaign():
    kind_bot = factories.system(None, slug="kindbot")
    soup_bot = factories.system(None, slug="soupbot")
    for n in range(2):
        with_human(f"kind-{n}", kind_bot, TRAIN)
        with_human(f"soup-{n}", soup_bot, SOUP)
    config = {
        "pairs": [[f"kind-{i}", f"soup-{j}"] for i in range(2) for j in range(2)],
        "gold_pairs": [
            {
                "a": "kind-0",
                "b": "soup-0",
                "choices": {"relevance": "a"},
                "explanation": "The soup chatbot ignores the cancelled train.",
            }
        ],
    }
    c = campaign(
        "comparative",
        slug="compare",
        title="Compare two chats",
        batch_size=3,
        redundancy=1,
        task_config=config,
        instructions="Read both chats, then say in which one the chatbot does better.",
    )
    loaded = Conversation.objects.prefetch_related("speakers__system", "turns")
    add_items(c, KIND.build_from_conversations(loaded, config, random.Random(3)), rng=MIDDLE)
    return c


def shown(page) -> list[str]:
    """The dimensions in the order the page shows them."""
    names = page.eval_on_selector_all(
        "input[type=radio]", "inputs => inputs.map(input => input.name)"
    )
    return list(dict.fromkeys(n[len("choice_") :] for n in names if n.startswith("choice_")))


def choose(page, dimension, value):
    page.locator(f'input[name="choice_{dimension}"][value="{value}"]').check()


def test_participant_compares_dialogues_and_gets_the_completion_code(page, screenshot):
    comparative_campaign()
    page.goto("/work/compare/?worker=pp-2090")
    expect(page.locator(".progress")).to_have_text("Item 1 of 3")
    expect(page.locator(".dialogue-panel")).to_have_count(2)
    html = page.content()
    assert "kindbot" not in html and "soupbot" not in html and "ignores the cancelled" not in html

    # Three answers of eight: the page comes back with those kept and five messages.
    for dimension in DIMENSIONS[:3]:
        choose(page, dimension, "left")
    page.get_by_role("button", name="Next").click()
    expect(page.locator("fieldset.has-error")).to_have_count(5)
    # The dimensions come in the item's own random order (as ABC-Eval showed them).
    order = shown(page)
    rest = [d for d in order if d not in DIMENSIONS[:3]]
    expect(page.locator("fieldset.has-error").first).to_contain_text(
        f"Choose an answer for {rest[0].replace('_', ' ')}."
    )
    for dimension in DIMENSIONS[:3]:
        expect(page.locator(f'input[name="choice_{dimension}"][value="left"]')).to_be_checked()

    # Each key answers the first unanswered dimension.
    keys = ("2", "2", "3", "1", "2")
    for key in keys:
        page.keyboard.press(key)
    expect(page.locator(f'input[name="choice_{rest[0]}"][value="right"]')).to_be_checked()
    expect(page.locator(f'input[name="choice_{rest[2]}"][value="neither"]')).to_be_checked()
    page.keyboard.press("Enter")

    expect(page.locator(".progress")).to_have_text("Item 2 of 3")
    first = Judgment.objects.get()
    left = first.payload["left"]
    right = "b" if left == "a" else "a"
    sides = {"1": left, "2": right, "3": "neither"}
    assert first.payload["choices"] == {
        **dict.fromkeys(DIMENSIONS[:3], left),
        **{d: sides[key] for d, key in zip(rest, keys, strict=True)},
    }
    assert first.payload["dimension_order"] == order

    for position in (2, 3):
        expect(page.locator(".progress")).to_have_text(f"Item {position} of 3")
        for dimension in DIMENSIONS:
            choose(page, dimension, "neither")
        if position == 2:
            # Scrolled to the top, so the sticky progress bar is drawn where it belongs.
            page.evaluate("window.scrollTo(0, 0)")
            screenshot("worker-comparative")
            page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE[0], f"the page scrolls sideways on a phone ({width}px)"
            page.evaluate("window.scrollTo(0, 0)")
            screenshot("worker-comparative-phone")
        page.get_by_role("button", name="Finish" if position == 3 else "Next").click()

    code = page.get_by_test_id("completion-code")
    expect(code).to_be_visible()
    assignment = Assignment.objects.get(worker__external_id="link:pp-2090")
    assert assignment.status == "submitted"
    assert code.inner_text().strip() == assignment.completion_code
    assert Judgment.objects.filter(assignment=assignment).count() == 3
