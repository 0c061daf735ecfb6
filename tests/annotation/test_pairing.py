"""Adaptive allocation in A/B campaigns (annotation/pairing.py): the default hands out
batches in order; the adaptive setting hands out the batch whose pair of systems the
ranking needs; the stopping rule is read from the judgments and pauses a campaign that
asks for it."""

import random

import pytest
from django.utils import timezone

from annotation import pairing
from annotation.allocation import next_assignment
from annotation.items import add_items
from annotation.models import Campaign, Worker
from annotation.services import record_judgment, submit_if_complete
from tests.annotation.builders import ab_spec, batch_items, campaign

pytestmark = pytest.mark.django_db


def pair_spec(n, a, b):
    spec = ab_spec(n)
    spec.content["meta"].update(system_a=a, system_b=b)
    return spec


def pairs_campaign(pairs, **fields):
    """An A/B campaign with one item per (system a, system b) in `pairs`, a batch each."""
    fields.setdefault("batch_size", 1)
    made = campaign("ab", **fields)
    add_items(made, [pair_spec(i, a, b) for i, (a, b) in enumerate(pairs)], rng=random.Random(0))
    return made


def worker(name):
    return Worker.objects.create(provider="local", external_id=f"link:{name}")


def judge(made, name, choices, rng=None):
    assignment = next_assignment(made, worker(name), rng=rng)
    items = batch_items(assignment)
    for item, choice in zip(items, choices, strict=False):
        record_judgment(
            assignment, item, {"choice": choice, "left": "a"}, started_at=timezone.now()
        )
    assert submit_if_complete(assignment, len(items))
    return assignment


def test_a_campaign_hands_out_batches_in_order_by_default():
    made = pairs_campaign([("x", "y")] * 3 + [("y", "z")] * 3, redundancy=1)
    assert made.allocation == Campaign.Allocation.IN_ORDER
    positions = [judge(made, f"w{i}", ["a"]).batch.position for i in range(3)]
    assert positions == [0, 1, 2]


def test_adaptive_allocation_hands_out_the_pair_the_ranking_needs():
    # x has beaten y in every judgment so far; nothing is known of z. The (y, z) items come
    # after the (x, y) ones in batch order; the rule should hand them out first.
    made = pairs_campaign([("x", "y")] * 12 + [("y", "z")] * 12, redundancy=1)
    for i in range(6):
        judge(made, f"first{i}", ["a"])
    Campaign.objects.filter(pk=made.pk).update(allocation=Campaign.Allocation.ADAPTIVE)
    made.refresh_from_db()
    systems = []
    for i in range(10):
        assignment = next_assignment(made, worker(f"next{i}"), rng=random.Random(i))
        systems.append(batch_items(assignment)[0].content["meta"]["system_b"])
    assert systems.count("z") >= 8


def test_the_stopping_status_counts_the_separated_adjacent_pairs():
    made = pairs_campaign([("x", "y")] * 12, redundancy=1)
    judge(made, "w0", ["a"])
    status = pairing.stopping_status(made)
    assert (status["judgments"], status["adjacent_pairs"], status["answered"]) == (1, 1, False)
    assert status["order"] == ["x", "y"]


def test_a_campaign_that_asks_pauses_once_its_ranking_is_answered(
    django_capture_on_commit_callbacks,
):
    made = pairs_campaign([("x", "y")] * 60, redundancy=1, batch_size=10, pause_when_answered=True)
    with django_capture_on_commit_callbacks(execute=True):
        judge(made, "mixed", ["a", "b"] * 5)
    made.refresh_from_db()
    assert made.status == Campaign.Status.LIVE
    with django_capture_on_commit_callbacks(execute=True):
        for name in ("w1", "w2", "w3"):
            judge(made, name, ["a"] * 10)
    made.refresh_from_db()
    assert made.status == Campaign.Status.PAUSED
    assert pairing.stopping_status(made)["answered"]


def test_a_campaign_that_does_not_ask_stays_live_when_answered(
    django_capture_on_commit_callbacks,
):
    made = pairs_campaign([("x", "y")] * 60, redundancy=1, batch_size=10)
    with django_capture_on_commit_callbacks(execute=True):
        for name in ("w1", "w2", "w3", "w4"):
            judge(made, name, ["a"] * 10)
    made.refresh_from_db()
    assert made.status == Campaign.Status.LIVE and pairing.stopping_status(made)["answered"]
