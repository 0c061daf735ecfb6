"""The campaign page's cost-and-time panel, checked against figures worked out by hand."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.costs import campaign_costs
from annotation.models import Assignment, CrowdAction, Item, Judgment, Worker
from tests import factories
from tests.annotation.builders import ab_campaign

pytestmark = pytest.mark.django_db

NOW = timezone.now().replace(microsecond=0)


def judge(item: Item, worker: str, seconds: float) -> Judgment:
    who, _ = Worker.objects.get_or_create(provider="local", external_id=worker)
    assignment, _ = Assignment.objects.get_or_create(
        campaign=item.campaign,
        batch=item.batch,
        worker=who,
        defaults={"status": Assignment.Status.SUBMITTED},
    )
    return Judgment.objects.create(
        assignment=assignment,
        item=item,
        worker=who,
        campaign=item.campaign,
        payload={"choice": "a", "left": "a"},
        started_at=NOW - timedelta(seconds=5),
        client_duration_ms=int(seconds * 1000),
    )


@pytest.fixture
def judged():
    """Two items in one batch, 3 judgments each wanted (target 6): w1 judges item 1 in 10 s
    and item 2 in 60 s, w2 judges item 1 in 20 s; both batches are paid 1.50; a done bonus
    of 0.60 counts, a failed one of 5.00 does not, nor a rejected batch."""
    c = ab_campaign(2, batch_size=10, redundancy=3, reward_per_batch=Decimal("1.50"))
    first, second = c.items.order_by("position")
    judge(first, "w1", 10)
    judge(second, "w1", 60)
    judge(first, "w2", 20)
    rejected = Worker.objects.create(provider="local", external_id="w3")
    Assignment.objects.create(
        campaign=c, batch=first.batch, worker=rejected, status=Assignment.Status.REJECTED
    )
    for key, amount, state in (("b1", "0.60", "done"), ("b2", "5.00", "failed")):
        CrowdAction.objects.create(
            campaign=c, provider="local", action="bonus", amount=Decimal(amount),
            idempotency_key=key, state=state,
        )  # fmt: skip
    return c


def test_times_per_judgment_and_per_conversation(judged):
    s = campaign_costs(judged).summary
    assert (s.median_seconds_per_judgment, s.mean_seconds_per_judgment) == (20, 30)
    # Item 1 took 10 + 20 = 30 s in all, item 2 took 60 s.
    assert (s.median_seconds_per_conversation, s.mean_seconds_per_conversation) == (45, 45)
    assert s.judgments_per_hour == 120  # 3600 / 30


def test_paid_rewards_and_done_bonuses_give_the_cost_per_judgment(judged):
    costs = campaign_costs(judged)
    assert (costs.rewards, costs.bonuses) == (Decimal("3.00"), Decimal("0.60"))
    assert costs.summary.amount_paid == pytest.approx(3.60)
    assert costs.summary.cost_per_judgment == pytest.approx(1.20)


def test_the_projection_prices_the_missing_judgments(judged):
    p = campaign_costs(judged).projection
    assert p.additional_judgments == 3
    assert p.additional_cost == pytest.approx(3.60)
    assert p.total_cost == pytest.approx(7.20)
    assert p.additional_work_hours == pytest.approx(90 / 3600)


def test_an_interval_width_is_priced_at_the_observed_cost(judged):
    # Wilson at p = 0.5: z / (2 sqrt(n + z^2)) <= 0.10  <=>  n >= (z / 0.2)^2 - z^2 = 92.2.
    width = campaign_costs(judged).widths[0]
    assert (width.half_width, width.judgments) == (0.10, 93)
    assert width.cost == pytest.approx(93 * 1.20)


def test_automatic_judgments_take_no_time():
    c = ab_campaign(1, batch_size=10, reward_per_batch=Decimal("1"))
    item = c.items.get()
    judge(item, "w1", 30)
    Item.objects.filter(pk=item.pk).update(auto_payload={"choice": "tie"})
    assert campaign_costs(c) is None


def test_the_campaign_page_shows_the_panel(client, judged):
    client.force_login(factories.user("boss", staff=True))
    page = client.get(reverse("annotation:manage-campaign", args=[judged.slug]))
    html = page.content.decode()
    assert page.status_code == 200
    assert 'data-testid="cost-panel"' in html
    assert "median 20.0 s · mean 30.0 s (3 judgments)" in html
    assert "120.0 for one worker" in html
    assert "3.60: 3.00 in rewards" in html and "0.60 in bonuses" in html
    assert "3 more: 3.60 more (7.20 in all)" in html
    assert Judgment.objects.filter(campaign=judged).count() == 3


def test_a_campaign_without_judgments_says_so(client):
    c = ab_campaign(1)
    client.force_login(factories.user("boss", staff=True))
    page = client.get(reverse("annotation:manage-campaign", args=[c.slug]))
    assert 'data-testid="no-costs"' in page.content.decode()
    assert not Judgment.objects.filter(campaign=c).exists()
