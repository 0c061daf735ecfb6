"""The budget planner and the stopping rule of a campaign: the API, the page section and the
settings form (annotation/planning.py, annotation/api/planning.py)."""

from decimal import Decimal

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.costs import price_per_judgment
from annotation.models import Campaign
from tests import factories
from tests.annotation.test_pairing import judge, pairs_campaign

pytestmark = pytest.mark.django_db

QUERY = {"systems": 3, "spread_elo": 300, "studies": 20}


@pytest.fixture
def owner():
    return factories.user("researcher")


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def plan_url(made):
    return f"/api/campaigns/{made.slug}/plan/"


def test_the_plan_prices_the_judgments_with_the_platform_fee(owner, settings):
    settings.EVALHUB_PROLIFIC_SERVICE_FEE = 0.25
    made = pairs_campaign(
        [("x", "y")] * 4,
        owner=owner,
        provider="prolific",
        reward_per_batch=Decimal("2.00"),
        batch_size=4,
        status="draft",
    )
    response = api(owner).get(plan_url(made), QUERY)
    assert response.status_code == 200
    body = response.json()
    # (2.00 + 25% fee) / 4 judgments a batch.
    assert body["price_per_judgment"] == "0.6250"
    for allocation in ("uniform", "adaptive"):
        row = body["allocations"][allocation]
        assert row["judgments_80"] <= row["judgments_95"]
        assert Decimal(row["cost_80"]) == Decimal("0.625") * row["judgments_80"]
    assert [s["system"] for s in body["systems"]] == ["system 1", "system 2", "system 3"]
    assert price_per_judgment("local", Decimal("2.00"), 4, 3) == Decimal("0.5")


def test_a_plan_without_a_spread_or_pilot_is_a_400_naming_what_to_give(owner):
    made = pairs_campaign([("x", "y")] * 4, owner=owner)
    response = api(owner).get(plan_url(made), {"systems": 3})
    assert response.status_code == 400
    assert "spread" in response.json()["errors"][0]["message"].lower()


def test_a_level_out_of_range_is_a_field_error(owner):
    made = pairs_campaign([("x", "y")] * 4, owner=owner)
    response = api(owner).get(plan_url(made), {**QUERY, "level": 1.5})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "level"


def test_a_pilot_needs_ten_judgments(owner):
    made = pairs_campaign([("x", "y")] * 4, owner=owner, redundancy=1)
    judge(made, "w0", ["a"])
    response = api(owner).get(plan_url(made), {"pilot": "true", "studies": 20})
    assert response.status_code == 400
    assert "at least 10" in response.json()["errors"][0]["message"]


def test_the_plan_from_a_pilot_uses_its_systems(owner):
    made = pairs_campaign([("x", "y")] * 12 + [("y", "z")] * 12, owner=owner, redundancy=1)
    for i in range(12):
        judge(made, f"w{i}", ["a" if i % 3 else "b"])
    response = api(owner).get(plan_url(made), {"pilot": "true", "studies": 20})
    assert response.status_code == 200
    body = response.json()
    assert body["source"] == "pilot" and {s["system"] for s in body["systems"]} == {"x", "y", "z"}


def test_strangers_may_not_plan_a_campaign(owner):
    made = pairs_campaign([("x", "y")] * 4, owner=owner)
    assert api(factories.user("stranger")).get(plan_url(made), QUERY).status_code in (403, 404)


def test_the_stopping_rule_in_the_api(owner):
    made = pairs_campaign([("x", "y")] * 4, owner=owner, redundancy=1)
    judge(made, "w0", ["a"])
    response = api(owner).get(f"/api/campaigns/{made.slug}/stopping/")
    assert response.status_code == 200
    assert response.json() | {"order": None} == {
        "level": 0.95,
        "judgments": 1,
        "adjacent_pairs": 1,
        "separated_pairs": 0,
        "answered": False,
        "order": None,
    }


def test_the_campaign_page_shows_the_plan_when_asked(client, owner):
    made = pairs_campaign([("x", "y")] * 4, owner=owner, status="draft")
    client.force_login(owner)
    url = reverse("annotation:manage-campaign", args=[made.slug])
    response = client.get(url, {"plan": "1", **QUERY, "level": "0.95"})
    assert response.status_code == 200
    assert b'id="plan-table"' in response.content and b'id="stopping-open"' in response.content
    assert response.context["plan"]["allocations"]["adaptive"]["judgments_80"] > 0


def test_the_owner_switches_the_campaign_to_adaptive_allocation(client, owner):
    made = pairs_campaign([("x", "y")] * 4, owner=owner)
    client.force_login(owner)
    response = client.post(
        reverse("annotation:manage-campaign-pairing", args=[made.slug]),
        {"allocation": "adaptive", "separation_level": "0.9", "pause_when_answered": "on"},
    )
    assert response.status_code == 302
    made.refresh_from_db()
    assert (made.allocation, made.separation_level, made.pause_when_answered) == (
        Campaign.Allocation.ADAPTIVE,
        0.9,
        True,
    )


def test_a_bad_level_is_refused_and_nothing_changes(client, owner):
    made = pairs_campaign([("x", "y")] * 4, owner=owner)
    client.force_login(owner)
    client.post(
        reverse("annotation:manage-campaign-pairing", args=[made.slug]),
        {"allocation": "adaptive", "separation_level": "2"},
    )
    made.refresh_from_db()
    assert (made.allocation, made.separation_level) == (Campaign.Allocation.IN_ORDER, 0.95)


def test_a_plan_too_large_for_a_request_is_refused_saying_how_many_studies_fit(owner):
    made = pairs_campaign([("x", "y")] * 4, owner=owner)
    response = api(owner).get(plan_url(made), {"systems": 30, "spread_elo": 300, "studies": 100})
    assert response.status_code == 400
    assert "at most 22 studies" in response.json()["errors"][0]["message"]
