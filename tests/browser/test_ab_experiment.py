"""A researcher runs an A/B experiment against two baselines; a participant does a batch."""

import json
import re

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment, Judgment
from evalhub.demo import DAILY_PROMPTS, answer
from evalhub.services import create_prompt_set, submit_responses
from tests import factories
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db(transaction=True)
PHONE = {"width": 390, "height": 844}


def demo_like_catalog():
    """Three everyday prompts; the researcher's persona bot and two demo baselines."""
    prompts = DAILY_PROMPTS[:3]
    data = "\n".join(
        json.dumps({"id": str(n), "context": [p], "references": [r]})
        for n, (p, r) in enumerate(prompts, 1)
    ).encode()
    prompt_set = create_prompt_set(
        slug="daily", name="Everyday chit-chat", data=data, filename="d.jsonl"
    )
    ada = factories.user("ada", password="Analytical-Engine-1843")
    systems = [
        (factories.system(ada, slug="ada-bot", name="Ada Bot"), "persona"),
        (
            factories.system(
                None, slug="seq2seq-baseline", name="Seq2seq baseline", is_baseline=True
            ),
            "seq2seq",
        ),
        (
            factories.system(
                None, slug="retrieval-baseline", name="Retrieval baseline", is_baseline=True
            ),
            "retrieval",
        ),
    ]
    for system, style in systems:
        lines = [answer(style, [p], r, i) for i, (p, r) in enumerate(prompts)]
        submit_responses(
            system=system,
            prompt_set=prompt_set,
            data=("\n".join(lines) + "\n").encode(),
            filename="r.txt",
        )


def test_researcher_launches_an_ab_experiment_and_a_participant_finishes_a_batch(
    page, browser, live_server, screenshot
):
    demo_like_catalog()

    page.goto("/accounts/login/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "Analytical-Engine-1843")
    page.locator("main form button[type=submit]").click()
    page.goto("/tournaments/")
    page.get_by_role("link", name="New A/B experiment").click()

    page.fill("#id_name", "Ada Bot vs baselines")
    page.fill("#id_slug", "ada-ab")
    option = page.locator("#id_submission option", has_text="Ada Bot on Everyday chit-chat")
    page.select_option("#id_submission", option.get_attribute("value"))
    page.check('input[name="baselines"][value="seq2seq-baseline"]')
    page.check('input[name="baselines"][value="retrieval-baseline"]')
    page.fill("#id_judgments_per_prompt", "2")
    page.fill("#id_prompts_per_batch", "3")
    page.fill("#id_reward_per_judgment", "0.05")
    page.get_by_role("button", name="Create").click()

    page.wait_for_url("**/tournaments/ada-ab/")
    # 3 prompts × 2 baselines = 6 comparisons, 2 judgments each, 0.05 per judgment.
    expect(page.get_by_test_id("cost")).to_contain_text("0.60")
    expect(page.get_by_test_id("ab-plan")).to_contain_text("6 comparisons shown")
    page.get_by_role("button", name="Generate the campaign").click()
    expect(page.locator(".message.success")).to_contain_text("Campaign generated: 2 batches.")
    expect(page.get_by_test_id("campaign-status")).to_have_text("Draft")
    expect(page.get_by_test_id("cost")).to_contain_text("0.60")
    screenshot("tournament-ab")
    page.get_by_role("button", name="Launch the campaign").click()
    expect(page.get_by_test_id("campaign-status")).to_have_text("Live")
    expect(page.get_by_test_id("tournament-status")).to_have_text("Being annotated")
    expect(page.get_by_test_id("cost")).to_have_count(0)

    campaign = Tournament.objects.get(slug="ada-ab").campaign
    # The participant arrives by a shared `?worker=` link, which the campaign must allow.
    type(campaign).objects.filter(pk=campaign.pk).update(allow_worker_param=True)
    # An unpublished tournament's campaign serves only invited or platform workers
    # (annotation/visibility.py): the plain link works once the tournament is published.
    Tournament.objects.filter(slug="ada-ab").update(published=True)
    participant = browser.new_context(base_url=live_server.url, viewport=PHONE).new_page()
    participant.set_default_timeout(15_000)
    participant.goto(f"/work/{campaign.slug}/?worker=p1")
    expect(participant.locator(".progress")).to_have_text("Item 1 of 3")
    assert (
        "seq2seq-baseline" not in participant.content() and "ada-bot" not in participant.content()
    )

    # Going on without an answer keeps the participant on the item with the message.
    participant.get_by_role("button", name="Next").click()
    expect(participant.locator(".errors")).to_contain_text("Choose an answer")
    expect(participant.locator(".progress")).to_have_text("Item 1 of 3")

    for n, choice in enumerate(["left", "right", "tie"], 1):
        expect(participant.locator(".progress")).to_have_text(f"Item {n} of 3")
        participant.check(f'input[name="choice"][value="{choice}"]')
        participant.get_by_role("button", name="Finish" if n == 3 else "Next").click()

    code = participant.get_by_test_id("completion-code")
    expect(code).to_have_text(re.compile(r"^[0-9A-F]{8}$"))
    assignment = Assignment.objects.get(worker__external_id="link:p1")
    assert assignment.status == "submitted" and code.inner_text() == assignment.completion_code
    assert Judgment.objects.filter(assignment=assignment).count() == 3
    participant.context.close()
