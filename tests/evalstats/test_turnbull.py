"""Tests of evalstats.turnbull against lifelines (Turnbull NPMLE, Kaplan-Meier) and
scipy's isotonic regression."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifelines import KaplanMeierFitter
from scipy.optimize import isotonic_regression

from evalstats.intervals import aggregate_intervals, spot_the_bot_intervals
from evalstats.turnbull import turnbull_by_group, turnbull_npmle
from tests.evalstats.survival_data import (
    SEGMENT_LENGTHS,
    containment,
    lifelines_bounds,
    right_censored_sample,
    simulate_judgments,
)


def test_turnbull_matches_lifelines_on_spot_the_bot_data():
    rng = np.random.default_rng(1)
    system, k, label = simulate_judgments(rng, 300, [0.15, 0.3, 0.6])
    data = spot_the_bot_intervals(system, k, label)
    fits = turnbull_by_group(data)
    for group, fit in fits.items():
        counts = data.counts_of(group)
        lower, upper = lifelines_bounds(np.repeat(data.left, counts), np.repeat(data.right, counts))
        reference = KaplanMeierFitter().fit_interval_censoring(
            lower, upper, timeline=SEGMENT_LENGTHS, tol=1e-12
        )
        # The "lower" column is S just after the mass of an interval ending at t, i.e. S(t).
        expected = reference.survival_function_["NPMLE_estimate_lower"].to_numpy()
        assert fit.converged
        np.testing.assert_array_equal(fit.times, SEGMENT_LENGTHS)
        # lifelines' EM stops on a log-likelihood change of 1e-12, not at the exact optimum.
        np.testing.assert_allclose(fit.survival, expected, atol=1e-5)


@pytest.mark.parametrize("seed", [0, 2, 3])
def test_turnbull_matches_lifelines_on_general_interval_data(seed):
    """Visits at random times: the event is known to lie between two visits."""
    rng = np.random.default_rng(seed)
    event = rng.weibull(1.5, 200) * 6
    left, right = np.zeros(event.size), np.full(event.size, np.inf)
    for i, t in enumerate(event):
        visits = np.cumsum(rng.integers(1, 4, size=10)).astype(float)
        left[i] = visits[visits < t].max(initial=0.0)
        right[i] = visits[visits >= t].min(initial=np.inf)
    data = aggregate_intervals(left, right)
    fit = turnbull_npmle(data.left, data.right, data.counts[0])
    lower, upper = lifelines_bounds(left, right)
    reference = KaplanMeierFitter().fit_interval_censoring(
        lower, upper, timeline=fit.times, tol=1e-12
    )
    expected = reference.survival_function_["NPMLE_estimate_lower"].to_numpy()
    assert fit.converged and not np.isnan(fit.survival).any()
    np.testing.assert_allclose(fit.survival, expected, atol=1e-6)


def test_turnbull_equals_kaplan_meier_on_right_censored_data():
    _, duration, observed = right_censored_sample(np.random.default_rng(4), 1, 150)
    times = np.unique(duration)
    km = KaplanMeierFitter().fit(duration, observed, timeline=times)
    ours = turnbull_npmle(duration, np.where(observed, duration, np.inf), times=times)
    assert ours.converged
    np.testing.assert_allclose(ours.survival, km.survival_function_.to_numpy().ravel(), atol=1e-9)


@st.composite
def current_status_counts(draw):
    lengths = draw(st.lists(st.integers(1, 9), min_size=1, max_size=4, unique=True))
    lengths = np.sort(np.array(lengths, dtype=float))
    spotted = np.array(
        draw(st.lists(st.integers(0, 30), min_size=lengths.size, max_size=lengths.size))
    )
    survived = np.array(
        draw(st.lists(st.integers(0, 30), min_size=lengths.size, max_size=lengths.size))
    )
    survived = np.where(spotted + survived == 0, 1, survived)
    return lengths, spotted, survived


@settings(max_examples=200, deadline=None)
@given(current_status_counts())
def test_turnbull_equals_antitonic_regression_of_survived_fraction(sample):
    """Current status data: the NPMLE of S(k) is the weighted antitonic regression of the
    survived fraction on k (Groeneboom & Wellner 1992), computed here by scipy's PAVA."""
    lengths, spotted, survived = sample
    left = np.concatenate([np.zeros(lengths.size), lengths])
    right = np.concatenate([lengths, np.full(lengths.size, np.inf)])
    fit = turnbull_npmle(left, right, np.concatenate([spotted, survived]), times=lengths)
    total = spotted + survived
    reference = isotonic_regression(survived / total, weights=total, increasing=False).x
    assert fit.converged
    np.testing.assert_allclose(fit.survival, reference, atol=1e-9)


@st.composite
def general_intervals(draw):
    n = draw(st.integers(1, 30))
    left = np.array(draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), dtype=float)
    width = np.array(
        draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, np.inf]), min_size=n, max_size=n))
    )
    counts = np.array(draw(st.lists(st.integers(1, 5), min_size=n, max_size=n)))
    return left, left + width, counts


@settings(max_examples=200, deadline=None)
@given(general_intervals())
def test_turnbull_survival_is_a_survival_function(sample):
    left, right, counts = sample
    fit = turnbull_npmle(left, right, counts, times=np.arange(0.0, 11.0, 0.5))
    determined = fit.survival[~np.isnan(fit.survival)]
    assert fit.converged and fit.kkt_violation <= fit.tol
    assert np.all(fit.mass >= 0) and math.isclose(fit.mass.sum(), 1.0, rel_tol=1e-12)
    assert np.all((determined >= 0) & (determined <= 1))
    assert np.all(np.diff(determined) <= 1e-12)
    # Optimality: moving mass between any two intervals cannot raise the likelihood.
    contains = containment(left, right, fit.interval_left, fit.interval_right)
    for donor, receiver in itertools.product(np.flatnonzero(fit.mass > 1e-6), range(fit.mass.size)):
        moved = fit.mass.copy()
        moved[donor] -= 1e-6
        moved[receiver] += 1e-6
        with np.errstate(divide="ignore"):
            assert counts @ np.log(contains @ moved) <= fit.loglik + 1e-9


def test_turnbull_reports_iteration_cap_when_not_certified():
    lengths, spotted, survived = np.array([2.0, 3.0]), np.array([26, 26]), np.array([27, 27])
    left = np.concatenate([np.zeros(2), lengths])
    right = np.concatenate([lengths, [np.inf, np.inf]])
    counts = np.concatenate([spotted, survived])
    certified = turnbull_npmle(left, right, counts)
    impossible = turnbull_npmle(left, right, counts, tol=-1.0, max_iter=64)
    assert certified.converged and certified.n_iter <= certified.max_iter
    # Equal spotted fractions: the middle interval's optimal mass is exactly 0, where plain
    # EM only crawls; the Newton finish reaches it.
    np.testing.assert_allclose(certified.survival, [27 / 53, 27 / 53], atol=1e-12)
    assert not impossible.converged
    assert impossible.n_iter == impossible.max_iter == 64
