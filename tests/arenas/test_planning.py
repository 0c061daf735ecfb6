"""An arena's budget planner and stopping rule in the API and on its page (issue 27)."""

from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from annotation.crowd.mturk import commission
from tests import factories
from tests.arenas.builders import arena, bot_system
from tests.arenas.test_pairing_state import voted

pytestmark = pytest.mark.django_db

QUERY = {"systems": 3, "spread_elo": 300, "studies": 20}


@pytest.fixture
def owner():
    return factories.user()


def api(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_arena_plan_prices_paid_votes_with_the_platform_fee(owner):
    made = arena(owner)
    response = api(owner).get(
        f"/api/arenas/{made.slug}/plan/",
        {**QUERY, "price_per_vote": "0.10", "provider": "mturk"},
    )
    assert response.status_code == 200
    body = response.json()
    price = Decimal("0.10") + commission(Decimal("0.10"), 1)
    assert Decimal(body["price_per_judgment"]) == price
    row = body["allocations"]["adaptive"]
    assert Decimal(row["cost_95"]) == price * row["judgments_95"]


def test_voters_who_are_not_paid_cost_nothing_in_the_plan(owner):
    made = arena(owner)
    body = api(owner).get(f"/api/arenas/{made.slug}/plan/", QUERY).json()
    assert body["price_per_judgment"] is None
    assert body["allocations"]["uniform"]["cost_80"] is None


def test_only_the_owner_plans_an_arena(owner):
    made = arena(owner)
    response = api(factories.user("stranger")).get(f"/api/arenas/{made.slug}/plan/", QUERY)
    assert response.status_code == 403


def test_the_stopping_rule_of_a_public_arena_is_public(owner):
    one, two = bot_system(owner), bot_system(owner)
    made = arena(owner, systems=[one, two])
    voted(made, one, two, "a_better")
    response = api(factories.user("visitor")).get(f"/api/arenas/{made.slug}/stopping/")
    assert response.status_code == 200
    body = response.json()
    assert (body["votes"], body["adjacent_pairs"], body["answered"]) == (1, 1, False)


def test_the_owner_sees_the_plan_on_the_arena_page(client, owner):
    made = arena(owner)
    client.force_login(owner)
    response = client.get(made.get_absolute_url(), {"plan": "1", **QUERY, "level": "0.95"})
    assert response.status_code == 200
    assert b'id="plan-table"' in response.content
    assert response.context["plan"]["allocations"]["uniform"]["judgments_80"] > 0


def test_visitors_see_no_planner(client, owner):
    made = arena(owner)
    response = client.get(made.get_absolute_url(), {"plan": "1", **QUERY})
    assert response.status_code == 200 and b'id="budget-planner"' not in response.content
