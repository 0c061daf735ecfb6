"""A participant arrives by an external link and completes an A/B batch in Chromium."""

import pytest

from annotation.models import Assignment, Judgment
from tests.annotation.builders import ab_campaign

pytestmark = pytest.mark.django_db(transaction=True)


def test_participant_compares_responses_and_gets_the_completion_code(page, screenshot):
    campaign = ab_campaign(3, batch_size=3, redundancy=1, instructions="Pick the better response.")
    page.goto(f"/work/{campaign.slug}/?worker=p-ab-1")
    page.get_by_text("Item 1 of 3").wait_for()

    # Nothing chosen: the page says what is missing, next to the question.
    page.get_by_role("button", name="Next").click()
    assert "Choose an answer for which response is better." in page.locator(".ab").inner_text()

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
    assignment = Assignment.objects.get(worker__external_id="link:p-ab-1")
    assert assignment.status == "submitted" and code == assignment.completion_code
    judgments = Judgment.objects.filter(assignment=assignment)
    assert judgments.count() == 3
    assert all(j.client_duration_ms is not None for j in judgments)
