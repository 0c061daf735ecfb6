"""A participant labels bot turns on a phone: forgets the confirmation, fixes it, finishes."""

import random

import pytest
from playwright.sync_api import expect

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.models import Assignment, Judgment
from tests.annotation.builders import campaign
from tests.annotation.kinds.test_abc_eval import conversation, loaded

pytestmark = pytest.mark.django_db(transaction=True)
PHONE = {"width": 390, "height": 844}


def test_participant_labels_every_bot_turn_and_gets_the_code(page, screenshot):
    c = campaign(
        "abc_eval",
        slug="abc-consistency",
        title="Consistency of chatbot turns",
        task_config={"behaviour_task": "consistency"},
        batch_size=2,
        redundancy=1,
        instructions="Read the whole conversation, then label each bot turn.",
    )
    conversations = loaded([conversation("hike-1"), conversation("hike-2")])
    add_items(
        c,
        get_kind("abc_eval").build_from_conversations(
            conversations, c.task_config, random.Random(0)
        ),
    )
    page.set_viewport_size(PHONE)

    page.goto("/work/abc-consistency/?worker=phone-1")
    expect(page.locator(".progress")).to_have_text("Item 1 of 2")
    expect(
        page.get_by_text("The bot contradicts something it said earlier in the dialogue.")
    ).to_be_visible()
    page.locator("input[name=flag_self_contradiction_5]").check()
    page.locator("input[name=flag_redundant_3]").check()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    screenshot("worker-abc-eval")

    page.get_by_role("button", name="Next").click()
    error = page.locator("#reviewed-error")
    expect(error).to_contain_text("I checked every bot turn")
    expect(page.locator("input[name=flag_self_contradiction_5]")).to_be_checked()
    expect(page.locator("input[name=flag_redundant_3]")).to_be_checked()
    assert not Judgment.objects.exists()

    page.get_by_label("I checked every bot turn").check()
    page.get_by_role("button", name="Next").click()
    expect(page.locator(".progress")).to_have_text("Item 2 of 2")
    page.get_by_label("I checked every bot turn").check()
    page.get_by_role("button", name="Finish").click()

    code = page.get_by_test_id("completion-code")
    expect(code).to_be_visible()
    assignment = Assignment.objects.get(worker__external_id="link:phone-1")
    assert code.inner_text() == assignment.completion_code
    labels = sorted(
        (j.payload["labels"]["self contradiction"], j.payload["labels"]["redundant"])
        for j in Judgment.objects.all()
    )
    assert labels == [([0, 0, 0], [0, 0, 0]), ([0, 0, 1], [0, 1, 0])]


def test_a_participant_labels_with_the_keyboard(page):
    c = campaign(
        "abc_eval",
        slug="abc-keys",
        title="Consistency by keyboard",
        task_config={"behaviour_task": "consistency"},
        batch_size=1,
        redundancy=1,
    )
    add_items(
        c,
        get_kind("abc_eval").build_from_conversations(
            loaded([conversation("keys-1")]), c.task_config, random.Random(0)
        ),
    )
    page.goto("/work/abc-keys/?worker=keys-1")
    flags = page.locator("fieldset.turn-flags")

    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(flags.nth(1)).to_have_class("turn-flags current")
    page.keyboard.press("2")
    page.keyboard.press("r")

    second = flags.nth(1).locator("label[data-flag-key='2'] input")
    expect(second).to_be_checked()
    expect(page.get_by_label("I checked every bot turn")).to_be_checked()
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("completion-code")).to_be_visible()
    [judgment] = Judgment.objects.all()
    assert sum(sum(flags) for flags in judgment.payload["labels"].values()) == 1
