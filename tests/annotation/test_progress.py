"""Campaign progress figures, checked against judgments made by hand."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from annotation import progress
from annotation.items import add_items
from annotation.kinds.base import ItemSpec
from annotation.models import Assignment, Campaign, Item, Judgment, Worker
from tests.annotation.builders import ab_campaign, ab_spec, campaign

pytestmark = pytest.mark.django_db

NOW = timezone.now().replace(microsecond=0)


def judge(item: Item, worker: str, *, at, ms=None, server_seconds=None) -> Judgment:
    """A judgment of `item` by `worker`, submitted at `at`, taking `ms` (browser) or
    `server_seconds` (no browser measure)."""
    who, _ = Worker.objects.get_or_create(provider="local", external_id=worker)
    assignment, _ = Assignment.objects.get_or_create(
        campaign=item.campaign,
        batch=item.batch,
        worker=who,
        defaults={"status": Assignment.Status.SUBMITTED},
    )
    started = at - timedelta(seconds=server_seconds if server_seconds is not None else 1)
    judgment = Judgment.objects.create(
        assignment=assignment,
        item=item,
        worker=who,
        campaign=item.campaign,
        payload={"choice": "a", "left": "a"},
        started_at=started,
        client_duration_ms=ms,
    )
    # submitted_at is set on insert; the figures need it in the past.
    Judgment.objects.filter(pk=judgment.pk).update(submitted_at=at)
    return judgment


def shown(c: Campaign, role="task") -> list[Item]:
    return list(c.items.filter(role=role, batch__isnull=False).order_by("position"))


def test_composition_counts_items_and_prices_every_slot():
    c = campaign("ab", redundancy=3, batch_size=3, reward_per_batch=Decimal("1.25"))
    specs = [ab_spec(i) for i in range(5)] + [ab_spec(100, gold={"choice": "a"}, role="gold")]
    specs.append(ab_spec(200, role="training"))
    specs.append(ItemSpec(content={"context": ["x"]}, auto_payload={"choice": "tie"}))
    add_items(c, specs)
    figures = progress.composition(c)
    assert (figures.shown, figures.automatic, figures.training) == (5, 1, 1)
    assert figures.batches == 3 and figures.gold_copies == 3
    assert figures.slots == 9
    assert figures.cost == Decimal("11.25")


def test_items_are_done_with_redundancy_judgments():
    c = ab_campaign(4, batch_size=4, redundancy=2, gold=1)
    first, second, *_ = shown(c)
    for worker in ("w1", "w2"):
        judge(first, worker, at=NOW - timedelta(minutes=5), ms=4000)
    judge(second, "w1", at=NOW - timedelta(minutes=4), ms=4000)
    judge(shown(c, "gold")[0], "w1", at=NOW - timedelta(minutes=3), ms=4000)
    figures = progress.progress(c, now=NOW)
    assert (figures.items_done, figures.items_needed) == (1, 4)
    assert figures.percent_done == 25
    # 4 task items and 1 gold copy, twice each.
    assert (figures.judgments, figures.judgments_needed) == (4, 10)


def test_rates_per_hour_since_launch_and_over_the_last_day():
    c = ab_campaign(10, batch_size=10, redundancy=3)
    Campaign.objects.filter(pk=c.pk).update(launched_at=NOW - timedelta(hours=48))
    c.refresh_from_db()
    items = shown(c)
    # 12 judgments two days ago, 6 in the last day.
    for n in range(12):
        judge(items[n % 10], f"old{n // 10}", at=NOW - timedelta(hours=40), ms=1000)
    for n in range(6):
        judge(items[n], "new", at=NOW - timedelta(hours=2), ms=1000)
    figures = progress.progress(c, now=NOW)
    assert figures.judgments_last_24h == 6
    assert figures.per_hour_last_24h == pytest.approx(6 / 24)
    assert figures.per_hour_overall == pytest.approx(18 / 48)


def test_a_young_campaign_is_not_diluted_over_24_hours():
    c = ab_campaign(4, batch_size=4)
    Campaign.objects.filter(pk=c.pk).update(launched_at=NOW - timedelta(hours=2))
    c.refresh_from_db()
    for item in shown(c):
        judge(item, "w1", at=NOW - timedelta(minutes=30), ms=1000)
    figures = progress.progress(c, now=NOW)
    assert figures.per_hour_last_24h == pytest.approx(2.0)
    assert figures.per_hour_overall == pytest.approx(2.0)


def test_a_finished_campaign_is_rated_up_to_its_end():
    c = ab_campaign(2, batch_size=2)
    Campaign.objects.filter(pk=c.pk).update(
        launched_at=NOW - timedelta(hours=30), finished_at=NOW - timedelta(hours=26)
    )
    c.refresh_from_db()
    for item in shown(c):
        judge(item, "w1", at=NOW - timedelta(hours=28), ms=1000)
    figures = progress.progress(c, now=NOW)
    assert figures.per_hour_overall == pytest.approx(2 / 4)
    assert figures.judgments_last_24h == 0 and figures.per_hour_last_24h is None


def test_median_seconds_mixes_browser_and_server_times():
    c = ab_campaign(4, batch_size=4)
    a, b, d, e = shown(c)
    judge(a, "w1", at=NOW, ms=3000)
    judge(b, "w1", at=NOW, ms=9000)
    judge(d, "w1", at=NOW, server_seconds=5)  # no browser measure: page shown to stored
    assert progress.progress(c, now=NOW).median_seconds == pytest.approx(5.0, abs=0.01)
    judge(e, "w1", at=NOW, server_seconds=60)
    assert progress.progress(c, now=NOW).median_seconds == pytest.approx(7.0, abs=0.01)


def test_an_untouched_campaign_has_no_rates():
    figures = progress.progress(ab_campaign(3), now=NOW)
    assert (figures.judgments, figures.items_done, figures.items_needed) == (0, 0, 3)
    assert figures.per_hour_overall is None and figures.median_seconds is None


def test_item_shapes_name_each_shown_kind_of_item_once():
    c = ab_campaign(5, batch_size=5, gold=1)
    shapes = progress.item_shapes(c)
    assert [(s.role, s.count) for s in shapes] == [("task", 5), ("gold", 1)]
    for shape in shapes:
        example = c.items.get(position=shape.example_position)
        assert example.role == shape.role


def test_with_progress_annotates_every_campaign_in_one_query(django_assert_num_queries):
    small = ab_campaign(2, batch_size=2, redundancy=2)
    large = ab_campaign(6, batch_size=3, redundancy=3)
    judge(shown(small)[0], "w1", at=NOW, ms=1000)
    with django_assert_num_queries(1):
        rows = {c.pk: c for c in progress.with_progress(Campaign.objects.all())}
    assert (rows[small.pk].n_judgments, rows[small.pk].n_needed) == (1, 4)
    assert (rows[large.pk].n_judgments, rows[large.pk].n_needed) == (0, 18)
