"""A participant arrives by an external link and completes an A/B batch in Chromium."""

import re

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment, Judgment
from tests.annotation.builders import ab_campaign

pytestmark = pytest.mark.django_db(transaction=True)


def test_participant_compares_responses_and_gets_the_completion_code(page, screenshot):
    campaign = ab_campaign(3, batch_size=3, redundancy=1, instructions="Pick the better response.")
    page.goto(f"/work/{campaign.slug}/?worker=p-ab-1")
    page.get_by_text("Item 1 of 3").wait_for()

    # Nothing chosen: the page says what is missing, next to the question.
    page.get_by_role("button", name="Next").click()
    # The refusal comes back in place: wait for it rather than for a page load.
    expect(page.locator(".ab")).to_contain_text("Choose an answer for which response is better.")

    page.keyboard.press("1")  # shortcut: the left response
    assert page.locator("input[value=left]").is_checked()
    screenshot("worker-ab")
    page.keyboard.press("Enter")
    page.get_by_text("Item 2 of 3").wait_for()
    page.locator("label.tie").click()
    page.get_by_role("button", name="Next").click()
    page.get_by_text("Item 3 of 3").wait_for()
    page.keyboard.press("2")
    page.get_by_role("button", name="Finish").click()

    code = page.get_by_test_id("completion-code").inner_text()
    # Shown in place of the task page, at the completion page's own address.
    expect(page).to_have_url(re.compile(r"/work/assignment/[0-9a-f-]+/done/$"))
    assignment = Assignment.objects.get(worker__external_id="link:p-ab-1")
    assert assignment.status == "submitted" and code == assignment.completion_code
    judgments = Judgment.objects.filter(assignment=assignment)
    assert judgments.count() == 3
    assert all(j.client_duration_ms is not None for j in judgments)


def test_each_answer_is_one_request_and_the_next_item_comes_in_place(page):
    campaign = ab_campaign(3, batch_size=3, redundancy=1)
    page.goto(f"/work/{campaign.slug}/?worker=p-ab-2")
    page.get_by_text("Item 1 of 3").wait_for()
    address = page.url
    sent = []
    page.on("request", lambda request: sent.append((request.method, request.resource_type)))
    for n in (1, 2):
        page.locator("label.tie").click()
        page.get_by_role("button", name="Next").click()
        page.get_by_text(f"Item {n + 1} of 3").wait_for()
    # Two answers, two posts by the script, and no page loaded: the URL never changed.
    assert sent == [("POST", "fetch"), ("POST", "fetch")]
    assert page.url == address
    assert Judgment.objects.filter(worker__external_id="link:p-ab-2").count() == 2


def test_an_answer_the_script_cannot_send_is_posted_the_plain_way_and_stored_once(page):
    campaign = ab_campaign(2, batch_size=2, redundancy=1)
    page.goto(f"/work/{campaign.slug}/?worker=p-ab-3")
    page.get_by_text("Item 1 of 2").wait_for()
    page.route(
        "**/items/**",
        lambda route: (
            route.abort() if route.request.headers.get("x-evalhub-in-place") else route.continue_()
        ),
    )
    page.locator("label.tie").click()
    page.get_by_role("button", name="Next").click()
    page.get_by_text("Item 2 of 2").wait_for()
    judgments = Judgment.objects.filter(worker__external_id="link:p-ab-3")
    assert [j.payload["choice"] for j in judgments] == ["tie"]
