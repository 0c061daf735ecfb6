"""32 simulated workers drain one campaign at the same time, on PostgreSQL (row locks with
SKIP LOCKED); afterwards the campaign's rules hold exactly.

Run it for real with DATABASE_URL pointing at PostgreSQL; on SQLite it is skipped.
"""

import threading
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.utils import timezone

from annotation.allocation import NoWork, next_assignment
from annotation.items import add_items
from annotation.kinds.base import ItemSpec
from annotation.models import Assignment, Campaign, Item, Judgment, Worker
from annotation.services import record_judgment, submit_if_complete
from tests.annotation.builders import batch_items, campaign

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

THREADS = 32
ITEMS = 500
PER_GROUP = 3  # segments of one conversation
REDUNDANCY = 3
CAP = 4


def segment_specs() -> list[ItemSpec]:
    return [
        ItemSpec(
            content={"context": [f"c {i}"], "left": f"l {i}", "right": f"r {i}", "left_is": "a"},
            group_key=f"conversation-{i // PER_GROUP}",
        )
        for i in range(ITEMS)
    ]


def simulate(campaign_pk: int, worker_pk: int, start: threading.Barrier) -> tuple[int, str]:
    """One worker's whole session; returns (batches done, why it stopped)."""
    try:
        c = Campaign.objects.get(pk=campaign_pk)
        w = Worker.objects.get(pk=worker_pk)
        start.wait()
        done = 0
        while True:
            try:
                assignment = next_assignment(c, w)
            except NoWork as no_work:
                return done, no_work.reason
            items = batch_items(assignment)
            for item in items:
                record_judgment(
                    assignment, item, {"choice": "a", "left": "a"}, started_at=timezone.now()
                )
            assert submit_if_complete(assignment, len(items))
            done += 1
    finally:
        # Each thread opened its own connection; left open, it would block the test
        # database from being dropped.
        connection.close()


def test_concurrent_workers_drain_a_grouped_campaign_exactly():
    c = campaign(batch_size=20, redundancy=REDUNDANCY, max_batches_per_worker=CAP)
    add_items(c, segment_specs())
    workers = [
        Worker.objects.create(provider="local", external_id=f"link:t{n}") for n in range(THREADS)
    ]
    start = threading.Barrier(THREADS)
    with ThreadPoolExecutor(THREADS) as pool:
        futures = [pool.submit(simulate, c.pk, w.pk, start) for w in workers]
        results = [f.result(timeout=60) for f in futures]

    # Nobody gave up on contention: each stopped at the cap or with nothing left to take.
    reasons = Counter(reason.split(" (")[0] for _, reason in results)
    assert set(reasons) <= {
        "You have done the most batches one person may do here",
        "There is no more work for you in this campaign. Thank you!",
    }, reasons
    assert sum(done for done, _ in results) == c.batches.count() * REDUNDANCY
    assert not Assignment.objects.filter(campaign=c, status=Assignment.Status.OPEN).exists()
    assert not Assignment.objects.filter(campaign=c, status=Assignment.Status.STARTED).exists()

    judges = defaultdict(list)
    groups_of = defaultdict(list)
    for item_id, worker_id, group_key in Judgment.objects.filter(campaign=c).values_list(
        "item_id", "worker_id", "item__group_key"
    ):
        judges[item_id].append(worker_id)
        groups_of[worker_id].append(group_key)
    assert len(judges) == Item.objects.filter(campaign=c).count() == ITEMS
    for workers_of_item in judges.values():
        assert len(workers_of_item) == REDUNDANCY
        assert len(set(workers_of_item)) == REDUNDANCY
    for keys in groups_of.values():
        assert max(Counter(keys).values()) == 1, "a worker met two segments of a conversation"
    batches_per_worker = Counter(
        Assignment.objects.filter(campaign=c, worker__isnull=False).values_list(
            "worker_id", flat=True
        )
    )
    assert max(batches_per_worker.values()) <= CAP
