"""Building a campaign: its items stored, packed into batches with gold copies mixed in,
and its slots opened, within the assignment limit."""

import random
from collections import Counter

import pytest
from django.test import override_settings

from annotation.items import TooMuchWork, add_items
from annotation.kinds.base import ItemSpec
from annotation.models import Assignment, Batch, Item
from tests.annotation.builders import ab_campaign, ab_spec, campaign

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
