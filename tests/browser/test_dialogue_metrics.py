"""The Alexa Prize metrics page renders its metric table and Table 2-style rankings."""

import pytest
from playwright.sync_api import expect

from tests.analysis.dialogue_world import build_world

pytestmark = pytest.mark.django_db(transaction=True)


def test_visitor_reads_the_alexa_metrics_of_a_domain(page, screenshot):
    build_world()
    page.goto("/leaderboards/dialogues/domain/chitchat/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("chitchat")
    table = page.get_by_test_id("metric-table")
    expect(table.locator("thead th")).to_have_text(["Metric", "alpha", "beta"])
    expect(table.get_by_role("row", name="Engagement: median duration")).to_contain_text("60.00")
    stack = page.get_by_test_id("ranking-stack")
    expect(stack.get_by_role("row", name="Total score")).to_be_visible()
    circle = page.get_by_test_id("ranking-winners_circle")
    expect(circle.get_by_role("row", name="CUX: mean user rating")).to_contain_text("1")
    expect(page.get_by_test_id("ranking-confidence_bands")).to_be_visible()
    expect(page.get_by_text("secret")).to_have_count(0)
    screenshot("alexa-metrics")
