"""Staff create an A/B campaign from a prompt set and systems, read its cost, launch it and
preview an item as a worker would see it."""

import pytest

from annotation.models import Campaign, Judgment
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


def test_staff_creates_launches_and_previews_an_ab_campaign(page, screenshot):
    prompt_set = factories.prompt_set(3, slug="greetings")
    for slug, name in [("new-bot", "New Bot"), ("seq2seq", "Seq2Seq"), ("retrieval", "Retrieval")]:
        factories.submission(factories.system(slug=slug, name=name), prompt_set)
    factories.user("admin", staff=True, password="Campaign-Admin-1")

    page.goto("/accounts/login/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "Campaign-Admin-1")
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="Campaigns").click()
    page.get_by_role("link", name="New campaign").click()

    page.select_option("#id_task_kind", "ab")
    page.fill("#id_title", "Greetings: New Bot against baselines")
    page.fill("#id_slug", "greetings-ab")
    page.fill("#id_instructions", "Read the conversation and pick the better next turn.")
    page.fill("#id_batch_size", "2")
    page.fill("#id_reward_per_batch", "0.50")
    page.select_option("#id_prompt_set", "greetings")
    page.select_option("#id_system", "new-bot")
    page.get_by_label("Seq2Seq").check()
    page.get_by_label("Retrieval").check()
    # Crowd platforms are offered beside the plain link (issue 11); this campaign uses the link.
    assert page.locator("#id_provider option[value=prolific]").is_enabled()
    screenshot("admin-campaign-create")
    page.get_by_role("button", name="Create draft campaign").click()

    page.wait_for_url("**/manage/campaigns/greetings-ab/")
    # 3 prompts x 2 baselines = 6 items in 3 batches; 3 batches x 3 workers x 0.50.
    assert "6 items in 3 batches" in page.locator(".message.success").inner_text()
    assert page.get_by_test_id("cost").inner_text().startswith("4.50")
    assert page.get_by_test_id("status").inner_text() == "Draft"

    page.get_by_role("button", name="Launch").click()
    # A confirmation page first (issue 14), which works without JavaScript.
    assert "Workers can start at once" in page.get_by_test_id("consequence").inner_text()
    page.get_by_role("button", name="Yes, launch it").click()
    page.wait_for_load_state()
    assert page.get_by_test_id("status").inner_text() == "Live"
    assert Campaign.objects.get(slug="greetings-ab").launched_at is not None
    screenshot("admin-campaign-detail")

    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    page.get_by_role("link", name="Preview item 0").click()
    assert page.get_by_text("Which response is the better next turn?").is_visible()
    page.get_by_role("button", name="Next").click()
    assert page.locator(".error").first.inner_text() == (
        "Choose an answer for which response is better."
    )
    page.get_by_text("It's a tie", exact=True).click()
    page.get_by_role("button", name="Next").click()
    assert "The answer is valid." in page.locator(".message.success").inner_text()
    assert not Judgment.objects.exists()
