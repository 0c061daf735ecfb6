"""Tests of evalstats.intervals: Spot The Bot judgments as distinct intervals with counts."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalstats.intervals import aggregate_intervals, spot_the_bot_intervals, unique_rows
from evalstats.pairwise import BOT, HUMAN, UNSURE
from tests.evalstats.survival_data import (
    SEGMENT_LENGTHS,
    simulate_judgments,
)


def test_spot_the_bot_intervals_hand_example():
    system = [0, 0, 0, 1, 1]
    k = [2, 2, 3, 2, 5]
    label = [BOT, BOT, HUMAN, UNSURE, BOT]
    data = spot_the_bot_intervals(system, k, label)
    np.testing.assert_array_equal(data.left, [0, 0, 2, 3])
    np.testing.assert_array_equal(data.right, [2, 5, np.inf, np.inf])
    np.testing.assert_array_equal(data.groups, [0, 1])
    np.testing.assert_array_equal(data.counts, [[2, 0, 0, 1], [0, 1, 1, 0]])
    np.testing.assert_array_equal(data.counts_of(1), [0, 1, 1, 0])
    assert not data.counts.flags.writeable


def test_aggregation_matches_pandas_value_counts():
    rng = np.random.default_rng(0)
    system, k, label = simulate_judgments(rng, 900, [0.2, 0.3, 0.5])
    data = spot_the_bot_intervals(system, k, label)
    spotted = label == BOT
    frame = pd.DataFrame(
        {
            "system": system,
            "left": np.where(spotted, 0.0, k),
            "right": np.where(spotted, k, np.inf),
        }
    )
    expected = frame.value_counts()
    assert data.counts.sum() == len(frame)
    assert data.left.size <= 2 * SEGMENT_LENGTHS.size
    for (s, left, right), count in expected.items():
        column = np.flatnonzero((data.left == left) & (data.right == right))
        assert data.counts_of(s)[column].item() == count


@pytest.mark.parametrize(
    "label", [np.array(["bot", "human"]), np.array([BOT, 7]), np.array([0.0, 1.0])]
)
def test_bad_labels_are_rejected(label):
    with pytest.raises(ValueError, match="integer codes"):
        spot_the_bot_intervals([0, 0], [2, 3], label)


def test_invalid_intervals_are_rejected():
    with pytest.raises(ValueError, match="left <= right"):
        aggregate_intervals([3.0], [2.0])
    with pytest.raises(ValueError, match="finite"):
        aggregate_intervals([np.inf], [np.inf])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),
            st.integers(0, 5),
            st.sampled_from([0.0, 1.0, 2.5, np.inf]),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_aggregation_round_trips(rows):
    group = np.array([r[0] for r in rows])
    left = np.array([r[1] for r in rows], dtype=float)
    right = left + np.array([r[2] for r in rows])
    data = aggregate_intervals(left, right, group)
    for g, counts in zip(data.groups, data.counts, strict=True):
        rebuilt = sorted(
            zip(np.repeat(data.left, counts), np.repeat(data.right, counts), strict=True)
        )
        original = sorted(zip(left[group == g], right[group == g], strict=True))
        assert rebuilt == original


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 300),
    st.integers(1, 4),
    st.integers(1, 40),
    st.integers(0, 2**32 - 1),
)
def test_unique_rows_equals_numpy_unique_along_rows(n_rows, n_columns, n_values, seed):
    rng = np.random.default_rng(seed)
    pool = np.concatenate([rng.normal(size=n_values), [np.inf, 0.0, 2.0]])
    matrix = rng.choice(pool, size=(n_rows, n_columns))
    expected_rows, expected_inverse = np.unique(matrix, axis=0, return_inverse=True)
    rows, inverse = unique_rows(matrix)
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_array_equal(inverse, expected_inverse.ravel())


def test_unique_rows_with_many_distinct_rows_equals_numpy():
    matrix = np.random.default_rng(4).normal(size=(5000, 3))
    expected_rows, expected_inverse = np.unique(matrix, axis=0, return_inverse=True)
    rows, inverse = unique_rows(matrix)
    np.testing.assert_array_equal(rows, expected_rows)
    np.testing.assert_array_equal(inverse, expected_inverse.ravel())
