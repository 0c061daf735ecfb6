"""The leaderboard of an analysed (simulated) tournament renders with its plots in Chromium."""

import pytest
from playwright.sync_api import expect

from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_tournament
from tests import factories
from tests.analysis import builders
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db(transaction=True)
PLOTS = ("plot-heatmap", "plot-survival", "plot-cox", "plot-stability")


def analysed_tournament() -> Tournament:
    tournament = builders.spot_the_bot_tournament(slug="garden-cup", name="Garden cup")
    Tournament.objects.filter(pk=tournament.pk).update(published=True)
    run = analyze_tournament(tournament, builders.FAST, synchronous=True)
    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    return tournament


def loaded(page, element_id: str) -> bool:
    return page.evaluate(
        "id => { const img = document.getElementById(id); return img.complete && img.naturalWidth > 0; }",
        element_id,
    )


def test_visitor_reads_the_leaderboard_with_its_plots(page, screenshot):
    analysed_tournament()
    page.goto("/")
    page.get_by_role("link", name="Leaderboards").click()
    page.get_by_role("link", name="Garden cup").click()
    page.wait_for_url("**/leaderboards/garden-cup/")

    rows = page.locator("table.ranking tbody tr")
    expect(rows).to_have_count(len(builders.HAZARDS))
    # The strongest simulated system leads, the weakest comes last.
    expect(rows.first).to_have_attribute("data-system", "bot-strong")
    expect(rows.last).to_have_attribute("data-system", "bot-weak")
    for element_id in PLOTS:
        image = page.locator(f"#{element_id}")
        image.scroll_into_view_if_needed()
        expect(image).to_be_visible()
        page.wait_for_function("id => document.getElementById(id).complete", arg=element_id)
        assert loaded(page, element_id), element_id
    screenshot("leaderboard")

    # On a phone the page scrolls vertically only: wide tables scroll inside their box.
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    expect(page.locator("#plot-survival")).to_be_visible()


def test_staff_run_the_analysis_and_see_the_new_run(page):
    tournament = analysed_tournament()
    factories.user("boss", staff=True, password="pw-for-tests-1")
    page.goto("/accounts/login/?next=/leaderboards/manage/runs/")
    page.fill("#id_username", "boss")
    page.fill("#id_password", "pw-for-tests-1")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/leaderboards/manage/runs/")
    row = page.locator(f'tr[data-tournament="{tournament.slug}"]')
    expect(row).to_contain_text("Succeeded")
    row.get_by_label("exclude blocked workers").check()
    row.get_by_role("button", name="Run analysis").click()
    page.wait_for_url("**/leaderboards/manage/runs/")
    expect(page.locator(".message").first).to_contain_text("Garden cup")
    run = tournament.analysis_runs.latest_succeeded()
    assert run.parameters["exclude_blocked"] is True
    expect(page.locator(f'tr[data-tournament="{tournament.slug}"]')).to_contain_text(
        f"run {run.pk}"
    )
