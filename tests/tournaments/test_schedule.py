"""Schedules count exactly as the bipartite-play paper's formulas say."""

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tournaments.schedule import all_play_all, bipartite_play, self_play

names = st.lists(st.from_regex(r"[a-z]{1,6}", fullmatch=True), min_size=2, max_size=8, unique=True)
per = st.integers(min_value=1, max_value=5)


@given(names, per)
def test_self_play_is_i_times_1_times_j(targets, j):
    plan = self_play(targets, j)
    assert len(plan) == len(targets) * 1 * j
    assert all(c.speakers[0] == c.speakers[1] for c in plan)


@given(names, per)
def test_all_play_all_is_i_times_i_minus_1_times_j_in_both_orders(targets, j):
    plan = all_play_all(targets, j)
    i = len(targets)
    assert len(plan) == i * (i - 1) * j
    pairs = Counter(c.speakers for c in plan)
    assert all(count == j for count in pairs.values())
    assert all((b, a) in pairs for a, b in pairs)
    assert all(a != b for a, b in pairs)


@given(names, names, per)
def test_bipartite_play_is_i_times_k_times_j_target_first(targets, partners, j):
    partners = [f"p-{p}" for p in partners]
    plan = bipartite_play(targets, partners, j)
    assert len(plan) == len(targets) * len(partners) * j
    assert {c.speakers[0] for c in plan} == set(targets)
    assert {c.speakers[1] for c in plan} == set(partners)


def test_the_papers_numbers():
    # Section 6: 11 targets and 24 partners give 11, 110 and 264 target-partner pairs.
    targets = [f"t{n}" for n in range(11)]
    partners = [f"p{n}" for n in range(24)]
    assert len(self_play(targets, 1)) == 11
    assert len(all_play_all(targets, 1)) == 110
    assert len(bipartite_play(targets, partners, 1)) == 264


def test_seeds_are_reproducible_and_distinct():
    first = all_play_all(["a", "b", "c"], 3, seed=7)
    assert first == all_play_all(["a", "b", "c"], 3, seed=7)
    assert len({c.seed for c in first}) == len(first)
    assert {c.seed for c in first} != {c.seed for c in all_play_all(["a", "b", "c"], 3, seed=8)}
    assert len({c.key for c in first}) == len(first)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: all_play_all(["a"], 1), "at least two targets"),
        (lambda: self_play(["a", "a"], 1), "duplicates"),
        (lambda: bipartite_play(["a"], ["a", "b"], 1), "separate from the targets"),
        (lambda: bipartite_play(["a"], [], 1), "at least one partner"),
        (lambda: self_play(["a"], 0), "at least one conversation"),
    ],
)
def test_bad_plans_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
