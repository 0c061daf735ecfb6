"""The arena leaderboard against hand-worked examples and against Chatbot Arena's own
formulation: a logistic regression (scikit-learn) on the battles, ties as half a win each
way, ratings 400 points per factor of ten."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from evalstats.arena import arena_leaderboard
from evalstats.pairwise import A_WINS, B_WINS, TIE


def battles(*rows):
    a, b, outcome = zip(*rows, strict=True)
    return np.array(a), np.array(b), np.array(outcome)


def test_two_systems_three_wins_to_one_by_hand():
    # P(0 beats 1) = 3/4, so theta_0 - theta_1 = ln 3 and the ratings, mean 1000, are
    # 1000 +- 200 log10(3).
    a, b, o = battles((0, 1, A_WINS), (0, 1, A_WINS), (1, 0, B_WINS), (1, 0, A_WINS))
    board = arena_leaderboard(a, b, o, 2, n_bootstrap=20, seed=1)
    half_gap = 200 * np.log10(3)
    assert board.ratings == pytest.approx([1000 + half_gap, 1000 - half_gap])
    assert list(board.battles) == [4, 4]


def test_a_tie_is_half_a_win_for_each_side_by_hand():
    # Two wins for 0, one for 1, two ties: 3 effective wins to 2, a gap of 400 log10(1.5).
    a, b, o = battles((0, 1, A_WINS), (1, 0, B_WINS), (0, 1, B_WINS), (0, 1, TIE), (1, 0, TIE))
    board = arena_leaderboard(a, b, o, 2, n_bootstrap=20, seed=1)
    assert board.ratings[0] - board.ratings[1] == pytest.approx(400 * np.log10(1.5))


def test_win_rates_leave_ties_out_and_counts_keep_them():
    a, b, o = battles(
        (0, 1, A_WINS), (0, 1, A_WINS), (1, 0, A_WINS), (0, 1, TIE), (0, 2, TIE), (2, 1, B_WINS)
    )
    board = arena_leaderboard(a, b, o, 3, n_bootstrap=20, seed=1)
    assert board.pair_battles.tolist() == [[0, 4, 1], [4, 0, 1], [1, 1, 0]]
    assert board.win_rate[0, 1] == pytest.approx(2 / 3)
    assert board.win_rate[1, 0] == pytest.approx(1 / 3)
    assert board.win_rate[1, 2] == 1.0 and board.win_rate[2, 1] == 0.0
    assert np.isnan(board.win_rate[0, 2])  # only a tie between them
    assert list(board.battles) == [5, 5, 2]


def chatbot_arena_ratings(a, b, outcome, n):
    """Chatbot Arena's maximum-likelihood Elo, written again here from the paper: one row
    per battle with +log(10) for model a and -log(10) for model b; a tie is two rows, one
    won by each side, each of weight 1/2; no intercept, no penalty; rating = 400 coef."""
    rows, targets, weights = [], [], []
    for i, j, o in zip(a, b, outcome, strict=True):
        x = np.zeros(n)
        x[i], x[j] = np.log(10), -np.log(10)
        if o == TIE:
            rows += [x, x]
            targets += [1, 0]
            weights += [0.5, 0.5]
        else:
            rows.append(x)
            targets.append(1 if o == A_WINS else 0)
            weights.append(1.0)
    model = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-12, max_iter=10_000)
    model.fit(np.array(rows), np.array(targets), sample_weight=np.array(weights))
    ratings = 400 * model.coef_[0]
    return ratings - ratings.mean() + 1000


def test_ratings_match_a_logistic_regression_on_simulated_battles():
    rng = np.random.default_rng(11)
    n, size = 6, 3000
    strength = np.array([0.8, 0.4, 0.1, 0.0, -0.3, -0.9])
    a = rng.integers(0, n, size)
    b = (a + rng.integers(1, n, size)) % n
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    draw = rng.random(size)
    outcome = np.where(draw < 0.15, TIE, np.where(rng.random(size) < p, A_WINS, B_WINS))
    board = arena_leaderboard(a, b, outcome, n, n_bootstrap=50, seed=3)
    reference = chatbot_arena_ratings(a, b, outcome, n)
    assert board.ratings == pytest.approx(reference, abs=0.01)
    assert np.all(board.lower <= board.ratings) and np.all(board.ratings <= board.upper)
    # Ranks: 1 + the systems whose lower bound is above this one's upper bound.
    expected = [1 + int(np.sum(board.lower > board.upper[i])) for i in range(n)]
    assert list(board.ranks) == expected
    assert board.ranks[0] == 1 and board.ranks[-1] > 1


def test_the_same_seed_gives_the_same_intervals():
    a, b, o = battles(*[(0, 1, A_WINS)] * 5, *[(1, 2, A_WINS)] * 4, *[(2, 0, B_WINS)] * 3)
    first = arena_leaderboard(a, b, o, 3, n_bootstrap=40, seed=5)
    again = arena_leaderboard(a, b, o, 3, n_bootstrap=40, seed=5)
    assert np.array_equal(first.lower, again.lower) and np.array_equal(first.upper, again.upper)


def test_provisional_systems_by_battles_or_width_are_never_first():
    from evalstats.arena import provisional_ranks

    provisional, ranks = provisional_ranks(
        [1, 1, 3],
        battles=[500, 20, 500],
        lower=[990, 900, 950],
        upper=[1010, 1100, 1000],
        min_battles=300,
        max_width=40,
    )
    assert provisional.tolist() == [False, True, True]  # 20 battles; an interval 50 wide
    assert ranks.tolist() == [1, 2, 3]


def test_the_style_leaderboard_counts_battles_as_the_plain_one():
    from evalstats.arena import arena_style_leaderboard

    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, 300)
    b = (a + rng.integers(1, 3, 300)) % 3
    outcome = rng.choice([A_WINS, B_WINS, TIE], 300)
    style_a, style_b = rng.poisson(5, (300, 4)), rng.poisson(5, (300, 4))
    styled = arena_style_leaderboard(a, b, outcome, style_a, style_b, 3, n_bootstrap=10, seed=1)
    plain = arena_leaderboard(a, b, outcome, 3, n_bootstrap=10, seed=1)
    assert styled.battles.tolist() == plain.battles.tolist()
    assert np.array_equal(styled.pair_battles, plain.pair_battles)
    assert styled.style is not None and styled.style.coefficients.shape == (4,)
