"""Oversight on the staff campaign page: money spent against the budget, the expected
finish, judgments over time as an SVG plot; the preview's walk through every item; the
budget in the form and the API."""

from dataclasses import replace
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.items import add_items
from annotation.models import Assignment, Campaign, CrowdAction, Item
from annotation.oversight import expected_finish, oversight, preview_nav, spent
from annotation.progress import progress
from tests import factories
from tests.annotation.builders import ab_campaign, ab_spec, campaign
from tests.annotation.test_manage import ab_setup, form_data  # noqa: F401
from tests.annotation.test_progress import NOW, judge, shown

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    client.force_login(factories.user("boss", staff=True))
    return client


def page_url(c):
    return reverse("annotation:manage-campaign", args=[c.slug])


def test_spent_pays_submitted_and_approved_batches_and_done_bonuses():
    c = ab_campaign(6, batch_size=2, reward_per_batch=Decimal("1.50"))
    for n, item in enumerate(shown(c)):
        judge(item, f"w{n % 3}", at=NOW)
    statuses = [Assignment.Status.SUBMITTED, Assignment.Status.APPROVED, Assignment.Status.REJECTED]
    for assignment, status in zip(Assignment.objects.order_by("pk"), statuses * 10, strict=False):
        Assignment.objects.filter(pk=assignment.pk).update(status=status)
    paid = Assignment.objects.filter(status__in=statuses[:2]).count()
    CrowdAction.objects.create(
        campaign=c,
        provider="local",
        action="bonus",
        amount=Decimal("0.25"),
        idempotency_key="b1",
        state=CrowdAction.State.DONE,
    )
    CrowdAction.objects.create(
        campaign=c,
        provider="local",
        action="bonus",
        amount=Decimal("9"),
        idempotency_key="b2",
        state=CrowdAction.State.FAILED,
    )
    assert spent(c) == paid * Decimal("1.50") + Decimal("0.25")


def test_the_expected_finish_follows_the_last_days_rate():
    c = ab_campaign(4, redundancy=1, batch_size=2, launched_at=NOW - timedelta(hours=2))
    judge(shown(c)[0], "w1", at=NOW - timedelta(hours=1))
    judge(shown(c)[1], "w1", at=NOW - timedelta(minutes=30))
    done = progress(c, NOW)
    # 2 judgments in the 2 hours since launch: 1 per hour, 2 to go.
    assert expected_finish(done, NOW) == NOW + timedelta(hours=2)


def test_no_expected_finish_without_judgments_or_work_left():
    c = ab_campaign(2, redundancy=1, launched_at=NOW - timedelta(hours=1))
    assert expected_finish(progress(c, NOW), NOW) is None
    for item in shown(c):
        judge(item, "w1", at=NOW - timedelta(minutes=5))
    assert expected_finish(progress(c, NOW), NOW) is None


def test_the_plot_draws_the_cumulative_judgments_against_the_target():
    c = ab_campaign(4, redundancy=1, batch_size=2)
    assert oversight(c, NOW).plot_svg == ""
    judge(shown(c)[0], "w1", at=NOW - timedelta(hours=3))
    judge(shown(c)[1], "w1", at=NOW - timedelta(hours=1))
    svg = oversight(c, NOW).plot_svg
    assert svg.startswith("<svg") and "<polyline" in svg and "target 4" in svg
    assert "2 of 4 judgments" in svg
    # Origin, then one point per hour with judgments.
    points = svg.split('points="')[1].split('"')[0].split()
    assert len(points) == 3


def test_the_campaign_page_shows_spent_budget_finish_and_plot(staff):
    c = ab_campaign(
        4,
        redundancy=1,
        batch_size=2,
        reward_per_batch=Decimal("2"),
        budget=Decimal("3"),
        launched_at=NOW - timedelta(hours=2),
    )
    judge(shown(c)[0], "w1", at=NOW - timedelta(hours=1))
    judge(shown(c)[2], "w2", at=NOW - timedelta(minutes=30))
    page = staff.get(page_url(c)).content.decode()
    assert "4.00</strong> spent so far of a budget of 3.00" in page
    assert 'data-testid="over-budget"' in page
    assert "Expected to finish around" in page
    assert "<svg" in page and "Judgments over time" in page


def test_a_campaign_without_judgments_says_so(staff):
    c = ab_campaign(2)
    page = staff.get(page_url(c)).content.decode()
    assert "no budget set" in page and "No judgments yet" in page and "<svg" not in page


def test_the_preview_walks_through_every_item_but_the_automatic_ones(staff):
    c = campaign("ab", status="draft", batch_size=2)
    specs = [ab_spec(i) for i in range(3)]
    specs.insert(1, replace(ab_spec(99), auto_payload={"choice": "tie"}))
    add_items(c, specs)
    previewable = list(
        Item.objects.filter(campaign=c, auto_payload__isnull=True)
        .order_by("position")
        .values_list("position", flat=True)
    )
    seen, position = [], previewable[0]
    while position is not None:
        page = staff.get(reverse("annotation:manage-campaign-preview", args=[c.slug, position]))
        html = page.content.decode()
        assert "Preview</strong> item" in html and c.get_absolute_url() in html
        seen.append(position)
        position = preview_nav(c, Item.objects.get(campaign=c, position=position)).next
    assert seen == previewable and len(seen) == 3
    nav = preview_nav(c, Item.objects.get(campaign=c, position=previewable[-1]))
    assert (nav.index, nav.count, nav.previous, nav.next) == (3, 3, previewable[1], None)


def test_the_budget_is_set_in_the_form_and_the_api(staff, ab_setup):  # noqa: F811
    staff.post(reverse("annotation:manage-campaign-create"), form_data(**ab_setup, budget="12.50"))
    assert Campaign.objects.get(slug="greeting-test").budget == Decimal("12.50")
    api = APIClient()
    api.force_authenticate(factories.user(staff=True))
    body = {**ab_setup, "task_kind": "ab", "title": "Second", "slug": "second", "budget": "-1"}
    response = api.post("/api/campaigns/", body, format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "budget"
    body["budget"] = "20"
    assert api.post("/api/campaigns/", body, format="json").json()["campaign"]["budget"] == "20.00"
