"""Storing judgments: recorded once, assignments submitted when complete, campaigns finished
with their last slot."""

import pytest
from django.utils import timezone

from annotation import services
from annotation.allocation import next_assignment
from annotation.models import Assignment, Judgment, Worker
from annotation.services import record_judgment, submit_if_complete
from tests.annotation.builders import ab_campaign, batch_items

pytestmark = pytest.mark.django_db


def started(c, name="w1"):
    worker = Worker.objects.create(provider="local", external_id=f"link:{name}")
    return next_assignment(c, worker)


def test_record_judgment_stores_once_and_scores_gold():
    c = ab_campaign(1, batch_size=1, gold=1)
    assignment = started(c)
    task, gold = sorted(batch_items(assignment), key=lambda i: i.role != "task")
    now = timezone.now()
    judgment, created = record_judgment(
        assignment, task, {"choice": "a", "left": "a"}, started_at=now, client_duration_ms=900
    )
    again, created_again = record_judgment(
        assignment, task, {"choice": "b", "left": "a"}, started_at=now
    )
    assert (created, created_again) == (True, False) and again.pk == judgment.pk
    assert judgment.payload["choice"] == "a" and judgment.gold_correct is None
    assert (judgment.worker_id, judgment.campaign_id) == (assignment.worker_id, c.pk)
    wrong, _ = record_judgment(assignment, gold, {"choice": "b", "left": "a"}, started_at=now)
    assert (wrong.gold_correct, wrong.gold_mistakes) == (False, 1)


@pytest.mark.django_db(transaction=True)
def test_a_replayed_judgment_outside_a_transaction_returns_the_stored_one():
    # A web request runs in autocommit: the INSERT is not wrapped in a savepoint there.
    c = ab_campaign(1, batch_size=1)
    assignment = started(c)
    (item,) = batch_items(assignment)
    now = timezone.now()
    first, created = record_judgment(assignment, item, {"choice": "a", "left": "a"}, started_at=now)
    again, created_again = record_judgment(
        assignment, item, {"choice": "b", "left": "a"}, started_at=now
    )
    assert (created, created_again) == (True, False) and again.pk == first.pk
    assert Judgment.objects.get(assignment=assignment, item=item).payload["choice"] == "a"


def test_submit_only_when_every_item_is_judged():
    c = ab_campaign(2, batch_size=2)
    assignment = started(c)
    first, second = batch_items(assignment)
    payload = {"choice": "tie", "left": "a"}
    record_judgment(assignment, first, payload, started_at=timezone.now())
    assert submit_if_complete(assignment, 2) is False
    assert assignment.status == Assignment.Status.STARTED
    record_judgment(assignment, second, payload, started_at=timezone.now())
    assert submit_if_complete(assignment, 2) is True
    assert assignment.status == Assignment.Status.SUBMITTED and assignment.completion_code
    code = assignment.completion_code
    # A replayed last submit keeps the code already given.
    assert submit_if_complete(assignment, 2) is True and assignment.completion_code == code
    assert Judgment.objects.filter(assignment=assignment).count() == 2


def _judge_whole_batch(assignment):
    for item in batch_items(assignment):
        record_judgment(assignment, item, {"choice": "a", "left": "a"}, started_at=timezone.now())
    return submit_if_complete(assignment, len(batch_items(assignment)))


def test_the_last_submitted_batch_finishes_the_campaign(django_capture_on_commit_callbacks):
    c = ab_campaign(4, batch_size=2, redundancy=2)
    slots = []
    for n in range(4):
        slots.append(started(c, f"finisher-{n}"))
    for assignment in slots[:3]:
        with django_capture_on_commit_callbacks(execute=True):
            assert _judge_whole_batch(assignment) is True
    c.refresh_from_db()
    assert c.status == c.Status.LIVE and c.finished_at is None
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert _judge_whole_batch(slots[3]) is True
    assert len(callbacks) == 1
    c.refresh_from_db()
    assert c.status == c.Status.FINISHED and c.finished_at is not None
    assert not c.assignments.exclude(status=Assignment.Status.SUBMITTED).exists()


def _queued_finishes(monkeypatch) -> list:
    queued = []
    monkeypatch.setattr(
        "evalhub.queueing.enqueue", lambda task, *args: queued.append((task.name, args)) or True
    )
    return queued


def test_a_finished_batch_with_slots_left_queues_no_finishing_task(
    monkeypatch, django_capture_on_commit_callbacks
):
    queued = _queued_finishes(monkeypatch)
    c = ab_campaign(4, batch_size=2, redundancy=2)
    first = started(c, "early")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert _judge_whole_batch(first) is True
    assert len(callbacks) == 1 and queued == []
    c.refresh_from_db()
    assert c.status == c.Status.LIVE
    assert c.assignments.filter(status=Assignment.Status.OPEN).count() == 3


def test_the_last_finished_batch_queues_the_finishing_task(
    monkeypatch, django_capture_on_commit_callbacks
):
    queued = _queued_finishes(monkeypatch)
    c = ab_campaign(2, batch_size=2, redundancy=1)
    with django_capture_on_commit_callbacks(execute=True):
        assert _judge_whole_batch(started(c, "last")) is True
    assert queued == [("annotation.tasks.finish_campaign_if_complete", (c.pk,))]
    assert not c.assignments.exclude(status=Assignment.Status.SUBMITTED).exists()


def test_two_last_batches_finished_at_once_queue_the_task_after_both_commits(
    monkeypatch, django_capture_on_commit_callbacks
):
    # Each check runs after its own commit: the later one sees the other batch submitted
    # too, so the campaign is finished whichever request commits last.
    queued = _queued_finishes(monkeypatch)
    c = ab_campaign(4, batch_size=2, redundancy=1)
    one, two = started(c, "one"), started(c, "two")
    with django_capture_on_commit_callbacks() as first_commit:
        assert _judge_whole_batch(one) is True
    with django_capture_on_commit_callbacks() as second_commit:
        assert _judge_whole_batch(two) is True
    for callback in first_commit + second_commit:
        callback()
    assert queued and set(queued) == {("annotation.tasks.finish_campaign_if_complete", (c.pk,))}
    assert c.assignments.filter(status=Assignment.Status.SUBMITTED).count() == 2


def test_a_draft_campaign_is_not_finished_by_a_stray_submission():
    from annotation.campaigns import finish_if_complete

    c = ab_campaign(2, batch_size=2, status="draft")
    c.assignments.update(status=Assignment.Status.SUBMITTED)
    assert finish_if_complete(c) is False
    c.refresh_from_db()
    assert c.status == c.Status.DRAFT


def test_batch_items_are_in_batch_order_flagged_judged_by_this_assignment_only():
    c = ab_campaign(3, batch_size=3, redundancy=2)
    mine, theirs = started(c, "ann"), started(c, "bob")
    assert mine.batch_id == theirs.batch_id
    first, second, third = services.batch_items(mine)
    now = timezone.now()
    record_judgment(mine, second.item, {"choice": "a", "left": "a"}, started_at=now)
    record_judgment(theirs, first.item, {"choice": "a", "left": "a"}, started_at=now)
    items = services.batch_items(mine)
    assert [i.pk for i in items] == [first.pk, second.pk, third.pk]
    assert [i.item.order_in_batch for i in items] == [0, 1, 2]
    assert [i.judged for i in items] == [False, True, False]
    assert [i.judged for i in services.batch_items(theirs)] == [True, False, False]
