"""A researcher registers an automatic judge with its own OpenAI-compatible endpoint (no
system to register first), tests the connection on the endpoint's page, starts the judge
on an A/B campaign from the judge's page, and watches the run's progress bar fill as
the worker judges the items (a slow fake judge on 127.0.0.1), then reads the judgments."""

import pytest

from evalhub.models import System
from judging import execution, sending
from judging.models import Judge, JudgeRun
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
    page.fill("#id_url", slow_judge.base_url)
    page.fill("#id_model_name", "judge-model")
    page.fill("#id_auth_token", "sk-ada-judge-key")
    page.fill("#id_max_concurrency", "4")
    page.get_by_role("button", name="Register").click()
    page.get_by_role("heading", name="Ada's judge").wait_for()
    judge = Judge.objects.get(slug="ada-judge")
    assert (judge.endpoint.system, judge.endpoint.owner) == (None, ada)
    assert judge.endpoint.auth_token == "sk-ada-judge-key" and not System.objects.exists()

    page.locator("#judge-endpoint-link").click()
    page.get_by_role("heading", name="Model endpoint of Ada's judge").wait_for()
    assert "sk-ada-judge-key" not in page.content()
    page.get_by_role("button", name="Test connection").click()
    page.get_by_text("Connected in").wait_for()
    page.goto(judge.get_absolute_url())

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
    assert len(slow_judge.requests) == ITEMS + 1  # and the connection test
