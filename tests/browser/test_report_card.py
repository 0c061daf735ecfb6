"""A system's report card renders on its profile, and its evidence link leads to the turns."""

import pytest
from playwright.sync_api import expect

from tests import factories
from tests.analysis.dialogue_world import build_world
from tests.analysis.pages.test_report_card_views import BEHAVIOURS, succeeded_run

pytestmark = pytest.mark.django_db(transaction=True)


def test_staff_read_a_report_card_and_follow_it_to_the_evidence(page, live_server, screenshot):
    world = build_world()
    succeeded_run(
        campaign=world["campaign"],
        result={"kind": "abc_eval", "systems": ["alpha", "beta"], "behaviours": BEHAVIOURS},
    )
    factories.user("boss", staff=True, password="pw-for-tests-1")
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill("boss")
    page.get_by_label("Password").fill("pw-for-tests-1")
    page.get_by_role("button", name="Log in").click()

    page.goto("/systems/beta/")
    card = page.get_by_test_id("report-card")
    expect(card.get_by_role("heading", name="Report card")).to_be_visible()
    row = card.locator('tr[data-verdict="weakness"]')
    expect(row).to_contain_text("self contradiction")
    screenshot("report-card")
    row.get_by_role("link", name="self contradiction").click()
    page.wait_for_url("**/leaderboards/systems/beta/behaviours/**")
    expect(page.get_by_test_id("evidence")).to_contain_text("h-beta")
    expect(page.get_by_test_id("evidence-total")).to_have_text("1 flagged turn.")
