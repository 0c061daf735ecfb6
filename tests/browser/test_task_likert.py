"""A participant rates whole conversations, mostly with the keyboard."""

import random

import pytest
from playwright.sync_api import expect

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.models import Assignment, Judgment
from tests.annotation.builders import campaign
from tests.annotation.kinds.test_abc_eval import conversation, loaded

pytestmark = pytest.mark.django_db(transaction=True)
DIMENSIONS = ["engagingness", "relevance", "quality"]


def shown(page, prefix="rating_") -> list[str]:
    """The dimensions in the order the page shows their scales."""
    names = page.eval_on_selector_all(
        "input[type=radio]", "inputs => inputs.map(input => input.name)"
    )
    return list(dict.fromkeys(n[len(prefix) :] for n in names if n.startswith(prefix)))


def test_participant_rates_with_the_keyboard_and_gets_the_code(page, screenshot):
    c = campaign(
        "likert",
        slug="likert-dialogue",
        title="Rate the chatbot",
        task_config={"level": "dialogue", "dimensions": DIMENSIONS},
        batch_size=2,
        redundancy=1,
    )
    conversations = loaded([conversation("chat-1"), conversation("chat-2")])
    add_items(
        c,
        get_kind("likert").build_from_conversations(conversations, c.task_config, random.Random(0)),
    )

    page.goto("/work/likert-dialogue/?worker=keys-1")
    expect(page.locator(".progress")).to_have_text("Item 1 of 2")
    # The scales come in the item's own random order (as ABC-Eval showed them).
    first, second, third = shown(page)
    assert sorted((first, second, third)) == sorted(DIMENSIONS)
    page.keyboard.press("4")  # goes to the first scale
    expect(page.locator(f"input[name=rating_{first}][value='4']")).to_be_checked()
    page.get_by_role("button", name="Next").click()

    missing = page.locator("fieldset.has-error")
    expect(missing).to_have_count(2)
    expect(missing.first).to_contain_text(f"Choose a rating from 1 to 5 for {second}.")
    expect(page.locator(f"input[name=rating_{first}][value='4']")).to_be_checked()
    assert not Judgment.objects.exists()
    screenshot("worker-likert")

    page.keyboard.press("2")
    page.keyboard.press("5")
    expect(page.locator(f"input[name=rating_{third}][value='5']")).to_be_checked()
    page.keyboard.press("Enter")
    expect(page.locator(".progress")).to_have_text("Item 2 of 2")
    page.locator("label:has(input[name=rating_engagingness][value='1'])").click()
    page.locator("label:has(input[name=rating_relevance][value='3'])").click()
    page.locator("label:has(input[name=rating_quality][value='3'])").click()
    page.get_by_role("button", name="Finish").click()

    code = page.get_by_test_id("completion-code")
    expect(code).to_be_visible()
    assert (
        code.inner_text()
        == Assignment.objects.get(worker__external_id="link:keys-1").completion_code
    )
    # Read the ratings by dimension: PostgreSQL's jsonb does not keep the keys' order.
    ratings = sorted(
        tuple(j.payload["ratings"][d] for d in DIMENSIONS) for j in Judgment.objects.all()
    )
    keyed = {first: 4, second: 2, third: 5}
    assert ratings == sorted([(1, 3, 3), tuple(keyed[d] for d in DIMENSIONS)])
    first_judgment = Judgment.objects.get(item__position=0)
    assert first_judgment.payload["dimension_order"] == [first, second, third]
