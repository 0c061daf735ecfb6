"""Handing out batches: redundancy from distinct workers, groups kept apart, caps, resuming,
expiry, refusals, gold, and query counts that do not grow with the campaign."""

from collections import defaultdict
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation.allocation import NoWork, next_assignment
from annotation.items import add_items
from annotation.kinds.base import ItemSpec
from annotation.models import Assignment, Item, Judgment, Worker
from annotation.services import record_judgment, submit_if_complete
from tests.annotation.builders import ab_campaign, ab_spec, batch_items, campaign

pytestmark = pytest.mark.django_db

ANSWER = {"choice": "a", "left": "a"}


def worker(name: str) -> Worker:
    return Worker.objects.create(provider="local", external_id=f"link:{name}")


def judge_all(assignment: Assignment) -> None:
    items = batch_items(assignment)
    for item in items:
        record_judgment(assignment, item, ANSWER, started_at=timezone.now())
    assert submit_if_complete(assignment, len(items))


def drain(c, workers) -> dict[int, str]:
    """Each worker in turn works until refused; returns the last refusal per worker."""
    refusals = {}
    for w in workers:
        while True:
            try:
                assignment = next_assignment(c, w)
            except NoWork as no_work:
                refusals[w.pk] = no_work.reason
                break
            judge_all(assignment)
    return refusals


def judged_items_by_worker(c) -> dict[int, list[Item]]:
    rows = defaultdict(list)
    for j in Judgment.objects.filter(campaign=c).select_related("item"):
        rows[j.worker_id].append(j.item)
    return rows


def test_draining_gives_every_item_redundancy_judgments_from_distinct_workers():
    c = ab_campaign(30, groups=10, gold=2, batch_size=4, redundancy=3, max_batches_per_worker=2)
    workers = [worker(f"w{n}") for n in range(40)]
    drain(c, workers)
    assert not Assignment.objects.filter(campaign=c, status=Assignment.Status.OPEN).exists()
    shown = Item.objects.filter(campaign=c, batch__isnull=False)
    assert shown.count() == 30 + c.batches.count()
    for item in shown:
        judges = list(Judgment.objects.filter(item=item).values_list("worker_id", flat=True))
        assert len(judges) == 3 and len(set(judges)) == 3, item
    for items in judged_items_by_worker(c).values():
        assert len({i.pk for i in items}) == len(items), "a worker judged an item twice"
        keys = [i.group_key for i in items if i.group_key]
        assert len(keys) == len(set(keys)), "a worker met one group twice"
    held = Assignment.objects.filter(campaign=c, worker__isnull=False)
    per_worker = defaultdict(int)
    for a in held:
        per_worker[a.worker_id] += 1
    assert max(per_worker.values()) == 2


def test_a_group_never_reaches_one_worker_twice_across_batches():
    # The packer puts one item of g0 and one of g1 into each of the two batches.
    c = campaign(batch_size=2, redundancy=1, max_batches_per_worker=5)
    add_items(c, [ab_spec(i, f"g{i % 2}") for i in range(4)])
    w = worker("alone")
    judge_all(next_assignment(c, w))
    with pytest.raises(NoWork, match="no more work for you"):
        next_assignment(c, w)
    # The other batch is still open, for someone else.
    other = next_assignment(c, worker("other"))
    assert other.batch.position == 1


def test_the_batch_cap_is_respected_and_said():
    c = ab_campaign(6, batch_size=1, redundancy=1, max_batches_per_worker=2)
    w = worker("busy")
    judge_all(next_assignment(c, w))
    judge_all(next_assignment(c, w))
    with pytest.raises(NoWork, match=r"most batches one person may do here \(2\)"):
        next_assignment(c, w)
    assert next_assignment(c, worker("fresh")).batch.position == 2


def test_a_started_assignment_is_resumed_not_doubled():
    c = ab_campaign(4, batch_size=2)
    w = worker("w")
    first = next_assignment(c, w)
    record_judgment(first, batch_items(first)[0], ANSWER, started_at=timezone.now())
    again = next_assignment(c, w)
    assert again.pk == first.pk
    assert Assignment.objects.filter(worker=w).count() == 1


def test_a_started_assignment_is_resumed_after_finished_ones():
    c = ab_campaign(6, batch_size=2, max_batches_per_worker=3)
    w = worker("w")
    judge_all(next_assignment(c, w))
    second = next_assignment(c, w)
    again = next_assignment(c, w)
    assert again.pk == second.pk and again.status == Assignment.Status.STARTED
    assert Assignment.objects.filter(worker=w).count() == 2


def test_the_cap_counts_finished_batches_and_the_started_one():
    c = ab_campaign(6, batch_size=2, max_batches_per_worker=2)
    w = worker("w")
    judge_all(next_assignment(c, w))
    judge_all(next_assignment(c, w))
    with pytest.raises(NoWork, match=r"most batches one person may do here \(2\)"):
        next_assignment(c, w)
    assert Assignment.objects.filter(worker=w, status=Assignment.Status.STARTED).count() == 0


def test_a_claimed_assignment_is_returned_as_stored():
    c = ab_campaign(4, batch_size=2, time_limit_minutes=30)
    w = worker("w")
    now = timezone.now()
    claimed = next_assignment(c, w, now=now)
    stored = Assignment.objects.get(pk=claimed.pk)
    fields = [f.attname for f in Assignment._meta.concrete_fields]
    assert [getattr(claimed, f) for f in fields] == [getattr(stored, f) for f in fields]
    assert claimed.status == Assignment.Status.STARTED and claimed.worker_id == w.pk
    assert claimed.expires_at == now + timedelta(minutes=30)
    assert claimed.campaign is c


def test_a_worker_gets_at_most_one_slot_of_a_batch():
    c = ab_campaign(2, batch_size=2, redundancy=3)
    w = worker("w")
    judge_all(next_assignment(c, w))
    with pytest.raises(NoWork):
        next_assignment(c, w)
    assert Assignment.objects.filter(worker=w).count() == 1
    assert Assignment.objects.filter(campaign=c, status=Assignment.Status.OPEN).count() == 2


def test_an_expired_assignment_reopens_its_slot_for_someone_else():
    c = ab_campaign(2, batch_size=2, redundancy=1, time_limit_minutes=30)
    now = timezone.now()
    slow = worker("slow")
    lapsed = next_assignment(c, slow, now=now)
    record_judgment(lapsed, batch_items(lapsed)[0], ANSWER, started_at=now)
    with pytest.raises(NoWork):
        next_assignment(c, worker("early"), now=now + timedelta(minutes=29))
    later = now + timedelta(minutes=31)
    taken = next_assignment(c, worker("quick"), now=later)
    lapsed.refresh_from_db()
    assert lapsed.status == Assignment.Status.EXPIRED
    assert taken.batch_id == lapsed.batch_id and taken.pk != lapsed.pk
    assert taken.expires_at == later + timedelta(minutes=30)
    # The lapsed worker's late answers cannot close the expired assignment.
    assert submit_if_complete(lapsed, 2) is False
    assert lapsed.status == Assignment.Status.EXPIRED
    judge_all(taken)
    assert Judgment.objects.filter(assignment=taken).count() == 2


def test_expiry_frees_the_worker_cap_and_keeps_the_record():
    c = ab_campaign(4, batch_size=2, redundancy=1, max_batches_per_worker=1)
    now = timezone.now()
    w = worker("w")
    first = next_assignment(c, w, now=now)
    second = next_assignment(c, w, now=now + timedelta(minutes=c.time_limit_minutes + 1))
    # The batch seen before is not handed back: its items were already shown to them.
    assert second.batch_id != first.batch_id
    statuses = sorted(Assignment.objects.filter(worker=w).values_list("status", flat=True))
    assert statuses == ["expired", "started"]
    assert Assignment.objects.filter(batch=first.batch, status="open").count() == 1


def test_blocked_workers_get_no_work():
    c = ab_campaign(2)
    w = worker("bad")
    w.blocked = True
    with pytest.raises(NoWork, match="cannot take new work"):
        next_assignment(c, w)
    assert not Assignment.objects.filter(worker=w).exists()


@pytest.mark.parametrize("status", ["draft", "paused", "finished"])
def test_campaigns_that_are_not_live_give_no_work(status):
    c = ab_campaign(2, status=status)
    with pytest.raises(NoWork, match="not accepting work"):
        next_assignment(c, worker("w"))
    assert not Assignment.objects.filter(worker__isnull=False).exists()


def test_a_worker_meets_a_gold_check_again_only_when_every_batch_left_repeats_one():
    # Two checks alternating: the worker gets a batch with the check not yet answered
    # first, and repeats one only for the third batch its cap allows.
    c = ab_campaign(6, gold=2, batch_size=2, redundancy=1, max_batches_per_worker=3)
    w = worker("w")
    golds = []
    for _ in range(3):
        assignment = next_assignment(c, w)
        judge_all(assignment)
        golds += [i.group_key for i in batch_items(assignment) if i.role == "gold"]
    assert golds[:2] in (["gold:0", "gold:1"], ["gold:1", "gold:0"])
    assert len(golds) == 3


def test_automatic_items_are_never_handed_out():
    c = campaign(batch_size=5, redundancy=1)
    auto = ItemSpec(content={"context": ["x"]}, auto_payload={"choice": "tie"})
    add_items(c, [ab_spec(0), auto, ab_spec(1)])
    drain(c, [worker("w")])
    judged = set(Judgment.objects.filter(campaign=c).values_list("item__auto_payload", flat=True))
    assert judged == {None}
    assert Judgment.objects.filter(campaign=c).count() == 2


# Query counts. Items are kept tiny so that the large campaign builds in a few seconds.


def small_ab_specs(n: int) -> list[ItemSpec]:
    content = {"context": ["c"], "left": "l", "right": "r", "left_is": "a"}
    return [ItemSpec(content=content, group_key=f"g{i // 3}") for i in range(n)]


def queries_for(n_items: int) -> dict[str, int]:
    """Queries of allocation and the worker pages, for a worker with some history, in a
    campaign where someone's assignment is overdue (so expiry runs too)."""
    c = campaign(batch_size=10, redundancy=3, max_batches_per_worker=3)
    add_items(c, small_ab_specs(n_items))
    client = Client()
    client.get(reverse("annotation:start", args=[c.slug]) + f"?worker=me-{n_items}")
    me = Worker.objects.get(external_id=f"link:me-{n_items}")
    judge_all(Assignment.objects.get(worker=me))
    overdue = next_assignment(c, worker(f"late-{n_items}"), now=timezone.now() - timedelta(days=1))
    counts = {}
    with CaptureQueriesContext(connection) as allocation:
        assignment = next_assignment(c, me)
    counts["next_assignment"] = len(allocation)
    overdue.refresh_from_db()
    assert overdue.status == Assignment.Status.EXPIRED
    with CaptureQueriesContext(connection) as page:
        assert client.get(assignment.get_absolute_url()).status_code == 200
    counts["item page"] = len(page)
    item = batch_items(assignment)[0]
    url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
    with CaptureQueriesContext(connection) as post:
        assert client.post(url, {"choice": "left"}).status_code == 302
    counts["submit item"] = len(post)
    assert Judgment.objects.filter(assignment=assignment).count() == 1
    return counts


def test_allocation_and_worker_pages_use_the_same_queries_for_1k_and_50k_items():
    small = queries_for(1_000)
    large = queries_for(50_000)
    assert small == large
    # Today 11 (with one expiry), 5 and 11, savepoints included; a little room for change.
    assert small["next_assignment"] <= 13
    assert small["item page"] <= 7
    assert small["submit item"] <= 13


# --- The budget (#24): no new batch that could take the campaign over it ---------------------


def budgeted(budget: str):
    from decimal import Decimal

    return ab_campaign(
        4, batch_size=1, redundancy=1, reward_per_batch=Decimal("1.00"), budget=Decimal(budget)
    )


def test_no_new_batch_is_handed_out_once_the_next_could_exceed_the_budget():
    c = budgeted("2.00")
    judge_all(next_assignment(c, worker("w1")))
    w2 = worker("w2")
    second = next_assignment(c, w2)

    with pytest.raises(NoWork, match="spent its budget"):
        next_assignment(c, worker("w3"))

    assert Assignment.objects.filter(campaign=c).exclude(status="open").count() == 2
    # The batch in progress is still its worker's, and finishes.
    assert next_assignment(c, w2) == second


def test_a_campaign_without_a_budget_hands_out_every_batch():
    c = ab_campaign(4, batch_size=1, redundancy=1)

    for n in range(4):
        next_assignment(c, worker(f"w{n}"))

    assert Assignment.objects.filter(campaign=c, status="started").count() == 4


def test_reaching_the_budget_tells_the_owner_and_staff_once(django_capture_on_commit_callbacks):
    from evalhub.models import Notice
    from tests import factories

    owner, boss = factories.user("owner"), factories.user("boss", staff=True)
    c = budgeted("1.00")
    c.owner = owner
    c.save(update_fields=["owner"])
    next_assignment(c, worker("w1"))

    for name in ("w2", "w3"):
        with django_capture_on_commit_callbacks(execute=True), pytest.raises(NoWork):
            next_assignment(c, worker(name))

    for user in (owner, boss):
        [notice] = Notice.objects.filter(user=user, kind="budget_reached")
        assert "reached its budget of 1.00" in notice.text


def test_a_gold_check_in_every_batch_does_not_cap_a_worker_at_one_batch():
    # One gold spec, copied into each of the three batches under one group.
    c = ab_campaign(6, batch_size=2, redundancy=1, gold=1, max_batches_per_worker=3)
    w = worker("w1")

    done = []
    for _ in range(3):
        assignment = next_assignment(c, w)
        judge_all(assignment)
        done.append(assignment.batch_id)

    assert len(set(done)) == 3
