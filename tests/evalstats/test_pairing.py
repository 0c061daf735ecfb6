"""The adaptive pairing engine against independent references: the incremental state against
a full fit by scipy's optimiser on the raw votes and statsmodels' logistic regression (its
covariance too), the pick rule against a hand-worked three-system example and against the
variance fall computed by inverting the updated precision, the stopping rule by hand."""

import numpy as np
import pytest
import statsmodels.api as sm
from scipy.optimize import minimize

from evalstats import pairing as pg


def random_votes(rng, theta, count, tie_rate=0.0):
    n = theta.size
    i = rng.integers(n, size=count)
    j = (i + rng.integers(1, n, size=count)) % n
    p = 1.0 / (1.0 + np.exp(theta[j] - theta[i]))
    u = rng.random(count)
    tie = u < tie_rate
    first_won = (u - tie_rate) / (1.0 - tie_rate) < p
    return np.where(first_won, i, j), np.where(first_won, j, i), tie


def scipy_map(n, winner, loser, tie, prior):
    """The MAP on the raw votes, each one its own term: a tie half a win each way."""
    share = np.where(tie, 0.5, 1.0)

    def negative(theta):
        margin = theta[winner] - theta[loser]
        value = share * np.logaddexp(0, -margin) + (1 - share) * np.logaddexp(0, margin)
        return value.sum() + 0.5 * prior * theta @ theta

    def gradient(theta):
        p = 1.0 / (1.0 + np.exp(-(theta[winner] - theta[loser])))
        g = -(share - p)
        out = np.zeros(n)
        np.add.at(out, winner, g)
        np.add.at(out, loser, -g)
        return out + prior * theta

    return minimize(negative, np.zeros(n), jac=gradient, method="BFGS", tol=1e-12).x


def test_votes_added_one_at_a_time_equal_a_full_fit_of_the_raw_votes():
    rng = np.random.default_rng(3)
    theta = np.array([0.8, 0.3, 0.0, -0.4, -1.0])
    winner, loser, tie = random_votes(rng, theta, 600, tie_rate=0.2)
    state = pg.new_state(5, prior_precision=0.5)
    for w, loss, t in zip(winner, loser, tie, strict=True):
        state = pg.add_vote(state, int(w), int(loss), bool(t))
    reference = scipy_map(5, winner, loser, tie, 0.5)
    assert state.votes == 600
    assert state.strengths == pytest.approx(reference, abs=1e-6)


def test_votes_added_in_batches_equal_the_fit_of_their_counts():
    rng = np.random.default_rng(4)
    theta = rng.normal(0, 1, 8)
    winner, loser, tie = random_votes(rng, theta, 2000, tie_rate=0.1)
    state = pg.new_state(8)
    for start in range(0, 2000, 250):
        part = slice(start, start + 250)
        state = pg.add_votes(state, winner[part], loser[part], tie[part])
    wins = np.zeros((8, 8))
    ties = np.zeros((8, 8))
    np.add.at(wins, (winner[~tie], loser[~tie]), 1)
    np.add.at(ties, (winner[tie], loser[tie]), 1)
    np.add.at(ties, (loser[tie], winner[tie]), 1)
    full = pg.state_from_counts(wins, ties)
    assert state.strengths == pytest.approx(full.strengths, abs=1e-8)
    assert state.votes == full.votes == 2000


def test_strengths_and_covariance_match_statsmodels_logistic_regression():
    # With a negligible prior the MAP is the maximum-likelihood fit; statsmodels fits the
    # same model as a logistic regression on indicator differences, system 0 the reference.
    rng = np.random.default_rng(5)
    theta = np.array([0.5, 0.0, -0.3, -0.9])
    winner, loser, tie = random_votes(rng, theta, 3000)
    state = pg.new_state(4, prior_precision=1e-9)
    state = pg.add_votes(state, winner, loser, tie)
    design = np.zeros((3000, 4))
    design[np.arange(3000), winner] = 1.0
    design[np.arange(3000), loser] = -1.0
    # Both orientations of each vote, so the response is not constant: x and -x, y and 1-y.
    x = np.vstack([design, -design])[:, 1:]
    y = np.concatenate([np.ones(3000), np.zeros(3000)])
    fit = sm.GLM(y, x, family=sm.families.Binomial(), var_weights=np.full(6000, 0.5)).fit()
    differences = state.strengths[1:] - state.strengths[0]
    assert differences == pytest.approx(fit.params, abs=1e-5)
    sigma = pg.covariance(state)
    contrast = np.hstack([-np.ones((3, 1)), np.eye(3)])
    assert contrast @ sigma @ contrast.T == pytest.approx(fit.cov_params(), rel=1e-4)


def test_the_pick_rule_on_three_systems_without_votes_by_hand():
    # theta = 0, Sigma = I / lambda (lambda = 1), order 0, 1, 2; both adjacent differences
    # have variance 2 and weight 1/2; w = 1/4. Pair (0, 1): c1'Su = 2, c2'Su = -1, gain =
    # (4 + 1) / 2, u'Su = 2: score = (5/8) / (1 + 1/2) = 5/12; (1, 2) the same; (0, 2):
    # c'Su = 1 and 1, gain 1, score (1/4) / (3/2) = 1/6.
    state = pg.new_state(3, prior_precision=1.0)
    scores = pg.pair_scores(state)
    assert scores[0, 1] == pytest.approx(5 / 12)
    assert scores[1, 2] == pytest.approx(5 / 12)
    assert scores[0, 2] == pytest.approx(1 / 6)
    proportional = pg.pair_probabilities(state, exploration=0.0, sharpness=1.0)
    assert proportional[np.triu_indices(3, 1)] == pytest.approx([5 / 12, 2 / 12, 5 / 12])
    # Sharpness 4 and a floor of 1/10: 0.9 * 5^4 / (2 * 5^4 + 2^4) + 0.1 / 3 for (0, 1).
    mixed = pg.pair_probabilities(state, exploration=0.1, sharpness=4.0)
    assert mixed[0, 1] == pytest.approx(0.9 * 625 / 1266 + 0.1 / 3)
    assert mixed[0, 2] == pytest.approx(0.9 * 16 / 1266 + 0.1 / 3)


def test_a_score_is_the_fall_of_the_weighted_variance_after_one_more_vote():
    rng = np.random.default_rng(6)
    theta = np.array([0.6, 0.5, -0.2, -0.8])
    state = pg.add_votes(pg.new_state(4), *random_votes(rng, theta, 400))
    sep = pg.separation(state)
    contrasts = np.zeros((3, 4))
    contrasts[np.arange(3), sep.order[:-1]] = 1.0
    contrasts[np.arange(3), sep.order[1:]] = -1.0
    weight = np.where(sep.separated, pg.RESOLVED_WEIGHT, 1.0) / (sep.sd**2 + sep.difference**2)
    p = 1.0 / (1.0 + np.exp(state.strengths[None, :] - state.strengths[:, None]))
    # The posterior precision L + lambda I, written out: L_ij = -N_ij p_ij (1 - p_ij).
    totals = state.wins + state.wins.T
    laplacian = -totals * p * (1 - p)
    laplacian[np.diag_indices(4)] = -laplacian.sum(axis=1)
    precision = laplacian + state.prior_precision * np.eye(4)
    before = np.linalg.inv(precision)
    scores = pg.pair_scores(state)
    for i, j in [(0, 1), (1, 2), (0, 3)]:
        u = np.zeros(4)
        u[i], u[j] = 1.0, -1.0
        after = np.linalg.inv(precision + p[i, j] * (1 - p[i, j]) * np.outer(u, u))
        fall = weight @ (
            np.diag(contrasts @ before @ contrasts.T) - np.diag(contrasts @ after @ contrasts.T)
        )
        assert scores[i, j] == pytest.approx(fall, rel=1e-8)


def test_two_systems_sixty_wins_to_forty_are_separated_at_95_but_not_99_percent():
    # Difference ln(1.5) = 0.405, variance 1 / (100 * 0.6 * 0.4) = 1/24: z = 1.986.
    state = pg.state_from_counts([[0, 60], [40, 0]], prior_precision=1e-9)
    at_95 = pg.separation(state, 0.95)
    assert at_95.z[0] == pytest.approx(np.log(1.5) * np.sqrt(24), rel=1e-6)
    assert at_95.answered
    assert not pg.separation(state, 0.99).answered
    assert list(at_95.order) == [0, 1]


def test_a_system_of_weight_zero_is_never_drawn():
    state = pg.new_state(4)
    probabilities = pg.pair_probabilities(state, [1.0, 0.0, 1.0, 2.0])
    assert probabilities[1, :].sum() == probabilities[:, 1].sum() == 0.0
    assert probabilities.sum() == pytest.approx(1.0)
    choice = pg.choose_pair(state, np.random.default_rng(0), [1.0, 0.0, 1.0, 2.0])
    assert 1 not in (choice.i, choice.j) and choice.i < choice.j


def test_the_owner_weights_multiply_the_exploration_floor():
    state = pg.new_state(3, prior_precision=1.0)
    probabilities = pg.pair_probabilities(state, [1.0, 1.0, 3.0], exploration=1.0)
    assert probabilities[np.triu_indices(3, 1)] == pytest.approx([1 / 7, 3 / 7, 3 / 7])


@pytest.mark.parametrize(
    ("winner", "loser", "message"),
    [(0, 0, "two different systems"), (0, 5, "numbered 0 to 2"), (-1, 1, "numbered 0 to 2")],
)
def test_a_vote_naming_a_wrong_system_is_refused(winner, loser, message):
    with pytest.raises(ValueError, match=message):
        pg.add_vote(pg.new_state(3), winner, loser)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="prior_precision"):
        pg.new_state(3, prior_precision=0.0)
    with pytest.raises(ValueError, match="level"):
        pg.separation(pg.new_state(3), level=1.0)
    with pytest.raises(ValueError, match="exploration"):
        pg.pair_probabilities(pg.new_state(3), exploration=1.5)
    with pytest.raises(ValueError, match="fewer than two"):
        pg.pair_probabilities(pg.new_state(3), [1.0, 0.0, 0.0])
