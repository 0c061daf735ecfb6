import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import approx_fprime

from evalstats.bradley_terry import (
    DEFAULT_PSEUDO_TIES,
    bootstrap_bradley_terry,
    bradley_terry_from_judgments,
    bradley_terry_log_likelihood,
    fit_bradley_terry,
    multinomial_rounds,
    ranks_from_intervals,
    to_elo_scale,
)
from evalstats.pairwise import A_WINS, B_WINS, TIE, win_count_matrices

# --- independent references ------------------------------------------------------------------


def simulate_judgments(theta, n_judgments, seed, tie_share=0.0):
    """Judgments between random distinct pairs from a Bradley-Terry model with strengths theta."""
    rng = np.random.default_rng(seed)
    n = len(theta)
    system_a = rng.integers(0, n, n_judgments)
    system_b = (system_a + rng.integers(1, n, n_judgments)) % n
    p_a = 1.0 / (1.0 + np.exp(-(theta[system_a] - theta[system_b])))
    u = rng.random(n_judgments)
    decisive = rng.random(n_judgments) >= tie_share
    outcome = np.where(decisive, np.where(u < p_a, A_WINS, B_WINS), TIE)
    return system_a, system_b, outcome


def glm_strengths(wins, ties=None):
    """Bradley-Terry as a binomial GLM (logit link) on x_i - x_j, system 0 as reference."""
    effective = np.asarray(wins, float) + (0 if ties is None else np.asarray(ties, float) / 2)
    n = effective.shape[0]
    rows, endog = [], []
    for i in range(n):
        for j in range(i + 1, n):
            if effective[i, j] + effective[j, i] > 0:
                x = np.zeros(n)
                x[i], x[j] = 1.0, -1.0
                rows.append(x[1:])
                endog.append([effective[i, j], effective[j, i]])
    model = sm.GLM(np.array(endog), np.array(rows), family=sm.families.Binomial())
    with np.errstate(divide="ignore", invalid="ignore"):  # Pearson scale when df_resid == 0
        fit = model.fit(tol=1e-13)
    theta = np.concatenate([[0.0], fit.params])
    return theta - theta.mean(), np.concatenate([[0.0], fit.bse])


def loop_log_likelihood(theta, effective):
    total = 0.0
    for i in range(len(theta)):
        for j in range(len(theta)):
            if i != j and effective[i, j] > 0:
                total += effective[i, j] * np.log(1.0 / (1.0 + np.exp(theta[j] - theta[i])))
    return total


def mm_strengths(effective, iterations=5000):
    """Hunter (2004) MM iteration: pi_i <- w_i / sum_j n_ij / (pi_i + pi_j)."""
    totals = effective + effective.T
    won = effective.sum(axis=1)
    pi = np.ones(len(won))
    for _ in range(iterations):
        pi = won / (totals / (pi[:, None] + pi[None, :])).sum(axis=1)
        pi /= np.exp(np.log(pi).mean())
    return np.log(pi)


THETA = np.array([-1.0, -0.4, 0.0, 0.3, 1.1])
WINS, TIES = win_count_matrices(*simulate_judgments(THETA, 3000, seed=7, tie_share=0.2), 5)


# --- the ML fit ------------------------------------------------------------------------------


def test_fit_matches_statsmodels_glm_without_ties():
    fit = fit_bradley_terry(WINS)
    expected, _ = glm_strengths(WINS)
    np.testing.assert_allclose(fit.strengths, expected, atol=1e-6)
    assert fit.converged and fit.warnings == () and fit.pseudo_ties == 0.0


def test_fit_matches_statsmodels_glm_with_ties_as_half_wins():
    fit = fit_bradley_terry(WINS, TIES)
    expected, _ = glm_strengths(WINS, TIES)
    np.testing.assert_allclose(fit.strengths, expected, atol=1e-6)
    np.testing.assert_allclose(fit_bradley_terry(WINS + TIES / 2).strengths, fit.strengths)


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.floats(-2, 2), min_size=2, max_size=6),
    st.integers(200, 1500),
    st.integers(0, 2**32 - 1),
)
def test_fit_matches_glm_and_mm_on_random_data(theta, n_judgments, seed):
    wins, ties = win_count_matrices(
        *simulate_judgments(np.array(theta), n_judgments, seed, tie_share=0.1), len(theta)
    )
    fit = fit_bradley_terry(wins, ties)
    if fit.pseudo_ties:  # an unbeaten system: no ML estimate to compare with
        return
    expected, _ = glm_strengths(wins, ties)
    np.testing.assert_allclose(fit.strengths, expected, atol=1e-6)
    np.testing.assert_allclose(fit.strengths, mm_strengths(wins + ties / 2), atol=1e-6)


def test_gradient_of_the_log_likelihood_is_zero_at_the_fit():
    fit = fit_bradley_terry(WINS, TIES)
    effective = WINS + TIES / 2

    def objective(theta):
        return loop_log_likelihood(theta, effective)

    gradient = approx_fprime(fit.strengths, objective, 1e-6)
    assert np.abs(gradient).max() < 1e-3  # finite differences of a sum over ~3000 judgments
    # The analytic gradient, written independently: wins minus expected wins.
    p = 1.0 / (1.0 + np.exp(fit.strengths[None, :] - fit.strengths[:, None]))
    analytic = effective.sum(1) - ((effective + effective.T) * p).sum(1)
    assert np.abs(analytic).max() < 1e-8
    assert fit.log_likelihood == pytest.approx(objective(fit.strengths), rel=1e-12)
    for direction in np.eye(5):
        assert objective(fit.strengths + 0.01 * direction) < fit.log_likelihood


def test_log_likelihood_matches_a_loop():
    theta = np.array([0.3, -0.2, 0.1, 0.0, -0.2])
    expected = loop_log_likelihood(theta, WINS + TIES / 2)
    assert bradley_terry_log_likelihood(theta, WINS, TIES) == pytest.approx(expected, rel=1e-12)


def test_known_strengths_are_recovered_from_simulated_data():
    theta = np.array([-1.2, -0.7, -0.3, 0.0, 0.2, 0.5, 0.9, 1.4])
    theta -= theta.mean()
    wins, ties = win_count_matrices(*simulate_judgments(theta, 40_000, seed=3), 8)
    fit = fit_bradley_terry(wins, ties)
    _, standard_errors = glm_strengths(wins, ties)
    assert np.abs(fit.strengths - theta).max() < 0.06
    # Relative to system 0 (the GLM reference), within 4 standard errors.
    error = (fit.strengths - fit.strengths[0]) - (theta - theta[0])
    assert np.all(np.abs(error[1:]) < 4 * standard_errors[1:])
    assert fit.strengths.sum() == pytest.approx(0.0, abs=1e-12)


def test_hand_worked_two_systems():
    # 3 wins to 1: theta_0 - theta_1 = log 3, so theta = (log 3 / 2, -log 3 / 2).
    fit = fit_bradley_terry([[0, 3], [1, 0]])
    np.testing.assert_allclose(fit.strengths, [np.log(3) / 2, -np.log(3) / 2], atol=1e-12)
    assert fit.ratings[0] - fit.ratings[1] == pytest.approx(400 * np.log10(3), abs=1e-9)


# --- scales and ranks ------------------------------------------------------------------------


def test_elo_scale_is_anchored_and_matches_win_probabilities():
    ratings = to_elo_scale([np.log(10), 0.0, -np.log(10)])
    np.testing.assert_allclose(ratings, [1400, 1000, 600])
    theta = np.array([0.7, -0.1, -0.6])
    ratings = to_elo_scale(theta)
    p_model = 1 / (1 + np.exp(-(theta[0] - theta[2])))
    p_elo = 1 / (1 + 10 ** ((ratings[2] - ratings[0]) / 400))
    assert p_model == pytest.approx(p_elo, rel=1e-12)
    assert ratings.mean() == pytest.approx(1000)


def test_ranks_count_systems_whose_lower_bound_beats_this_upper_bound():
    low = [1100, 1050, 980, 900]
    high = [1200, 1120, 1060, 990]
    # System 1's upper 1120 < system 0's lower? No (1100): rank 1. System 2: 1060 < 1100 -> 2.
    # System 3: 990 < 1100, 1050 (not 980) -> 3.
    np.testing.assert_array_equal(ranks_from_intervals(low, high), [1, 1, 2, 3])


# --- bootstrap -------------------------------------------------------------------------------


def test_bootstrap_is_reproducible_with_a_seed():
    first = bootstrap_bradley_terry(WINS, TIES, n_bootstrap=200, seed=11)
    second = bootstrap_bradley_terry(WINS, TIES, n_bootstrap=200, seed=11)
    other = bootstrap_bradley_terry(WINS, TIES, n_bootstrap=200, seed=12)
    np.testing.assert_array_equal(first.bootstrap_ratings, second.bootstrap_ratings)
    assert not np.array_equal(first.bootstrap_ratings, other.bootstrap_ratings)


def test_bootstrap_spread_matches_the_glm_standard_errors():
    # Without ties: with them the binomial GLM overstates the variance (a tie is a certain
    # half win, not a coin flip) and the bootstrap, rightly, comes out narrower.
    result = bootstrap_bradley_terry(WINS, n_bootstrap=2000, seed=5)
    _, standard_errors = glm_strengths(WINS)
    replicate_theta = (result.bootstrap_ratings - 1000) * np.log(10) / 400
    relative_to_reference = replicate_theta[:, 1:] - replicate_theta[:, :1]
    np.testing.assert_allclose(relative_to_reference.std(axis=0), standard_errors[1:], rtol=0.12)
    assert np.all(result.confidence_interval.low < result.ratings)
    assert np.all(result.ratings < result.confidence_interval.high)
    np.testing.assert_array_equal(
        result.ranks,
        ranks_from_intervals(result.confidence_interval.low, result.confidence_interval.high),
    )
    assert result.warnings == ()


def test_bootstrap_matches_resampling_judgments_directly():
    # Reference: resample the flat judgments with replacement and refit with statsmodels.
    judgments = simulate_judgments(THETA[:3], 600, seed=21, tie_share=0.2)
    rng = np.random.default_rng(0)
    glm_ratings = []
    for _ in range(150):
        pick = rng.integers(0, 600, 600)
        wins, ties = win_count_matrices(*(column[pick] for column in judgments), 3)
        glm_ratings.append(to_elo_scale(glm_strengths(wins, ties)[0]))
    ours = bradley_terry_from_judgments(*judgments, n_systems=3, n_bootstrap=1000, seed=1)
    np.testing.assert_allclose(
        ours.bootstrap_ratings.std(axis=0), np.std(glm_ratings, axis=0), rtol=0.2
    )
    np.testing.assert_allclose(
        ours.bootstrap_ratings.mean(axis=0), np.mean(glm_ratings, axis=0), atol=8
    )


def test_every_bootstrap_replicate_is_the_glm_fit_of_its_resample():
    # Redraw the documented resample: multinomial over win cells (row-major), then tie cells
    # (i < j), in chunks of 25 rounds, chunk k from child k of SeedSequence(seed); refit each
    # replicate with statsmodels. 60 rounds: two whole chunks and a short one.
    result = bootstrap_bradley_terry(WINS, TIES, n_bootstrap=60, seed=9)
    win_rows, win_cols = np.nonzero(WINS)
    tie_rows, tie_cols = np.nonzero(np.triu(TIES, k=1))
    counts = np.concatenate([WINS[win_rows, win_cols], TIES[tie_rows, tie_cols]])
    streams = np.random.SeedSequence(9).spawn(3)
    draws = np.concatenate(
        [
            np.random.default_rng(stream).multinomial(counts.sum(), counts / counts.sum(), size)
            for stream, size in zip(streams, (25, 25, 10), strict=True)
        ]
    )
    for replicate, draw in zip(result.bootstrap_ratings, draws, strict=True):
        wins = np.zeros((5, 5))
        ties = np.zeros((5, 5))
        wins[win_rows, win_cols] = draw[: win_rows.size]
        ties[tie_rows, tie_cols] = ties[tie_cols, tie_rows] = draw[win_rows.size :]
        expected = to_elo_scale(glm_strengths(wins, ties)[0])
        np.testing.assert_allclose(replicate, expected, atol=1e-6)


def test_well_separated_systems_get_distinct_ranks():
    theta = np.array([-2.0, -0.7, 0.6, 2.0])
    judgments = simulate_judgments(theta, 4000, seed=2)
    result = bradley_terry_from_judgments(*judgments, n_systems=4, n_bootstrap=300, seed=0)
    np.testing.assert_array_equal(result.ranks, [4, 3, 2, 1])


def test_bootstrap_needs_integer_counts():
    with pytest.raises(ValueError, match="integer"):
        bootstrap_bradley_terry([[0, 1.5], [1, 0]], n_bootstrap=10)


# --- degenerate data -------------------------------------------------------------------------


def test_unbeaten_system_gets_finite_top_strength_and_a_warning():
    wins = WINS.copy()
    wins[:, 4] = 0  # nobody ever beats system 4
    fit = fit_bradley_terry(wins, labels=["a", "b", "c", "d", "e"])
    assert np.all(np.isfinite(fit.strengths))
    assert np.argmax(fit.strengths) == 4
    assert fit.pseudo_ties == DEFAULT_PSEUDO_TIES
    assert any("unbeaten" in message and "e" in message for message in fit.warnings)
    assert any("virtual tie" in message for message in fit.warnings)
    # The fit is then the ML fit of the data plus the documented pseudo-ties.
    prior = DEFAULT_PSEUDO_TIES / 2 * (1 - np.eye(5))
    np.testing.assert_allclose(fit.strengths, glm_strengths(wins + prior)[0], atol=1e-6)


def test_winless_system_gets_finite_bottom_strength_and_a_warning():
    wins = WINS.copy()
    wins[0, :] = 0
    fit = fit_bradley_terry(wins)
    assert np.all(np.isfinite(fit.strengths))
    assert np.argmin(fit.strengths) == 0
    assert any("winless" in message and "system 0" in message for message in fit.warnings)


def test_disconnected_comparison_graph_is_finite_and_flagged():
    wins = np.array([[0, 5, 0, 0], [3, 0, 0, 0], [0, 0, 0, 2], [0, 0, 6, 0]])
    fit = fit_bradley_terry(wins)
    assert np.all(np.isfinite(fit.strengths))
    assert any("2 disconnected groups" in message for message in fit.warnings)
    assert fit.component[0] == fit.component[1] != fit.component[2] == fit.component[3]
    assert fit.strengths[0] > fit.strengths[1] and fit.strengths[3] > fit.strengths[2]
    result = bootstrap_bradley_terry(wins, n_bootstrap=100, seed=0)
    assert np.all(np.isfinite(result.bootstrap_ratings))
    assert result.warnings[: len(fit.warnings)] == fit.warnings


def test_group_that_never_loses_to_the_rest_is_flagged():
    # 0 and 1 beat each other, 2 and 3 beat each other, and 0/1 always beat 2/3.
    wins = np.array([[0, 4, 3, 2], [2, 0, 1, 3], [0, 0, 0, 5], [0, 0, 2, 0]])
    fit = fit_bradley_terry(wins)
    assert np.all(np.isfinite(fit.strengths))
    assert any("not strongly connected" in message for message in fit.warnings)


def test_system_without_comparisons_is_flagged():
    wins = np.array([[0, 4, 0], [2, 0, 0], [0, 0, 0]])
    fit = fit_bradley_terry(wins)
    assert any("no comparisons for system 2" in message for message in fit.warnings)
    assert np.all(np.isfinite(fit.strengths))


def test_zero_pseudo_ties_refuses_a_missing_ml_estimate():
    with pytest.raises(ValueError, match="unbeaten"):
        fit_bradley_terry([[0, 3], [0, 0]], pseudo_ties=0)


def test_bootstrap_flags_replicates_without_an_ml_estimate():
    # System 2 lost exactly once: many resamples leave it unbeaten.
    wins = np.array([[0, 20, 0], [15, 0, 1], [12, 14, 0]])
    result = bootstrap_bradley_terry(wins, n_bootstrap=300, seed=4)
    assert result.fit.warnings == ()
    assert np.all(np.isfinite(result.bootstrap_ratings))
    assert any("bootstrap replicates had no finite ML estimate" in m for m in result.warnings)


def test_invalid_inputs_are_rejected():
    with pytest.raises(ValueError, match="symmetric"):
        fit_bradley_terry([[0, 1], [1, 0]], ties=[[0, 1], [0, 0]])
    with pytest.raises(ValueError, match="square"):
        fit_bradley_terry([[0, 1, 2]])
    with pytest.raises(ValueError, match="non-negative"):
        fit_bradley_terry([[0, -1], [1, 0]])


def test_resampled_rounds_do_not_depend_on_the_number_of_cores(monkeypatch):
    probabilities = np.array([0.5, 0.3, 0.2])
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    one_core = multinomial_rounds(1000, probabilities, 70, seed=3)
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    four_cores = multinomial_rounds(1000, probabilities, 70, seed=3)
    np.testing.assert_array_equal(one_core, four_cores)


def test_resampled_rounds_each_draw_the_whole_total():
    rounds = multinomial_rounds(1000, np.array([0.5, 0.3, 0.2]), 70, seed=3)
    assert rounds.shape == (70, 3)
    np.testing.assert_array_equal(rounds.sum(axis=1), np.full(70, 1000))
