"""Building a campaign (items, batches, gold copies, open slots) and storing judgments."""

import random
from collections import Counter

import pytest
from django.test import override_settings
from django.utils import timezone

from annotation import services
from annotation.allocation import next_assignment
from annotation.kinds.base import ItemSpec
from annotation.models import Assignment, Batch, Item, Judgment, Worker
from annotation.services import TooMuchWork, add_items, record_judgment, submit_if_complete
from tests.annotation.builders import ab_campaign, ab_spec, batch_items, campaign

pytestmark = pytest.mark.django_db

GOLD = {"choice": "a", "explanation": "Response a answers the question."}


def gold_spec(n, group_key=""):
    return ab_spec(1000 + n, group_key=group_key, gold=GOLD, role="gold")


def test_items_are_packed_into_batches_with_open_slots():
    c = campaign(batch_size=3, redundancy=2)
    counts = add_items(c, [ab_spec(i) for i in range(7)])
    assert counts == {"batches": 3, "shown": 7, "automatic": 0, "gold_copies": 0, "training": 0}
    sizes = Counter(Item.objects.filter(campaign=c).values_list("batch__position", flat=True))
    assert sizes == {0: 3, 1: 3, 2: 1}
    for batch in Batch.objects.filter(campaign=c):
        slots = batch.assignments.all()
        assert [a.status for a in slots] == [Assignment.Status.OPEN] * 2
        assert all(a.worker_id is None for a in slots)
        assert [i.order_in_batch for i in batch.items.order_by("order_in_batch")] == list(
            range(batch.items.count())
        )
    positions = sorted(Item.objects.filter(campaign=c).values_list("position", flat=True))
    assert positions == list(range(7))


def test_automatic_and_training_items_are_stored_without_a_batch():
    c = campaign(batch_size=5)
    auto = ItemSpec(content={"context": ["same"]}, auto_payload={"choice": "tie"})
    training = ab_spec(50, gold=GOLD, role="training")
    counts = add_items(c, [ab_spec(0), auto, training, ab_spec(1)])
    assert (counts["shown"], counts["automatic"], counts["training"]) == (2, 1, 1)
    unbatched = Item.objects.filter(campaign=c, batch__isnull=True)
    assert sorted(unbatched.values_list("role", flat=True)) == ["task", "training"]
    assert unbatched.get(role="task").auto_payload == {"choice": "tie"}
    assert Item.objects.filter(campaign=c, batch__isnull=False).count() == 2


def test_gold_copies_are_mixed_into_every_batch_round_robin():
    c = campaign(batch_size=3)
    counts = add_items(c, [ab_spec(i) for i in range(6)] + [gold_spec(0), gold_spec(1)])
    assert counts["gold_copies"] == 3
    by_batch = {
        b.position: list(b.items.order_by("order_in_batch"))
        for b in Batch.objects.filter(campaign=c)
    }
    golds = {pos: [i for i in items if i.role == "gold"] for pos, items in by_batch.items()}
    assert {pos: [g.group_key for g in gs] for pos, gs in golds.items()} == {
        0: ["gold:0"],
        1: ["gold:1"],
        2: ["gold:0"],
    }
    for items in by_batch.values():
        # batch_size counts the check: a batch's length does not tell that it holds one.
        assert len(items) == 3
        assert [i.gold for i in items if i.role == "gold"] == [GOLD]


def test_a_gold_spec_keeps_its_own_group_key():
    c = campaign(batch_size=3)
    add_items(c, [ab_spec(0), ab_spec(1), gold_spec(0, group_key="conv-7")])
    assert Item.objects.get(campaign=c, role="gold").group_key == "conv-7"


def test_never_two_copies_of_one_gold_item_in_a_batch():
    # More gold asked per batch than gold specs exist: each batch gets each spec once.
    c = campaign(batch_size=5)
    counts = add_items(c, [ab_spec(i) for i in range(8)] + [gold_spec(0)], gold_per_batch=2)
    for batch in Batch.objects.filter(campaign=c):
        keys = list(batch.items.filter(role="gold").values_list("group_key", flat=True))
        assert keys == ["gold:0"]
    assert counts["gold_copies"] == 2 == Item.objects.filter(campaign=c, role="gold").count()


def test_two_gold_per_batch_are_two_different_checks():
    c = campaign(batch_size=4)
    add_items(
        c, [ab_spec(i) for i in range(8)] + [gold_spec(n) for n in range(3)], gold_per_batch=2
    )
    for batch in Batch.objects.filter(campaign=c):
        keys = list(batch.items.filter(role="gold").values_list("group_key", flat=True))
        assert len(keys) == 2 and len(set(keys)) == 2


def test_a_custom_packer_decides_the_batches():
    c = campaign(batch_size=2)

    def reverse_pairs(specs, batch_size):
        indices = list(range(len(specs)))[::-1]
        return [indices[i : i + batch_size] for i in range(0, len(indices), batch_size)]

    add_items(c, [ab_spec(i) for i in range(4)], pack=reverse_pairs)
    first = Batch.objects.get(campaign=c, position=0).items.order_by("order_in_batch")
    assert [i.content["meta"]["prompt"] for i in first] == ["3", "2"]


def test_a_campaign_is_built_once():
    c = ab_campaign(2)
    with pytest.raises(ValueError, match="already has batches"):
        add_items(c, [ab_spec(9)])
    assert Item.objects.filter(campaign=c).count() == 2


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


def test_checks_sit_at_random_positions_and_batch_length_does_not_tell():
    # Issue 9: the check used to be item 2 of every batch, and gold batches one item longer.
    c = campaign(batch_size=4)
    specs = [ab_spec(i) for i in range(60)] + [gold_spec(0), gold_spec(1)]
    add_items(c, specs, rng=random.Random(7))
    positions = Counter()
    for batch in Batch.objects.filter(campaign=c):
        items = list(batch.items.order_by("order_in_batch"))
        assert len(items) == c.batch_size
        assert sum(i.role == "gold" for i in items) == 1
        positions[next(n for n, i in enumerate(items) if i.role == "gold")] += 1
    assert set(positions) == {0, 1, 2, 3}


def test_as_many_checks_as_the_batch_holds_are_refused():
    c = campaign(batch_size=2)
    with pytest.raises(TooMuchWork, match=r"gold_per_batch \(2\) must be less than batch_size"):
        add_items(c, [ab_spec(0), gold_spec(0), gold_spec(1)], gold_per_batch=2)
    assert not Item.objects.filter(campaign=c).exists()


@override_settings(EVALHUB_MAX_ASSIGNMENTS_PER_CAMPAIGN=8)
def test_a_campaign_opening_more_assignments_than_allowed_is_refused_before_writing():
    c = campaign(batch_size=2, redundancy=3)
    with pytest.raises(TooMuchWork, match="would open 9 assignments .* at most 8"):
        add_items(c, [ab_spec(i) for i in range(6)])
    assert not Batch.objects.filter(campaign=c).exists()
    assert not Item.objects.filter(campaign=c).exists()
    assert not Assignment.objects.filter(campaign=c).exists()


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
