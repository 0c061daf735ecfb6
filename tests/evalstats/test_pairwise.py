import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from evalstats.pairwise import (
    A_WINS,
    B_WINS,
    BOT,
    HUMAN,
    TIE,
    UNSURE,
    adjust_pvalues,
    binomial_pvalues,
    chi_square_pvalues,
    contingency_pvalues,
    encode_labels,
    feature_win_rates,
    pairwise_comparison,
    spot_the_bot_outcome,
    spot_the_bot_outcomes,
    win_count_matrices,
    win_rate_matrix,
)

# --- win function ----------------------------------------------------------------------------

# Every combination of labels, worked out from "human > unsure > bot" (Spot The Bot 3.2).
WIN_TABLE = {
    ("human", "human"): TIE,
    ("human", "unsure"): A_WINS,
    ("human", "bot"): A_WINS,
    ("unsure", "human"): B_WINS,
    ("unsure", "unsure"): TIE,
    ("unsure", "bot"): A_WINS,
    ("bot", "human"): B_WINS,
    ("bot", "unsure"): B_WINS,
    ("bot", "bot"): TIE,
}


@pytest.mark.parametrize(("labels", "expected"), WIN_TABLE.items())
def test_win_function_follows_the_label_order(labels, expected):
    assert spot_the_bot_outcome(*labels) == expected


def test_vectorised_win_function_agrees_with_the_table():
    pairs = list(WIN_TABLE)
    codes_a = encode_labels([a for a, _ in pairs])
    codes_b = encode_labels([b for _, b in pairs])
    np.testing.assert_array_equal(spot_the_bot_outcomes(codes_a, codes_b), list(WIN_TABLE.values()))


def test_encode_labels_is_case_insensitive_and_keeps_shape():
    np.testing.assert_array_equal(
        encode_labels([["Human", "bot "], ["UNSURE", "human"]]), [[HUMAN, BOT], [UNSURE, HUMAN]]
    )
    with pytest.raises(ValueError, match="robot"):
        encode_labels(["robot"])


def test_vectorised_win_function_rejects_unknown_codes():
    with pytest.raises(ValueError):
        spot_the_bot_outcomes([0, 3], [1, 1])


@given(
    hnp.arrays(np.int64, 50, elements=st.integers(0, 2)),
    hnp.arrays(np.int64, 50, elements=st.integers(0, 2)),
)
def test_swapping_speakers_swaps_the_winner(codes_a, codes_b):
    forward = spot_the_bot_outcomes(codes_a, codes_b)
    backward = spot_the_bot_outcomes(codes_b, codes_a)
    swapped = np.select([forward == A_WINS, forward == B_WINS], [B_WINS, A_WINS], TIE)
    np.testing.assert_array_equal(backward, swapped)


# --- counting --------------------------------------------------------------------------------


def naive_counts(system_a, system_b, outcome, n):
    wins = np.zeros((n, n), dtype=int)
    ties = np.zeros((n, n), dtype=int)
    for a, b, o in zip(system_a, system_b, outcome, strict=True):
        if o == A_WINS:
            wins[a, b] += 1
        elif o == B_WINS:
            wins[b, a] += 1
        else:
            ties[a, b] += 1
            ties[b, a] += 1
    return wins, ties


def random_judgments(rng, n_systems, n_judgments):
    system_a = rng.integers(0, n_systems, n_judgments)
    system_b = (system_a + rng.integers(1, n_systems, n_judgments)) % n_systems
    outcome = rng.choice([A_WINS, B_WINS, TIE], n_judgments, p=[0.45, 0.35, 0.2])
    return system_a, system_b, outcome


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 7), st.integers(0, 300), st.integers(0, 2**32 - 1))
def test_win_counts_match_a_naive_loop(n_systems, n_judgments, seed):
    judgments = random_judgments(np.random.default_rng(seed), n_systems, n_judgments)
    wins, ties = win_count_matrices(*judgments, n_systems=n_systems)
    expected_wins, expected_ties = naive_counts(*judgments, n_systems)
    np.testing.assert_array_equal(wins, expected_wins)
    np.testing.assert_array_equal(ties, expected_ties)


def test_win_counts_reject_self_comparisons_and_out_of_range_indices():
    with pytest.raises(ValueError, match="itself"):
        win_count_matrices([0, 1], [1, 1], [A_WINS, TIE])
    with pytest.raises(ValueError, match="out of range"):
        win_count_matrices([0], [3], [A_WINS], n_systems=3)
    with pytest.raises(ValueError, match="outcome"):
        win_count_matrices([0], [1], [2])


def test_win_rate_excludes_ties_and_is_nan_without_decisive_outcomes():
    wins = np.array([[0, 3, 0], [1, 0, 0], [0, 0, 0]])
    rates = win_rate_matrix(wins)
    assert rates[0, 1] == 0.75
    assert rates[1, 0] == 0.25
    assert np.isnan(rates[0, 2])
    assert np.isnan(rates[1, 2])


# --- significance ----------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 200), st.integers(0, 200))
def test_binomial_pvalue_matches_scipy_binomtest(wins_a, wins_b):
    (p,) = binomial_pvalues([wins_a], [wins_b])
    if wins_a + wins_b == 0:
        assert np.isnan(p)
    else:
        assert p == pytest.approx(stats.binomtest(wins_a, wins_a + wins_b).pvalue, rel=1e-10)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 500), st.integers(0, 500))
def test_chi_square_pvalue_matches_scipy_chisquare(wins_a, wins_b):
    (p,) = chi_square_pvalues([wins_a], [wins_b])
    if wins_a + wins_b == 0:
        assert np.isnan(p)
    else:
        assert p == pytest.approx(stats.chisquare([wins_a, wins_b]).pvalue, rel=1e-10)


def test_chi_square_hand_worked_example():
    # 30 vs 10: X^2 = 20^2 / 40 = 10 on 1 df, p = 0.001565.
    (p,) = chi_square_pvalues([30], [10])
    assert p == pytest.approx(0.0015654, abs=1e-7)


pvalue_lists = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30)


# statsmodels' multipletests takes ~60 ms per call here, hence the modest example count.
@settings(max_examples=25, deadline=None)
@given(pvalue_lists, st.sampled_from(["holm", "bonferroni"]))
def test_corrections_match_statsmodels_multipletests(pvalues, method):
    _, expected, _, _ = multipletests(pvalues, method=method)
    np.testing.assert_allclose(adjust_pvalues(pvalues, method), expected, rtol=1e-12, atol=1e-15)


def test_holm_hand_worked_example():
    # Sorted 0.01, 0.02, 0.03, 0.5 -> 4 * 0.01, 3 * 0.02, max(0.06, 2 * 0.03), max(0.06, 0.5).
    adjusted = adjust_pvalues([0.03, 0.5, 0.01, 0.02], "holm")
    np.testing.assert_allclose(adjusted, [0.06, 0.5, 0.04, 0.06])


def test_correction_skips_untested_pairs():
    adjusted = adjust_pvalues([0.01, np.nan, 0.04], "bonferroni")
    np.testing.assert_allclose(adjusted, [0.02, np.nan, 0.08])
    np.testing.assert_array_equal(adjust_pvalues([0.2, np.nan], "none"), [0.2, np.nan])
    with pytest.raises(ValueError):
        adjust_pvalues([0.2], "hochberg")


# --- pairwise_comparison ---------------------------------------------------------------------

# Three systems, worked out by hand:
#   pair (0, 1): 0 wins 4, 1 wins 1, 1 tie  (0 shown in either slot)
#   pair (0, 2): 2 wins 2, 1 tie
#   pair (1, 2): 2 ties only
HAND_A = [0, 1, 0, 0, 1, 0, 0, 2, 2, 1, 2]
HAND_B = [1, 0, 1, 1, 0, 1, 2, 0, 0, 2, 1]
HAND_OUTCOME = [A_WINS, B_WINS, A_WINS, TIE, A_WINS, A_WINS, B_WINS, A_WINS, TIE, TIE, TIE]


def test_pairwise_comparison_hand_worked_example():
    result = pairwise_comparison(HAND_A, HAND_B, HAND_OUTCOME)
    np.testing.assert_array_equal(result.pairs, [[0, 1], [0, 2], [1, 2]])
    np.testing.assert_array_equal(result.wins_a, [4, 0, 0])
    np.testing.assert_array_equal(result.wins_b, [1, 2, 0])
    np.testing.assert_array_equal(result.ties, [1, 1, 2])
    np.testing.assert_allclose(result.win_rate_a, [0.8, 0.0, np.nan])
    # Exact two-sided binomial: 4 of 5 -> 2 * 6/32 = 0.375; 0 of 2 -> 2 * 1/4 = 0.5.
    np.testing.assert_allclose(result.p_value, [0.375, 0.5, np.nan])
    # Holm over the two decided pairs: 2 * 0.375 = 0.75, then max(0.75, 0.5) = 0.75.
    np.testing.assert_allclose(result.p_adjusted, [0.75, 0.75, np.nan])
    # Per system over all opponents: 0 won 4 of 7, 1 won 1 of 5, 2 won 2 of 2.
    np.testing.assert_array_equal(result.system_wins, [4, 1, 2])
    np.testing.assert_array_equal(result.system_losses, [3, 4, 0])
    np.testing.assert_array_equal(result.system_ties, [2, 3, 3])
    np.testing.assert_allclose(result.system_win_rate, [4 / 7, 1 / 5, 1.0])


def test_pairwise_intervals_are_wilson_on_decisive_outcomes():
    result = pairwise_comparison(HAND_A, HAND_B, HAND_OUTCOME)
    low, high = proportion_confint([4, 1, 2], [7, 5, 2], method="wilson")
    np.testing.assert_allclose(result.system_win_rate_ci.low, low, atol=1e-12)
    np.testing.assert_allclose(result.system_win_rate_ci.high, high, atol=1e-12)
    pair_low, _ = proportion_confint(4, 5, method="wilson")
    assert result.win_rate_a_ci.low[0] == pytest.approx(pair_low, abs=1e-12)
    assert np.isnan(result.win_rate_a_ci.low[2])


@settings(max_examples=20, deadline=None)
@given(
    st.integers(2, 6),
    st.integers(1, 400),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["binomial", "chi-square"]),
    st.sampled_from(["holm", "bonferroni"]),
)
def test_pairwise_comparison_matches_independent_references(n, size, seed, test, correction):
    judgments = random_judgments(np.random.default_rng(seed), n, size)
    result = pairwise_comparison(*judgments, n_systems=n, test=test, correction=correction)
    wins, ties = naive_counts(*judgments, n)
    expected_p = []
    for k, (i, j) in enumerate(itertools.combinations(range(n), 2)):
        assert tuple(result.pairs[k]) == (i, j)
        assert (result.wins_a[k], result.wins_b[k], result.ties[k]) == (
            wins[i, j],
            wins[j, i],
            ties[i, j],
        )
        decided = wins[i, j] + wins[j, i]
        if decided == 0:
            assert np.isnan(result.win_rate_a[k]) and np.isnan(result.p_value[k])
            continue
        assert result.win_rate_a[k] == pytest.approx(wins[i, j] / decided)
        if test == "binomial":
            reference = stats.binomtest(int(wins[i, j]), int(decided)).pvalue
        else:
            reference = stats.chisquare([wins[i, j], wins[j, i]]).pvalue
        assert result.p_value[k] == pytest.approx(reference, rel=1e-9)
        expected_p.append(reference)
    tested = ~np.isnan(result.p_value)
    if expected_p:
        _, adjusted, _, _ = multipletests(expected_p, method=correction)
        np.testing.assert_allclose(result.p_adjusted[tested], adjusted, rtol=1e-8)
    expected_rate = wins.sum(1) / np.maximum(wins.sum(1) + wins.sum(0), 1)
    played = (wins.sum(1) + wins.sum(0)) > 0
    np.testing.assert_allclose(result.system_win_rate[played], expected_rate[played])
    assert np.isnan(result.system_win_rate[~played]).all()


def test_spot_the_bot_labels_feed_the_pairwise_comparison():
    # Bot 0 is labelled human far more often than bot 1: a significant win rate.
    labels_a = ["human"] * 30 + ["unsure"] * 10 + ["bot"] * 10
    labels_b = ["bot"] * 30 + ["unsure"] * 10 + ["bot"] * 10
    outcome = spot_the_bot_outcomes(encode_labels(labels_a), encode_labels(labels_b))
    result = pairwise_comparison(np.zeros(50, int), np.ones(50, int), outcome)
    assert (result.wins_a[0], result.wins_b[0], result.ties[0]) == (30, 0, 20)
    assert result.win_rate_a[0] == 1.0
    assert result.p_value[0] == pytest.approx(2 * 0.5**30)


def test_pair_records_are_json_safe_and_use_names():
    records = pairwise_comparison(HAND_A, HAND_B, HAND_OUTCOME).pair_records(["x", "y", "z"])
    assert records[0]["system_a"] == "x" and records[0]["system_b"] == "y"
    assert records[0]["wins_a"] == 4 and isinstance(records[0]["wins_a"], int)
    assert records[2]["win_rate_a"] is None and records[2]["p_adjusted"] is None


def test_unknown_test_is_rejected():
    with pytest.raises(ValueError):
        pairwise_comparison(HAND_A, HAND_B, HAND_OUTCOME, test="fisher")


# --- per-feature win rates -------------------------------------------------------------------


def test_feature_win_rates_hand_worked_example():
    system_a = [0, 0, 1, 2, 0, 1, 2]
    system_b = [1, 2, 0, 0, 1, 2, 1]
    # Judgment k:  0 prefers 0; 1 prefers 2; 2 no difference; 3 prefers 2 (slot a);
    #              4 no difference (None); 5 prefers 2 (slot b); 6 no difference (NaN).
    preferred = [0, 1, -1, 0, None, 1, float("nan")]
    result = feature_win_rates(system_a, system_b, preferred)
    np.testing.assert_array_equal(result.wins, [1, 0, 3])
    np.testing.assert_array_equal(result.losses, [2, 2, 0])
    np.testing.assert_array_equal(result.no_difference, [2, 3, 1])
    np.testing.assert_allclose(result.win_rate, [1 / 3, 0.0, 1.0])


def test_feature_win_rate_of_a_system_without_preferences_is_nan():
    result = feature_win_rates([0, 1], [1, 2], [None, 0], n_systems=4)
    assert np.isnan(result.win_rate[0])
    assert result.win_rate[1] == 1.0 and result.win_rate[2] == 0.0
    assert np.isnan(result.win_rate[3])


def test_feature_win_rates_reject_unknown_codes():
    with pytest.raises(ValueError):
        feature_win_rates([0], [1], [2])


@pytest.mark.parametrize(
    ("wins", "losses", "ties"), [(30, 12, 3), (5, 5, 0), (0, 7, 8), (40, 1, 4), (1, 0, 0)]
)
def test_contingency_test_is_scipy_chi2_contingency_with_yates(wins, losses, ties):
    """The released Spot The Bot code: chi2_contingency([[w, l], [n - w, n - l]])."""
    n = wins + losses + ties
    expected = stats.chi2_contingency(np.array([[wins, losses], [n - wins, n - losses]])).pvalue
    assert contingency_pvalues([wins], [losses], [ties])[0] == pytest.approx(expected, rel=1e-12)


def test_contingency_test_by_hand_with_yates_correction():
    # [[30, 12], [15, 33]]: row sums 42, 48, column sums 45, 45, N = 90; |ad - bc| = 810.
    statistic = 90 * (810 - 90 / 2) ** 2 / (42 * 48 * 45 * 45)
    assert contingency_pvalues([30], [12], [3])[0] == pytest.approx(stats.chi2.sf(statistic, 1))


def test_contingency_test_is_nan_without_a_decisive_judgment():
    assert np.isnan(contingency_pvalues([0], [0], [5])[0])


def test_pairwise_comparison_uses_the_contingency_test_with_ties():
    a = np.array([0] * 45)
    b = np.array([1] * 45)
    outcome = np.array([A_WINS] * 30 + [B_WINS] * 12 + [TIE] * 3)
    result = pairwise_comparison(a, b, outcome, test="chi-square-2x2", correction="bonferroni")
    assert result.test == "chi-square-2x2"
    assert result.p_value[0] == pytest.approx(contingency_pvalues([30], [12], [3])[0])
