"""The generic packer: every item once, batches no larger than asked, no group twice in one,
and no batch closed early while an item it could have taken was left."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.packing import pack_batches

# Few distinct keys and many empty ones, so that groups of every size and loners both occur.
keys = st.lists(st.sampled_from(["", "", "a", "b", "c", "d", "e", "f", "g"]), max_size=60)


@settings(max_examples=300, deadline=None)
@given(keys, st.integers(1, 12))
def test_invariants(group_keys, batch_size):
    batches = pack_batches(group_keys, batch_size)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(len(group_keys)))
    left = set(range(len(group_keys)))
    for batch in batches:
        assert 1 <= len(batch) <= batch_size
        groups = [group_keys[i] for i in batch if group_keys[i]]
        assert len(groups) == len(set(groups)), f"a group twice in {batch}"
        left -= set(batch)
        if len(batch) < batch_size:
            # Closed early: everything still to pack must clash with this batch.
            could_join = [i for i in left if not group_keys[i] or group_keys[i] not in groups]
            assert not could_join, f"batch {batch} closed with room; {could_join} could join"


def test_a_worked_example():
    # Group a has three items, b two, c one, and two loners; batches of three.
    keys_ = ["a", "a", "b", "", "a", "b", "c", ""]
    # Largest groups first (a, b, c): batch 1 takes a, b, c; batch 2 a, b and a loner;
    # batch 3 the last a and the last loner.
    assert pack_batches(keys_, 3) == [[0, 2, 6], [1, 5, 3], [4, 7]]


def test_only_loners_fill_batches_in_input_order():
    assert pack_batches(["", "", "", "", ""], 2) == [[0, 1], [2, 3], [4]]


def test_one_big_group_gives_one_item_per_batch():
    assert pack_batches(["x"] * 3, 5) == [[0], [1], [2]]


def test_empty_input_gives_no_batches():
    assert pack_batches([], 4) == []


def test_batch_size_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        pack_batches(["a"], 0)
