"""A researcher signs up, registers a system, fixes a bad upload and reads the metrics."""

import pytest

from evalhub.models import Submission, System
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


def test_researcher_submits_responses_and_sees_metrics(page, screenshot):
    factories.prompt_set(3, slug="greetings")

    page.goto("/")
    page.get_by_role("link", name="Sign up", exact=True).first.click()
    page.fill("#id_username", "ada")
    page.fill("#id_email", "ada@example.org")
    page.fill("#id_password1", "Analytical-Engine-1843")
    page.fill("#id_password2", "Analytical-Engine-1843")
    page.get_by_role("button", name="Create account").click()

    page.wait_for_url("**/systems/new/")
    page.fill("#id_name", "Ada Bot")
    page.fill("#id_slug", "ada-bot")
    page.fill("#id_description", "A chatbot that answers politely.")
    page.get_by_role("button", name="Register").click()

    page.wait_for_url("**/systems/ada-bot/submit/")
    page.select_option("#id_prompt_set", "greetings")
    page.set_input_files(
        "#id_file",
        files=[{"name": "ada.txt", "mimeType": "text/plain", "buffer": b"hello there\nbye\n"}],
    )
    page.get_by_role("button", name="Upload").click()
    errors = page.locator(".upload-errors")
    errors.wait_for()
    assert "Expected 3 lines, one response per prompt in order; the file has 2." in (
        errors.inner_text()
    )
    screenshot("submission-error")
    assert Submission.objects.count() == 0

    page.select_option("#id_prompt_set", "greetings")
    page.set_input_files(
        "#id_file",
        files=[
            {
                "name": "ada.txt",
                "mimeType": "text/plain",
                "buffer": b"a b a\nb c\nhi there number 3 .\n",
            }
        ],
    )
    page.get_by_role("button", name="Upload").click()
    page.wait_for_url("**/systems/ada-bot/?submission=*")
    metrics = page.locator("table.metrics tbody tr").first
    text = metrics.inner_text()
    # 10 tokens over 3 responses; 8 distinct unigrams and 7 distinct bigrams over 10 tokens.
    assert "Scored" in text and "3.33" in text and "0.8000" in text and "0.7000" in text
    assert "hi there number 3 ." in page.locator("table.responses").inner_text()
    screenshot("system-profile")
    assert System.objects.get(slug="ada-bot").owner.username == "ada"
