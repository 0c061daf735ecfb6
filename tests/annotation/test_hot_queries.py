"""The crowdworker pages' two queries with their SQL written once (annotation/hot_queries.py)
load exactly what the ORM loads."""

import uuid

import pytest
from django.db.models import Exists, OuterRef
from django.utils import timezone

from annotation import hot_queries
from annotation.allocation import next_assignment
from annotation.models import Assignment, Item, Judgment, Worker
from annotation.services import record_judgment
from tests.annotation.builders import ab_campaign

pytestmark = pytest.mark.django_db


def values(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def started(c, name):
    worker = Worker.objects.create(provider="local", external_id=f"link:{name}")
    return next_assignment(c, worker)


def test_the_assignment_comes_with_the_campaign_and_worker_the_orm_loads(
    django_assert_num_queries,
):
    c = ab_campaign(4, batch_size=2, task_config={"note": "kept"}, instructions="Read.")
    mine = started(c, "ann")
    expected = Assignment.objects.select_related("campaign", "worker").get(pk=mine.pk)
    with django_assert_num_queries(1):
        loaded = hot_queries.assignment_with_campaign_and_worker(mine.public_id)
        assert values(loaded) == values(expected)
        assert values(loaded.campaign) == values(expected.campaign)
        assert values(loaded.worker) == values(expected.worker)
    assert loaded.campaign.task_config == {"note": "kept"}
    assert not loaded._state.adding and loaded._state.db == "default"


def test_an_unknown_assignment_is_none_and_an_open_one_has_no_worker():
    c = ab_campaign(2, batch_size=2)
    assert hot_queries.assignment_with_campaign_and_worker(uuid.uuid4()) is None
    open_slot = Assignment.objects.filter(campaign=c, worker=None).first()
    loaded = hot_queries.assignment_with_campaign_and_worker(open_slot.public_id)
    assert loaded.pk == open_slot.pk and loaded.worker is None


def test_batch_items_are_the_orm_items_with_this_assignment_judged_flag():
    c = ab_campaign(3, batch_size=3, redundancy=2)
    mine, theirs = started(c, "ann"), started(c, "bob")
    items = list(Item.objects.filter(batch_id=mine.batch_id).order_by("order_in_batch"))
    now = timezone.now()
    record_judgment(mine, items[2], {"choice": "a", "left": "a"}, started_at=now)
    record_judgment(theirs, items[0], {"choice": "a", "left": "a"}, started_at=now)
    mine_judged = Judgment.objects.filter(assignment_id=mine.pk, item_id=OuterRef("pk"))
    expected = list(
        Item.objects.filter(batch_id=mine.batch_id)
        .annotate(judged=Exists(mine_judged))
        .order_by("order_in_batch")
    )
    loaded = hot_queries.batch_items(mine)
    assert [values(entry.item) for entry in loaded] == [values(i) for i in expected]
    assert [entry.pk for entry in loaded] == [i.pk for i in expected]
    assert [e.judged for e in loaded] == [i.judged for i in expected] == [False, False, True]
    assert all(type(entry.judged) is bool for entry in loaded)


def test_a_batch_entry_makes_its_item_once_with_the_judged_flag():
    c = ab_campaign(2, batch_size=2)
    mine = started(c, "ann")
    first = Item.objects.filter(batch_id=mine.batch_id).order_by("order_in_batch").first()
    record_judgment(mine, first, {"choice": "a", "left": "a"}, started_at=timezone.now())
    entry = hot_queries.batch_items(mine)[0]
    assert entry.item is entry.item
    assert entry.item.judged is True and entry.item.pk == first.pk


def orm_started_and_held(c, worker):
    holding = Assignment.objects.filter(campaign=c, worker=worker, status__in=Assignment.HOLDING)
    return holding.filter(status=Assignment.Status.STARTED).first(), holding.count()


def test_the_started_assignment_and_held_count_are_the_orms(django_assert_num_queries):
    c = ab_campaign(8, batch_size=2, max_batches_per_worker=4)
    worker = Worker.objects.create(provider="local", external_id="link:ann")
    for _ in range(2):
        done = next_assignment(c, worker)
        Assignment.objects.filter(pk=done.pk).update(status=Assignment.Status.SUBMITTED)
    next_assignment(c, worker)
    next_assignment(c, Worker.objects.create(provider="local", external_id="link:bob"))
    expected, expected_held = orm_started_and_held(c, worker)
    with django_assert_num_queries(1):
        loaded, held = hot_queries.started_and_held(c, worker)
    assert values(loaded) == values(expected)
    assert held == expected_held == 3
    assert loaded.campaign is c


def test_without_a_started_assignment_only_the_held_count_comes_back():
    c = ab_campaign(4, batch_size=2)
    worker = Worker.objects.create(provider="local", external_id="link:ann")
    assert hot_queries.started_and_held(c, worker) == (None, 0)
    done = next_assignment(c, worker)
    Assignment.objects.filter(pk=done.pk).update(status=Assignment.Status.APPROVED)
    assert hot_queries.started_and_held(c, worker) == (None, 1)
    assert orm_started_and_held(c, worker) == (None, 1)


@pytest.mark.postgres
def test_on_postgresql_the_statements_are_prepared_once_per_connection():
    from django.db import connection

    c = ab_campaign(2, batch_size=2)
    mine = started(c, "ann")
    for _ in range(3):
        hot_queries.assignment_with_campaign_and_worker(mine.public_id)
        hot_queries.batch_items(mine)
        hot_queries.started_and_held(c, mine.worker)
    for item in Item.objects.filter(batch_id=mine.batch_id):
        hot_queries.insert_judgment(_judgment(mine, item))
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [statement for (statement,) in cursor.fetchall()]
    assert sum("annotation_assignment" in s and "annotation_campaign" in s for s in prepared) == 1
    assert sum("annotation_item" in s and "EXISTS" in s for s in prepared) == 1
    assert sum("OVER ()" in s for s in prepared) == 1
    assert sum(s.startswith('INSERT INTO "annotation_judgment"') for s in prepared) == 1


def _judgment(assignment, item, **extra) -> Judgment:
    return Judgment(
        assignment=assignment,
        item=item,
        worker_id=assignment.worker_id,
        campaign_id=assignment.campaign_id,
        payload={"choice": "a", "left": "a", "note": "é ✓"},
        started_at=timezone.now(),
        client_duration_ms=900,
        **extra,
    )


def test_the_judgment_insert_stores_the_row_the_orm_stores(django_assert_num_queries):
    c = ab_campaign(2, batch_size=2, redundancy=2)
    mine, theirs = started(c, "ann"), started(c, "bob")
    item = Item.objects.filter(batch_id=mine.batch_id).first()
    with django_assert_num_queries(1):
        inserted = hot_queries.insert_judgment(_judgment(mine, item, gold_correct=True))
    created = Judgment.objects.create(
        **{
            f.attname: getattr(_judgment(theirs, item, gold_correct=True), f.attname)
            for f in Judgment._meta.concrete_fields
            if f is not Judgment._meta.pk
        }
    )
    stored, expected = Judgment.objects.get(pk=inserted.pk), Judgment.objects.get(pk=created.pk)
    different = {"id", "assignment_id", "worker_id", "started_at", "submitted_at"}
    same = {k: v for k, v in values(stored).items() if k not in different}
    assert same == {k: v for k, v in values(expected).items() if k not in different}
    assert stored.payload["note"] == "é ✓" and stored.submitted_at is not None
    assert values(stored) == values(inserted)
    assert not inserted._state.adding and inserted._state.db == "default"


def test_a_second_judgment_insert_of_the_same_item_is_refused():
    from django.db import IntegrityError, transaction

    c = ab_campaign(2, batch_size=2)
    mine = started(c, "ann")
    item = Item.objects.filter(batch_id=mine.batch_id).first()
    hot_queries.insert_judgment(_judgment(mine, item))
    with pytest.raises(IntegrityError), transaction.atomic():
        hot_queries.insert_judgment(_judgment(mine, item))
    assert Judgment.objects.filter(assignment=mine, item=item).count() == 1


def test_no_model_signal_listens_to_judgments():
    # insert_judgment sends none: a receiver added for Judgment would never hear of a submit.
    from django.db.models.signals import post_save, pre_save

    assert not pre_save.has_listeners(Judgment) and not post_save.has_listeners(Judgment)
