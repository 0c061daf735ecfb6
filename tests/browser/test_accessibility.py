"""Accessibility of the pages a crowdworker sees: every task kind is done from start to
completion code with the keyboard alone (shortcuts, Tab, Space, Enter; never a click),
its judgments are stored, and axe-core finds no serious or critical WCAG 2.x A/AA
violation on any page met on the way (tests/browser/accessibility.py)."""

import random
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.models import Assignment, Judgment, Worker
from tests.annotation.builders import ab_campaign, campaign
from tests.annotation.kinds.test_abc_eval import conversation, loaded
from tests.browser.accessibility import assert_accessible

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _patient_expectations():
    """The audits and a busy machine's shared cores slow every page: wait longer than
    Playwright's 5 s default."""
    expect.set_options(timeout=20_000)
    yield
    expect.set_options(timeout=5_000)


def tab_to(page, selector: str, *, backwards: bool = False, limit: int = 60) -> None:
    """Press Tab (or Shift+Tab) until the focused element matches `selector`."""
    key = "Shift+Tab" if backwards else "Tab"
    for _ in range(limit):
        page.keyboard.press(key)
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"{selector} cannot be reached with {key}")


def assert_code_shown(page, worker: str) -> Assignment:
    code = page.get_by_test_id("completion-code")
    expect(code).to_be_visible()
    assignment = Assignment.objects.get(worker__external_id=f"link:{worker}")
    assert assignment.status == "submitted"
    assert code.inner_text().strip() == assignment.completion_code
    return assignment


def test_ab_by_keyboard_and_its_pages_pass_the_audit(page):
    ab_campaign(3, batch_size=3, redundancy=1, slug="ab-keys", instructions="Pick one.")
    page.goto("/work/ab-keys/")
    expect(page.locator("#id_worker")).to_be_visible()
    assert_accessible(page, "the page asking for a participant id")
    tab_to(page, "#id_worker")
    page.keyboard.type("ab-keys-1")
    page.keyboard.press("Enter")

    expect(page.locator(".progress")).to_have_text("Item 1 of 3")
    assert_accessible(page, "the A/B item")
    page.keyboard.press("Enter")  # nothing chosen: refused in place
    expect(page.locator(".ab .error")).to_be_visible()
    assert_accessible(page, "the A/B item with its error")
    page.keyboard.press("1")
    page.keyboard.press("Enter")

    expect(page.locator(".progress")).to_have_text("Item 2 of 3")
    page.keyboard.press("3")
    page.keyboard.press("Enter")

    # The last one by Tab, the arrow keys and Space, as without the shortcuts.
    expect(page.locator(".progress")).to_have_text("Item 3 of 3")
    tab_to(page, "input[name=choice]")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    tab_to(page, "button.next")
    page.keyboard.press("Enter")

    assignment = assert_code_shown(page, "ab-keys-1")
    assert_accessible(page, "the completion page")
    # The side shown on the left, the tie, the side shown on the right.
    sides = [
        j.payload["choice"]
        if j.payload["choice"] == "tie"
        else ("left" if j.payload["choice"] == j.payload["left"] else "right")
        for j in Judgment.objects.order_by("item__order_in_batch")
    ]
    assert sides == ["left", "tie", "right"]
    assert assignment.judgments.count() == 3

    page.goto("/work/ab-keys/")
    expect(page.locator("section.done h1")).to_be_visible()
    assert_accessible(page, "the page saying there is no more work")


def test_the_blocked_and_expired_pages_pass_the_audit(page):
    ab_campaign(2, batch_size=2, redundancy=1, slug="ab-late", time_limit_minutes=10)
    page.goto("/work/ab-late/?worker=late-1")
    expect(page.locator(".progress")).to_have_text("Item 1 of 2")
    expect(page.locator(".time-left .countdown")).to_contain_text("left")
    assert_accessible(page, "an item with its countdown")
    Assignment.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    page.reload()
    expect(page.get_by_text("The time for this batch ran out.")).to_be_visible()
    assert_accessible(page, "the expired batch's page")

    Worker.objects.update(blocked=True, blocked_reason="Too fast.")
    page.goto("/work/ab-late/?worker=late-1")
    expect(page.get_by_text("cannot take new work")).to_be_visible()
    assert_accessible(page, "the blocked worker's page")


def abc_eval_campaign(slug, **fields):
    c = campaign(
        "abc_eval",
        slug=slug,
        title="Consistency",
        task_config={"behaviour_task": "consistency", **fields.pop("task_config", {})},
        redundancy=1,
        **fields,
    )
    return c


def test_abc_eval_by_keyboard_and_its_pages_pass_the_audit(page):
    c = abc_eval_campaign("abc-a11y", batch_size=2)
    conversations = loaded([conversation("a11y-1"), conversation("a11y-2")])
    add_items(
        c,
        get_kind("abc_eval").build_from_conversations(
            conversations, c.task_config, random.Random(0)
        ),
    )
    page.goto("/work/abc-a11y/?worker=abc-keys")
    expect(page.locator(".progress")).to_have_text("Item 1 of 2")
    assert_accessible(page, "the ABC-Eval item")
    page.keyboard.press("Enter")
    expect(page.locator("#reviewed-error")).to_be_visible()
    assert_accessible(page, "the ABC-Eval item with its error")
    # Second bot turn, its second label; then "I checked every bot turn".
    for key in ("j", "j", "2", "r", "Enter"):
        page.keyboard.press(key)

    expect(page.locator(".progress")).to_have_text("Item 2 of 2")
    # By Tab and Space: the first label of the first bot turn, then the confirmation.
    tab_to(page, "fieldset.turn-flags input[type=checkbox]")
    page.keyboard.press("Space")
    tab_to(page, "input[name=reviewed]")
    page.keyboard.press("Space")
    tab_to(page, "button.next")
    page.keyboard.press("Enter")

    assert_code_shown(page, "abc-keys")
    ticked = sorted(
        sum(sum(flags) for flags in j.payload["labels"].values()) for j in Judgment.objects.all()
    )
    assert ticked == [1, 1]
