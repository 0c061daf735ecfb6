"""The ABC-Eval, Likert and comparative result pages render with their plots in Chromium,
under the Content-Security-Policy (the page fixture fails on anything it refuses)."""

import pytest
from playwright.sync_api import expect

from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_campaign, analyze_study
from annotation.models import Campaign
from tests import factories
from tests.analysis.dimensional_builders import FAST, imported_study

from .test_phone_layout import login_cookie

pytestmark = pytest.mark.django_db(transaction=True)


def logged_in_staff(page, live_server):
    page.context.add_cookies([login_cookie(factories.user(staff=True), live_server.url)])


def image_loaded(page, element_id: str) -> bool:
    image = page.locator(f"#{element_id}")
    image.scroll_into_view_if_needed()
    expect(image).to_be_visible()
    page.wait_for_function("id => document.getElementById(id).complete", arg=element_id)
    return page.evaluate("id => document.getElementById(id).naturalWidth > 0", element_id)


def analysed_campaign(kind: str) -> Campaign:
    campaign = Campaign.objects.get(study=imported_study(), task_kind=kind)
    run = analyze_campaign(campaign, FAST, synchronous=True)
    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    return campaign


def test_abc_eval_results_show_behaviour_rates_and_agreement(page, live_server, screenshot):
    study = imported_study()
    run = analyze_study(study, FAST, synchronous=True)
    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    logged_in_staff(page, live_server)
    page.goto("/leaderboards/")
    page.get_by_role("link", name="Made-up ABC-Eval").click()
    page.wait_for_url(f"**/studies/{study.slug}/")
    expect(page.locator("table.behaviour-rates tbody tr")).to_have_count(4)  # 2 bots x 2 labels
    for plot in ("behaviours-undesirable", "behaviours-desirable", "agreement"):
        assert image_loaded(page, f"plot-{plot}"), plot
    expect(page.locator("table.agreement")).to_contain_text("ignore_b")
    screenshot("results-abc-eval")


def test_likert_results_show_means_with_t_intervals(page, live_server):
    campaign = analysed_campaign("likert")
    logged_in_staff(page, live_server)
    page.goto(f"/manage/campaigns/{campaign.slug}/")
    page.locator("#campaign-results-link").click()
    page.wait_for_url(f"**/results/campaigns/{campaign.slug}/")
    expect(page.locator("table.likert-means tbody tr")).to_have_count(4)  # 2 bots x 2 dims
    assert image_loaded(page, "plot-likert-dialogue")


def test_comparative_results_show_win_tie_loss_bars(page, live_server):
    campaign = analysed_campaign("comparative")
    logged_in_staff(page, live_server)
    page.goto(f"/results/campaigns/{campaign.slug}/")
    rows = page.locator("table.comparative-results tbody tr")
    expect(rows).to_have_count(2)  # one pair of bots, 2 dimensions
    expect(rows.filter(has_text="quality")).to_contain_text("bot-bad")
    assert image_loaded(page, "plot-comparative")
