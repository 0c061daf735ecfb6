import math
from itertools import permutations

import choix
import numpy as np
import pytest

from evalstats.bradley_terry import (
    bradley_terry_from_judgments,
    fit_bradley_terry,
    multinomial_rounds,
    to_elo_scale,
)
from evalstats.pairwise import A_WINS, B_WINS, TIE, win_count_matrices
from evalstats.plackett_luce import (
    MAX_TIED,
    bootstrap_plackett_luce,
    fit_plackett_luce,
    plackett_luce_log_likelihood,
)

# --- data and the independent reference (choix) ----------------------------------------------


def simulate_rankings(theta, n_rankings, k, seed, tie_share=0.0):
    """Plackett-Luce rankings of k random systems (Gumbel trick); with probability
    `tie_share` the two systems ranked last are reported tied."""
    rng = np.random.default_rng(seed)
    rankings = []
    for _ in range(n_rankings):
        shown = rng.choice(len(theta), k, replace=False)
        order = shown[np.argsort(-(theta[shown] + rng.gumbel(size=k)))]
        tiers = [[int(s)] for s in order]
        if rng.random() < tie_share:
            tiers[-2:] = [sorted(tiers[-2] + tiers[-1])]
        rankings.append(tiers)
    return rankings


def choix_strengths(rankings, n):
    """choix's ILSR on untied orders; a tier of m systems becomes its m! orders, every
    ranking repeated so that each order of a tied ranking weighs 1 / m! of an untied one."""
    multiple = max(int(np.prod([len(t) for t in r])) for r in rankings) * 2
    data = []
    for ranking in rankings:
        orders = [()]
        for tier in ranking:
            orders = [o + p for o in orders for p in permutations(tier)]
        data += [o for o in orders for _ in range(multiple // len(orders))]
    reference = choix.ilsr_rankings(n, data, alpha=0.0, tol=1e-13, max_iter=1000)
    return reference - reference.mean()


def pairwise_as_rankings(system_a, system_b, outcome):
    return [
        [[int(a)], [int(b)]]
        if o == A_WINS
        else [[int(b)], [int(a)]]
        if o == B_WINS
        else [sorted([int(a), int(b)])]
        for a, b, o in zip(system_a, system_b, outcome, strict=True)
    ]


THETA = np.array([0.8, 0.3, 0.0, -0.2, -0.9, 0.5])


# --- the fit against choix ---------------------------------------------------------------------


@pytest.mark.parametrize("k", [3, 4, 6])
def test_untied_rankings_equal_choix(k):
    rankings = simulate_rankings(THETA, 400, k, seed=k)
    fit = fit_plackett_luce(rankings, len(THETA))
    assert fit.converged and fit.pseudo_ties == 0.0 and fit.warnings == ()
    np.testing.assert_allclose(fit.strengths, choix_strengths(rankings, len(THETA)), atol=1e-7)


def test_ties_equal_choix_on_every_order_of_the_tier():
    rankings = simulate_rankings(THETA, 300, 4, seed=11, tie_share=0.4)
    rankings += [[[0, 2, 5], [1]], [[3], [1, 4, 0]]]
    fit = fit_plackett_luce(rankings, len(THETA))
    np.testing.assert_allclose(fit.strengths, choix_strengths(rankings, len(THETA)), atol=1e-7)


def test_log_likelihood_of_a_tie_is_the_mean_over_its_orders():
    theta = np.array([0.4, -0.1, -0.3])
    tied = plackett_luce_log_likelihood(theta, [[[0], [1, 2]]], 3)
    orders = [plackett_luce_log_likelihood(theta, [[[0], [1], [2]]], 3)]
    orders.append(plackett_luce_log_likelihood(theta, [[[0], [2], [1]]], 3))
    assert tied == pytest.approx(np.mean(orders), abs=1e-12)


def test_fit_maximises_the_log_likelihood():
    rankings = simulate_rankings(THETA, 200, 3, seed=2, tie_share=0.3)
    fit = fit_plackett_luce(rankings, len(THETA))
    best = plackett_luce_log_likelihood(fit.strengths, rankings, len(THETA))
    assert fit.log_likelihood == pytest.approx(best)
    for shift in np.eye(len(THETA)) * 1e-3:
        assert plackett_luce_log_likelihood(fit.strengths + shift, rankings, len(THETA)) < best


# --- k = 2 is Bradley-Terry ----------------------------------------------------------------


def test_pairwise_judgments_give_bradley_terry_with_its_bootstrap():
    rng = np.random.default_rng(8)
    a = rng.integers(0, 5, 600)
    b = (a + rng.integers(1, 5, 600)) % 5
    outcome = rng.choice([A_WINS, B_WINS, TIE], 600, p=[0.45, 0.35, 0.2])
    bt = bradley_terry_from_judgments(a, b, outcome, 5, n_bootstrap=60, seed=4)
    pl = bootstrap_plackett_luce(pairwise_as_rankings(a, b, outcome), 5, n_bootstrap=60, seed=4)
    np.testing.assert_allclose(pl.strengths, bt.strengths, atol=1e-9)
    np.testing.assert_allclose(pl.bootstrap_ratings, bt.bootstrap_ratings, atol=1e-6)
    np.testing.assert_allclose(pl.confidence_interval.low, bt.confidence_interval.low, atol=1e-6)
    np.testing.assert_allclose(pl.confidence_interval.high, bt.confidence_interval.high, atol=1e-6)
    np.testing.assert_array_equal(pl.ranks, bt.ranks)
    assert pl.n_rankings == 600


def test_pairwise_without_a_finite_estimate_takes_bradley_terrys_prior():
    # System 0 never loses: both models add the same virtual ties.
    a, b = np.array([0, 0, 1, 2, 1]), np.array([1, 2, 2, 1, 0])
    outcome = np.array([A_WINS, A_WINS, A_WINS, A_WINS, B_WINS])
    wins, ties = win_count_matrices(a, b, outcome, 3)
    bt = fit_bradley_terry(wins, ties, labels=["x", "y", "z"])
    pl = fit_plackett_luce(pairwise_as_rankings(a, b, outcome), 3, labels=["x", "y", "z"])
    assert pl.pseudo_ties == bt.pseudo_ties == 1.0
    np.testing.assert_allclose(pl.strengths, bt.strengths, atol=1e-9)
    assert pl.warnings == bt.warnings


# --- bootstrap -----------------------------------------------------------------------------


def test_bootstrap_replicate_is_choix_on_the_resampled_rankings():
    rankings = simulate_rankings(THETA, 250, 4, seed=5, tie_share=0.2)
    result = bootstrap_plackett_luce(rankings, len(THETA), n_bootstrap=30, seed=9)
    # The resample of replicate 0, drawn as the function draws it: unique rankings in
    # their documented order, multinomial counts from the seed.
    unique = sorted(
        {tuple(tuple(t) for t in r) for r in rankings},
        key=lambda r: (
            any(len(t) > 1 for t in r),
            tuple(s for t in r for s in t),
            tuple(len(t) for t in r),
        ),
    )
    counts = np.array([sum(tuple(tuple(t) for t in r) == u for r in rankings) for u in unique])
    draw = multinomial_rounds(int(counts.sum()), counts / counts.sum(), 30, 9)[0]
    resampled = [list(u) for u, c in zip(unique, draw, strict=True) for _ in range(c)]
    expected = to_elo_scale(choix_strengths(resampled, len(THETA)))
    np.testing.assert_allclose(result.bootstrap_ratings[0], expected, atol=1e-5)


def test_bootstrap_intervals_cover_the_fit_and_rank_the_clearly_best_first():
    rankings = simulate_rankings(np.array([2.0, 0.0, 0.1, -0.1]), 400, 3, seed=1)
    result = bootstrap_plackett_luce(rankings, 4, n_bootstrap=200, seed=3, confidence=0.9)
    assert np.all(result.confidence_interval.low <= result.ratings)
    assert np.all(result.ratings <= result.confidence_interval.high)
    assert result.ranks[0] == 1 and np.all(result.ranks[1:] == 2)
    assert result.ratings.mean() == pytest.approx(1000.0)


def test_same_seed_same_intervals():
    rankings = simulate_rankings(THETA, 120, 3, seed=6)
    one = bootstrap_plackett_luce(rankings, len(THETA), n_bootstrap=40, seed=1)
    two = bootstrap_plackett_luce(rankings, len(THETA), n_bootstrap=40, seed=1)
    np.testing.assert_array_equal(one.bootstrap_ratings, two.bootstrap_ratings)


def test_replicates_without_finite_estimate_are_counted_in_warnings():
    # System 2 loses only once: some resamples never see it win or lose that ranking.
    rankings = [[[0], [1], [2]]] * 20 + [[[1], [0]]] * 20 + [[[2], [0], [1]]]
    result = bootstrap_plackett_luce(rankings, 3, n_bootstrap=100, seed=2)
    assert result.fit.pseudo_ties == 0.0
    assert any("bootstrap replicates had no finite ML estimate" in w for w in result.warnings)


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rankings", "message"),
    [
        ([[[0], [0]]], "appears twice"),
        ([[[0]]], "at least 2 systems"),
        ([[[0], [7]]], "not in 0 .. 2"),
        ([[[0], []]], "non-empty list"),
        ([[[0], ["1"]]], "integer indices"),
        ([[list(range(MAX_TIED + 1))]], f"at most {MAX_TIED}"),
        ([], "no rankings"),
    ],
)
def test_bad_rankings_are_refused_with_their_position(rankings, message):
    with pytest.raises(ValueError, match=message):
        fit_plackett_luce(rankings, 3 if message != f"at most {MAX_TIED}" else MAX_TIED + 1)


def test_strengths_of_the_wrong_length_are_refused():
    with pytest.raises(ValueError, match="3 numbers"):
        plackett_luce_log_likelihood([0.0, 1.0], [[[0], [1], [2]]], 3)


def test_no_estimate_and_no_prior_is_refused():
    with pytest.raises(ValueError, match="unbeaten"):
        fit_plackett_luce([[[0], [1], [2]]], 3, pseudo_ties=0.0)


@pytest.mark.parametrize("options", [{"confidence": 1.0}, {"n_bootstrap": 0}])
def test_bad_bootstrap_options_are_refused(options):
    with pytest.raises(ValueError):
        bootstrap_plackett_luce([[[0], [1]], [[1], [0]]], 2, **options)


def test_a_choice_set_far_below_the_strongest_system_keeps_its_likelihood():
    # exp(-800) underflows: that set is recomputed shifted by its own largest strength.
    rankings = [[[0], [1], [2]], [[1], [2]]]
    log_lik = plackett_luce_log_likelihood([800.0, 0.0, 0.0], rankings, 3)
    assert log_lik == pytest.approx(-2 * math.log(2.0), rel=1e-12)
