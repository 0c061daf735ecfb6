"""A worker fails the training, reads why, tries again, qualifies and reaches the task."""

import random

import pytest
from playwright.sync_api import expect

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.kinds.abc_eval import with_gold
from annotation.models import Qualification
from tests.annotation.builders import campaign
from tests.annotation.kinds.test_abc_eval import (
    CONSISTENCY_GOLD,
    SELF_CONTRADICTION,
    conversation,
    loaded,
)

pytestmark = pytest.mark.django_db(transaction=True)


def annotate(page, *, contradiction: bool, ticks=()):
    for name in ("flag_self_contradiction_5",) * contradiction + tuple(ticks):
        page.locator(f"input[name={name}]").check()
    page.get_by_label("I checked every bot turn").check()
    page.get_by_role("button", name="Submit and see feedback").click()


def test_worker_fails_reads_the_feedback_retries_and_qualifies(page, screenshot):
    c = campaign(
        "abc_eval",
        slug="abc-trained",
        title="Consistency, with training",
        # Two conversations per attempt; the retry takes the two the worker has not seen.
        task_config={"behaviour_task": "consistency", "training_conversations": 2},
        requires_training=True,
        batch_size=1,
    )
    kind = get_kind("abc_eval")
    rng = random.Random(0)
    tasks = kind.build_from_conversations(loaded([conversation("task-1")]), c.task_config, rng)
    training = kind.build_from_conversations(
        loaded([conversation(f"train-{n}") for n in range(1, 5)]), c.task_config, rng
    )
    gold = [with_gold(s, CONSISTENCY_GOLD, {5: SELF_CONTRADICTION}) for s in training]
    add_items(c, tasks + gold)

    page.goto("/work/abc-trained/?worker=trainee")
    expect(page.get_by_role("heading", name="Training before you start")).to_be_visible()
    page.get_by_role("button", name="Begin the training").click()
    expect(page.locator(".progress")).to_have_text("Training 1 of 2 · attempt 1")
    assert SELF_CONTRADICTION not in page.content()
    annotate(page, contradiction=False)

    row = page.locator(".feedback-row")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Bot turn 3")
    expect(row.locator(".gold")).to_have_text("Self contradiction")
    expect(row.locator(".yours")).to_have_text("no label")
    expect(row).to_contain_text(SELF_CONTRADICTION)
    screenshot("training-feedback")
    page.get_by_role("link", name="Next training conversation").click()

    # Three mistaken turns on the last conversation: 3 is not fewer than 3.
    annotate(page, contradiction=False, ticks=["flag_redundant_1", "flag_redundant_3"])
    page.get_by_role("link", name="See your result").click()
    expect(page.get_by_role("heading", name="You did not qualify this time")).to_be_visible()
    expect(page.locator(".feedback-row")).to_have_count(3)
    expect(page.locator(".feedback-row").last).to_contain_text(SELF_CONTRADICTION)
    assert Qualification.objects.get().last_mistakes == 3
    page.get_by_role("button", name="Start the training again").click()

    expect(page.locator(".progress")).to_have_text("Training 1 of 2 · attempt 2")
    annotate(page, contradiction=True)
    expect(page.get_by_text("Your answers match ours everywhere")).to_be_visible()
    page.get_by_role("link", name="Next training conversation").click()
    annotate(page, contradiction=True)
    page.get_by_role("link", name="See your result").click()
    expect(page.get_by_role("heading", name="You qualified")).to_be_visible()
    page.get_by_role("link", name="Start the task").click()

    expect(page.locator(".progress")).to_have_text("Item 1 of 1")
    expect(page.locator("input[name=flag_self_contradiction_5]")).to_be_visible()
    assert Qualification.objects.get().passed
