"""The human-versus-automatic page renders in Chromium with its tables and plots, under the
Content-Security-Policy; a researcher compares a judge run from it, and a bipartite-play
tournament's page shows the target rankings by humans and by the judge."""

import pytest
from playwright.sync_api import expect

from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_judge_run
from annotation.models import Campaign, Judgment
from tests import factories
from tests.analysis.dimensional_builders import imported_study
from tests.analysis.judge_builders import bipartite_tournament, judge_run, spotting_judge

from .conftest import ARTIFACTS
from .test_phone_layout import login_cookie
from .test_results_pages import image_loaded

pytestmark = pytest.mark.django_db(transaction=True)

FAST = {"seed": 1, "judge_resamples": 200, "convergence_repeats": 50, "convergence_points": 4}


def first_human_payload(item):
    judgment = Judgment.objects.filter(item=item).order_by("pk").first()
    return None if judgment is None else judgment.payload


def test_a_researcher_compares_a_judge_run_with_the_humans(page, live_server, screenshot):
    ada = factories.user("ada")
    campaign = Campaign.objects.filter(study=imported_study(), task_kind="likert").first()
    Campaign.objects.filter(pk=campaign.pk).update(owner=ada)
    run = judge_run(campaign, first_human_payload, owner=ada)
    page.context.add_cookies([login_cookie(ada, live_server.url)])

    page.goto(f"/results/campaigns/{campaign.slug}/human-vs-automatic/")
    expect(page.locator("#no-comparison")).to_be_visible()
    expect(page.locator("table.judge-runs tbody tr")).to_have_count(1)
    page.get_by_role("button", name="Compare with the humans").click()
    page.wait_for_url(f"**/human-vs-automatic/?judge_run={run.pk}")

    expect(page.locator("#versus-results")).to_be_visible()
    expect(page.locator("table.versus-agreement tbody tr")).to_have_count(2)  # 2 dimensions
    expect(page.locator("section.versus-dimension")).to_have_count(2)
    expect(page.locator(".versus-correlation").first).to_contain_text("Spearman's rho")
    for plot in ("scatter", "convergence"):
        assert image_loaded(page, f"plot-versus-{plot}-0"), plot
    expect(page.locator("#how-to-read")).to_contain_text("Krippendorff's alpha")
    comparison = AnalysisRun.objects.get(judge_run=run)
    assert comparison.status == AnalysisRun.Status.SUCCEEDED
    assert comparison.requested_by == ada
    screenshot("human-vs-automatic")


def test_a_bipartite_tournament_shows_targets_ranked_by_humans_and_by_the_judge(
    page, live_server, screenshot
):
    ada = factories.user("ada")
    tournament = bipartite_tournament(owner=ada)
    comparison = analyze_judge_run(
        judge_run(tournament.campaign, spotting_judge, owner=ada), FAST, synchronous=True
    )
    assert comparison.status == AnalysisRun.Status.SUCCEEDED, comparison.error
    page.context.add_cookies([login_cookie(ada, live_server.url)])

    page.goto(tournament.get_absolute_url())
    summary = page.locator("#versus-summary")
    expect(summary).to_be_visible()
    rows = summary.locator("table.versus-targets tbody tr")
    expect(rows).to_have_count(3)  # the targets; the partners are never ranked
    expect(rows.first).to_contain_text("t-strong")
    expect(summary).to_contain_text("Kendall's tau")
    expect(summary).to_contain_text("partner-one, partner-two")
    ARTIFACTS.mkdir(exist_ok=True)
    summary.screenshot(path=str(ARTIFACTS / "human-vs-automatic-tournament.png"))
    page.locator("#versus-link").click()
    page.wait_for_url(f"**/results/campaigns/{tournament.campaign.slug}/human-vs-automatic/")
    expect(page.locator("section.versus-dimension").first).to_have_attribute(
        "data-dimension", "label"
    )
    screenshot("human-vs-automatic-bipartite")
