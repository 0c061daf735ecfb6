"""A researcher registers an automatic judge on their OpenAI-compatible endpoint, starts
it on an A/B campaign from the judge's page, and watches the run's progress bar fill as
the worker judges the items (a slow fake judge on 127.0.0.1), then reads the judgments."""

import pytest

from judging import execution, sending
from judging.models import JudgeRun
from tests import factories
from tests.endpoints import openai_fake
from tests.judging import builders, fake_judges

pytestmark = pytest.mark.django_db(transaction=True)

ITEMS = 8


@pytest.fixture
def slow_judge():
    script = fake_judges.Slow({"better": "2"}, 0.4)
    with openai_fake.FakePool() as pool:
        yield pool.start(script)


def test_a_judge_runs_over_a_campaign_with_progress_shown(
    page, slow_judge, screenshot, monkeypatch
):
    ada = factories.user("ada", password="Analytical-Engine-1843")
    endpoint = builders.endpoint(slow_judge, owner=ada, max_concurrency=4)
    endpoint.system.name = "Judge model"
    endpoint.system.save()
    campaign = builders.ab(ITEMS, owner=ada, title="Ada's A/B test")
    rubric = builders.default_rubric("ab")
    # The worker is this test: the run stays queued when started, as with a busy broker.
    queued = []
    monkeypatch.setattr(sending, "send", lambda run: queued.append(run.pk) or True)

    page.goto("/accounts/login/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "Analytical-Engine-1843")
    page.locator("main form button[type=submit]").click()

    page.goto("/judges/")
    page.get_by_role("link", name="Register a judge").click()
    page.fill("#id_slug", "ada-judge")
    page.fill("#id_name", "Ada's judge")
    page.select_option("#id_endpoint", str(endpoint.pk))
    page.get_by_role("button", name="Register").click()
    page.get_by_role("heading", name="Ada's judge").wait_for()

    page.select_option("#id_campaign", str(campaign.pk))
    page.select_option("#id_rubric", str(rubric.pk))
    page.fill("#id_concurrency", "1")
    page.get_by_role("button", name="Start the run").click()
    page.get_by_text("The run is queued.").wait_for()
    run = JudgeRun.objects.get()
    assert queued == [run.pk] and run.status == "queued"
    progress = page.locator("#judge-progress")
    assert progress.locator('[data-field="status"]').inner_text() == "Queued"

    # Record every percentage the page shows while the worker judges.
    page.evaluate(
        """() => {
        window.shownPercents = [];
        const bar = document.querySelector('[data-field="percent"]');
        new MutationObserver(() => window.shownPercents.push(Number(bar.textContent)))
            .observe(bar, {childList: true, characterData: true, subtree: true});
    }"""
    )
    assert execution.execute(run.pk) == "done"

    progress.locator('[data-field="status"]', has_text="Done").wait_for()
    assert progress.locator('[data-field="percent"]').inner_text() == "100"
    assert progress.locator('[data-field="items_done"]').inner_text() == str(ITEMS)
    assert page.locator("progress").get_attribute("value") is not None
    shown = page.evaluate("window.shownPercents")
    assert any(0 < p < 100 for p in shown), shown  # the bar moved while the run went on
    assert progress.locator('[data-field="prompt_tokens"]').inner_text() == str(10 * ITEMS)

    page.reload()
    rows = page.locator("table.automatic-judgments tbody tr")
    assert rows.count() == ITEMS
    screenshot("judge-run")
    assert '"choice"' in rows.first.inner_text()
    run.refresh_from_db()
    assert (run.items_done, run.items_failed, run.judgments.count()) == (ITEMS, 0, ITEMS)
    assert len(slow_judge.requests) == ITEMS
