"""Style-controlled Bradley-Terry against Chatbot Arena's published method written again
with scikit-learn (FastChat ``elo_analysis.py``: ``construct_style_matrices`` +
``fit_mle_elo``): one row per battle with +log(10) for model a and -log(10) for model b and
the standardised normalised style differences, every battle twice (a tie is won by a in one
copy and by b in the other), ``LogisticRegression(fit_intercept=False)`` with its default
penalty (C = 1), ratings 1000 + 400 coef. Run here to convergence (tol 1e-12)."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from evalstats.pairwise import A_WINS, B_WINS, TIE
from evalstats.style_control import (
    normalised_style_differences,
    resample,
    style_controlled_bradley_terry,
)

ELO_TOLERANCE = 0.01


def synthetic(n_systems=8, n_battles=3000, seed=0):
    """Battles whose outcome depends on the systems and on the answers' style."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_systems, n_battles)
    b = (a + rng.integers(1, n_systems, n_battles)) % n_systems
    means = np.array([300.0, 1.0, 3.0, 2.0])

    def side():
        return np.column_stack([rng.poisson(m, n_battles) for m in means])

    style_a, style_b = side(), side()
    theta = rng.normal(0.0, 0.5, n_systems)
    d = normalised_style_differences(style_a, style_b)
    z = (d - d.mean(0)) / d.std(0)
    logit = np.log(10) * (theta[a] - theta[b]) + z @ np.array([0.3, 0.05, 0.1, 0.05])
    won = rng.random(n_battles) < 1 / (1 + np.exp(-logit))
    outcome = np.where(rng.random(n_battles) < 0.2, TIE, np.where(won, A_WINS, B_WINS))
    return a, b, outcome, style_a, style_b, n_systems


def fastchat_style_control(a, b, outcome, style_a, style_b, n_systems):
    """FastChat's features (add_one, then standardised) and fit: (ratings, coefficients)."""
    diff = (style_a - style_b) / (style_a + style_b + 1.0)
    return fastchat_fit(a, b, outcome, (diff - diff.mean(axis=0)) / diff.std(axis=0), n_systems)


def fastchat_fit(a, b, outcome, z, n_systems):
    """FastChat's sklearn fit on standardised style columns ``z``."""
    n = a.size
    x = np.zeros((2 * n, n_systems + z.shape[1]))
    rows = np.arange(2 * n)
    x[rows, np.tile(a, 2)] = np.log(10)
    x[rows, np.tile(b, 2)] = -np.log(10)
    x[:, n_systems:] = np.tile(z, (2, 1))
    y = np.zeros(2 * n)
    y[np.r_[outcome == A_WINS, outcome == A_WINS]] = 1.0
    y[np.r_[outcome == TIE, np.zeros(n, bool)]] = 1.0  # a tie: one copy won by each side
    model = LogisticRegression(fit_intercept=False, tol=1e-12, max_iter=100_000).fit(x, y)
    coef = model.coef_[0]
    return 1000 + 400 * coef[:n_systems], coef[n_systems:]


def test_equal_to_fastchats_sklearn_fit_within_a_hundredth_of_an_elo_point():
    data = synthetic()
    ours = style_controlled_bradley_terry(*data, n_bootstrap=10, seed=1)
    ratings, coefficients = fastchat_style_control(*data)
    assert np.abs(ours.ratings - ratings).max() < ELO_TOLERANCE
    assert ours.coefficients == pytest.approx(coefficients, abs=1e-5)


def test_a_bootstrap_round_is_the_reference_fit_on_the_battles_it_drew():
    data = synthetic(n_systems=5, n_battles=1500, seed=3)
    ours = style_controlled_bradley_terry(*data, n_bootstrap=3, seed=7, bootstrap="refit")
    a, b, outcome, style_a, style_b, n = data
    # Redraw round 1 as documented: pair-sorted battles, child 1 of SeedSequence(7).
    low, high = np.minimum(a, b), np.maximum(a, b)
    order = np.argsort(low * n + high, kind="stable")
    sizes = np.unique(low * n + high, return_counts=True)[1]
    rows, _ = resample(sizes, np.random.SeedSequence(7).spawn(3)[1])
    drawn = order[rows]
    # The standardisation is the full data's, as in FastChat's bootstrap.
    diff = normalised_style_differences(style_a, style_b)
    z = (diff - diff.mean(0)) / diff.std(0)
    ratings, _ = fastchat_fit(a[drawn], b[drawn], outcome[drawn], z[drawn], n)
    assert np.abs(ours.bootstrap_ratings[1] - ratings).max() < ELO_TOLERANCE


def test_one_newton_step_rounds_are_close_to_refitted_ones():
    # The linearised bootstrap differs from the refit by a second-order term: here (3,000
    # battles) a few Elo points, against intervals about 40 points wide.
    data = synthetic()
    refit = style_controlled_bradley_terry(*data, n_bootstrap=30, seed=2, bootstrap="refit")
    step = style_controlled_bradley_terry(*data, n_bootstrap=30, seed=2, bootstrap="one_step")
    assert np.abs(refit.bootstrap_ratings - step.bootstrap_ratings).max() < 8
    assert np.abs(refit.lower - step.lower).max() < 5
    assert (refit.upper - refit.lower).min() > 25


def test_intervals_cover_the_fit_and_coefficients_have_intervals():
    result = style_controlled_bradley_terry(*synthetic(), n_bootstrap=40, seed=4)
    assert np.all(result.lower <= result.ratings) and np.all(result.ratings <= result.upper)
    assert np.all(result.coefficients_lower < result.coefficients_upper)
    # The length effect built into the data is found (smaller than the 0.3 per SD of the
    # simulation: a fifth of the battles are ties whatever the answers).
    assert result.coefficients_lower[0] > 0.1
    assert result.ratings.mean() == pytest.approx(1000.0)


def test_a_style_feature_that_never_varies_is_left_out_with_a_warning():
    a, b, outcome, style_a, style_b, n = synthetic(n_battles=800)
    style_a[:, 1] = style_b[:, 1] = 0  # no headers anywhere
    result = style_controlled_bradley_terry(a, b, outcome, style_a, style_b, n, n_bootstrap=5)
    assert np.isnan(result.coefficients[1]) and not np.isnan(result.coefficients[0])
    assert any("'headers'" in warning for warning in result.warnings)


def test_the_same_seed_gives_the_same_intervals():
    data = synthetic(n_battles=600)
    first = style_controlled_bradley_terry(*data, n_bootstrap=10, seed=5)
    second = style_controlled_bradley_terry(*data, n_bootstrap=10, seed=5)
    assert np.array_equal(first.bootstrap_ratings, second.bootstrap_ratings)


def test_bad_input_is_refused():
    a, b, outcome, style_a, style_b, n = synthetic(n_battles=50)
    with pytest.raises(ValueError, match="distinct"):
        style_controlled_bradley_terry(a, a, outcome, style_a, style_b, n)
    with pytest.raises(ValueError, match="non-negative"):
        style_controlled_bradley_terry(a, b, outcome, -style_a, style_b, n)
    with pytest.raises(ValueError, match="one row per battle"):
        style_controlled_bradley_terry(a, b, outcome, style_a[:10], style_b[:10], n)
