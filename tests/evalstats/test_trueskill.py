"""evalstats.trueskill against the trueskill package (0.4.5) and hand-made examples."""

import math
from pathlib import Path

import numpy as np
import pytest
import trueskill
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from evalstats import trueskill as ts

N_PLAYERS = 5


def random_matches(n_matches, n_players=N_PLAYERS, *, seed, draw_share=0.2, allow_draws=True):
    """Matches between random distinct players; the better index wins more often."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n_matches)
    b = (a + rng.integers(1, n_players, n_matches)) % n_players
    a_wins = rng.random(n_matches) < 1 / (1 + np.exp((a - b) * 0.4))
    outcome = np.where(a_wins, ts.A_WINS, ts.B_WINS)
    if allow_draws:
        outcome[rng.random(n_matches) < draw_share] = ts.DRAW
    return a, b, outcome


def package_env(env):
    """The trueskill package environment with the same constants and normal functions."""
    return trueskill.TrueSkill(
        mu=env.mu,
        sigma=env.sigma,
        beta=env.beta,
        tau=env.tau,
        draw_probability=env.draw_probability,
        backend="scipy" if env.backend == "scipy" else None,
    )


def package_pass(env, a, b, outcome, order, n_players=N_PLAYERS):
    """Reference: rate_1vs1 match by match, the winner first, like the Spot The Bot code.

    ``trueskill.rate_1vs1(r1, r2, drawn, env=env)`` is what the deprecated method
    ``env.rate_1vs1(r1, r2, drawn)`` forwards to (trueskill/deprecated.py).
    """
    reference = package_env(env)
    ratings = [reference.create_rating() for _ in range(n_players)]
    for m in order:
        i, j = a[m], b[m]
        if outcome[m] == ts.A_WINS:
            ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], env=reference)
        elif outcome[m] == ts.B_WINS:
            ratings[j], ratings[i] = trueskill.rate_1vs1(ratings[j], ratings[i], env=reference)
        else:
            ratings[i], ratings[j] = trueskill.rate_1vs1(
                ratings[i], ratings[j], drawn=True, env=reference
            )
    return np.array([r.mu for r in ratings]), np.array([r.sigma for r in ratings])


def test_reference_is_the_pypi_package():
    assert trueskill is not ts
    assert Path(trueskill.__file__).parent.parent.name == "site-packages"
    assert trueskill.__version__ == "0.4.5"
    assert callable(trueskill.TrueSkill().rate_1vs1)


# name -> (environment constants or None for the Spot The Bot defaults, data has draws)
ENVIRONMENTS = {
    "spot-the-bot": (None, True),
    "package-defaults": (
        {"mu": 25.0, "sigma": 25 / 3, "beta": 25 / 6, "tau": 25 / 300, "draw_probability": 0.1},
        True,
    ),
    "wmt": (
        {"mu": 0.0, "sigma": 0.5, "beta": 0.5 * 600 / 40, "tau": 0.0, "draw_probability": 0.25},
        True,
    ),
    "many-draws-small-beta": (
        {"mu": 0.0, "sigma": 0.5, "beta": 0.3, "tau": 0.01, "draw_probability": 0.6},
        True,
    ),
    "no-draws": (
        {"mu": 1.0, "sigma": 2.0, "beta": 1.0, "tau": 0.1, "draw_probability": 0.0},
        False,
    ),
}


@pytest.mark.parametrize("backend", ["scipy", "builtin"])
@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_single_pass_equals_package(name, backend):
    constants, has_draws = ENVIRONMENTS[name]
    a, b, outcome = random_matches(600, seed=len(name), allow_draws=has_draws)
    if constants is None:
        env = ts.TrueSkillEnv.from_matches(outcome, backend=backend)
    else:
        env = ts.TrueSkillEnv(backend=backend, **constants)

    rated = ts.rate_matches(a, b, outcome, n_players=N_PLAYERS, env=env)

    mu, sigma = package_pass(env, a, b, outcome, range(outcome.size))
    np.testing.assert_allclose(rated.mu, mu, rtol=0, atol=1e-9)
    np.testing.assert_allclose(rated.sigma, sigma, rtol=0, atol=1e-9)
    # the pass really moved the ratings, so the comparison is not between two priors
    assert np.ptp(rated.mu) > 1e-3


@settings(max_examples=25, deadline=None)
@given(
    n_matches=st.integers(1, 40),
    seed=st.integers(0, 2**16),
    beta=st.floats(0.05, 5.0),
    tau=st.floats(0.0, 0.2),
    draw_probability=st.floats(0.01, 0.9),
)
def test_random_tournaments_equal_package(n_matches, seed, beta, tau, draw_probability):
    a, b, outcome = random_matches(n_matches, seed=seed, draw_share=0.3)
    env = ts.TrueSkillEnv(beta=beta, tau=tau, draw_probability=draw_probability)
    rated = ts.rate_matches(a, b, outcome, n_players=N_PLAYERS, env=env)
    mu, sigma = package_pass(env, a, b, outcome, range(n_matches))
    np.testing.assert_allclose(rated.mu, mu, rtol=0, atol=1e-9)
    np.testing.assert_allclose(rated.sigma, sigma, rtol=0, atol=1e-9)


def test_spot_the_bot_environment_from_matches():
    outcome = np.array([ts.A_WINS] * 6 + [ts.DRAW] * 3 + [ts.B_WINS])
    env = ts.TrueSkillEnv.from_matches(outcome)
    assert (env.mu, env.sigma, env.tau) == (0.0, 0.5, 0.0)
    assert env.beta == pytest.approx(0.025 * 0.5**2 * 10)
    assert env.draw_probability == pytest.approx(0.3)
    assert ts.TrueSkillEnv.from_matches(outcome, beta=2.0, draw_probability=0.1).beta == 2.0


@pytest.mark.parametrize("backend", ["scipy", "builtin"])
@pytest.mark.parametrize("draw_probability", [0.0, 0.05, 0.25, 0.9])
def test_draw_margin_equals_package(backend, draw_probability):
    env = ts.TrueSkillEnv(beta=1.7, draw_probability=draw_probability, backend=backend)
    expected = trueskill.calc_draw_margin(draw_probability, 2, env=package_env(env))
    assert env.draw_margin == pytest.approx(expected, rel=1e-13, abs=1e-15)


def package_corrections(reference, t, eps, drawn):
    if drawn:
        return reference.v_draw(t, eps), reference.w_draw(t, eps)
    return reference.v_win(t, eps), reference.w_win(t, eps)


@pytest.mark.parametrize("backend", ["scipy", "builtin"])
@pytest.mark.parametrize("drawn", [False, True])
def test_corrections_equal_package_on_a_grid(backend, drawn):
    # the range where the package's own formulas keep 1e-12 (beyond, exp(-x^2/2) and
    # cancellations cost it digits, see the tail test)
    reference = package_env(ts.TrueSkillEnv(beta=1.0, draw_probability=0.1, backend=backend))
    t = np.repeat(np.linspace(-6, 6, 49), 4)
    eps = np.tile([0.0 if not drawn else 0.01, 0.3, 1.0, 1.5], 49)
    v, w = ts.truncation_corrections(t, eps, drawn, backend)
    expected = np.array(
        [package_corrections(reference, *pair, drawn) for pair in zip(t, eps, strict=True)]
    )
    np.testing.assert_allclose(v, expected[:, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w, expected[:, 1], rtol=0, atol=1e-12)


# Random points stay within |t| <= 4: near |t| = 6 with a narrow draw margin the package's
# draw formula cancels digits (seen: 1.4e-12 at t = 5.85, eps = 0.016); the tail test
# checks that region against quadrature instead.
@settings(max_examples=200, deadline=None)
@given(
    t=st.floats(-4, 4),
    eps=st.floats(0.01, 2.0),
    drawn=st.booleans(),
    backend=st.sampled_from(["scipy", "builtin"]),
)
def test_corrections_equal_package_property(t, eps, drawn, backend):
    reference = package_env(ts.TrueSkillEnv(beta=1.0, draw_probability=0.1, backend=backend))
    v, w = ts.truncation_corrections(t, eps, drawn, backend)
    expected_v, expected_w = package_corrections(reference, t, eps, drawn)
    assert v == pytest.approx(expected_v, rel=1e-12, abs=1e-12)
    assert w == pytest.approx(expected_w, rel=0, abs=1e-12)


def truncated_normal_moments(lower, upper, anchor):
    """Mean and variance of N(0, 1) truncated to [lower, upper] by quadrature around ``anchor``
    (the bound nearest to 0), with the density rescaled so that nothing underflows."""

    # y = z - anchor if anchor is the lower bound, anchor - z if it is the upper bound
    towards_zero = -anchor if anchor == lower else anchor

    def moment(k):
        def integrand(y):
            return y**k * math.exp(towards_zero * y - y * y / 2)

        width = (upper - lower) if math.isfinite(upper - lower) else 60 / (abs(anchor) + 1)
        return integrate.quad(integrand, 0, width, epsabs=0, epsrel=1e-13, limit=200)[0]

    m0, m1, m2 = moment(0), moment(1), moment(2)
    spread = m2 / m0 - (m1 / m0) ** 2
    offset = m1 / m0
    mean = anchor + offset if anchor == lower else anchor - offset
    return mean, spread


@pytest.mark.parametrize("x", [-5.0, -10.0, -40.0, -100.0, -1000.0])
def test_win_corrections_in_the_far_tail(x):
    # v_win(x) = E[Z | Z > -x] and w_win(x) = 1 - Var[Z | Z > -x]
    v, w = ts.truncation_corrections(x, 0.0, False)
    mean, spread = truncated_normal_moments(-x, math.inf, -x)
    assert v == pytest.approx(mean, rel=1e-12)
    assert 0 < w < 1
    # 1 - w is the variance itself: the continued fraction keeps it to full precision
    assert 1 - w == pytest.approx(spread, rel=1e-9)


@pytest.mark.parametrize(("t", "eps"), [(8.0, 0.05), (30.0, 1.0), (-40.0, 2.0), (100.0, 0.5)])
def test_draw_corrections_in_the_far_tail(t, eps):
    # for t > 0, v_draw = E[Z | -eps - t < Z < eps - t] and w_draw = 1 - Var[...]
    v, w = ts.truncation_corrections(t, eps, True)
    s = abs(t)
    mean, spread = truncated_normal_moments(-eps - s, eps - s, eps - s)
    assert v == pytest.approx(math.copysign(1, t) * mean, rel=1e-12)
    assert w == pytest.approx(1 - spread, rel=0, abs=1e-12)
    assert 0 < w < 1


def test_package_breaks_down_in_the_tail_where_we_do_not():
    reference = trueskill.TrueSkill(backend="scipy")
    with pytest.raises(FloatingPointError):
        reference.w_win(-40.0, 0.0)
    with pytest.raises(FloatingPointError):
        ts.truncation_corrections(-40.0, 0.0, False, "builtin")
    v, w = ts.truncation_corrections(-40.0, 0.0, False)
    assert np.isfinite(v) and 0 < w < 1


def test_replicate_rows_are_independent_passes():
    a, b, outcome = random_matches(200, seed=5)
    env = ts.TrueSkillEnv.from_matches(outcome)
    indices = ts.bootstrap_match_indices(outcome.size, 3, seed=1)
    together = ts.rate_replicates(a, b, outcome, indices, n_players=N_PLAYERS, env=env)
    for row in range(3):
        alone = ts.rate_replicates(a, b, outcome, indices[row : row + 1], env=env)
        np.testing.assert_array_equal(together.mu[row], alone.mu[0])
        np.testing.assert_array_equal(together.sigma[row], alone.sigma[0])


@pytest.mark.parametrize("resample", [True, False])
def test_each_bootstrap_replicate_equals_a_package_pass(resample):
    a, b, outcome = random_matches(300, seed=11)
    result = ts.trueskill_bootstrap(
        a, b, outcome, n_players=N_PLAYERS, n_replicates=4, seed=3, resample=resample
    )
    indices = ts.bootstrap_match_indices(outcome.size, 4, seed=3, resample=resample)
    for row, order in enumerate(indices):
        mu, sigma = package_pass(result.env, a, b, outcome, order)
        np.testing.assert_allclose(result.mu[row], mu, rtol=0, atol=1e-9)
        np.testing.assert_allclose(result.sigma[row], sigma, rtol=0, atol=1e-9)
        np.testing.assert_array_equal(result.ranks[row], ts.ranks_from_scores(mu))
    # the replicates differ from each other, so each really followed its own order
    assert len({tuple(np.round(m, 12)) for m in result.mu}) == 4


def test_the_released_code_setting_equals_the_package_global_environment():
    # The Spot The Bot code creates its ratings at mu=0, sigma=0.5 and then calls the
    # module-level rate_1vs1 without env=: the package's global environment rates them.
    a, b, outcome = random_matches(200, seed=5)
    order = ts.bootstrap_match_indices(outcome.size, 1, seed=2, resample=False)[0]
    trueskill.setup()  # the package's global defaults, whatever another test set
    ratings = [trueskill.Rating(mu=0.0, sigma=0.5) for _ in range(N_PLAYERS)]
    for m in order:
        i, j = a[m], b[m]
        if outcome[m] == ts.B_WINS:
            ratings[j], ratings[i] = trueskill.rate_1vs1(ratings[j], ratings[i])
        else:
            drawn = bool(outcome[m] == ts.DRAW)
            ratings[i], ratings[j] = trueskill.rate_1vs1(ratings[i], ratings[j], drawn=drawn)

    rated = ts.rate_replicates(
        a, b, outcome, order[None, :], n_players=N_PLAYERS, env=ts.TrueSkillEnv.as_released()
    )

    np.testing.assert_allclose(rated.mu[0], [r.mu for r in ratings], rtol=0, atol=1e-12)
    np.testing.assert_allclose(rated.sigma[0], [r.sigma for r in ratings], rtol=0, atol=1e-12)


def test_bootstrap_match_indices():
    resampled = ts.bootstrap_match_indices(50, 7, seed=2)
    assert resampled.shape == (7, 50)
    assert resampled.min() >= 0 and resampled.max() < 50
    assert any(len(set(row)) < 50 for row in resampled)  # with replacement
    np.testing.assert_array_equal(resampled, ts.bootstrap_match_indices(50, 7, seed=2))
    shuffled = ts.bootstrap_match_indices(50, 7, seed=2, resample=False)
    for row in shuffled:
        np.testing.assert_array_equal(np.sort(row), np.arange(50))


def test_ranks_from_scores_best_is_one_and_ties_go_to_lower_index():
    scores = np.array([[0.1, 0.5, -1.0, 0.5], [3.0, 2.0, 1.0, 0.0]])
    np.testing.assert_array_equal(ts.ranks_from_scores(scores), [[3, 1, 4, 2], [1, 2, 3, 4]])


def test_rank_ranges_drop_the_wmt_share_at_each_end():
    # 40 replicates, coverage 0.95: WMT drops ceil((40 - 38) / 2) = 1 rank at each end
    ranks = np.column_stack(
        [
            np.r_[1, [2] * 38, 4],  # one outlier each side: range (2, 2)
            np.r_[[1] * 20, [3] * 20],  # split: (1, 3)
        ]
    )
    lower, upper = ts.rank_ranges(ranks)
    np.testing.assert_array_equal(lower, [2, 1])
    np.testing.assert_array_equal(upper, [2, 3])
    # 1000 replicates: the 26th smallest and 26th largest (the 2.5th and 97.5th percentile)
    column = np.repeat([1, 2, 3, 4], [25, 475, 475, 25])
    lower, upper = ts.rank_ranges(column[:, np.newaxis])
    assert (lower[0], upper[0]) == (2, 3)
    lower, upper = ts.rank_ranges(column[:, np.newaxis], coverage=1.0)
    assert (lower[0], upper[0]) == (1, 4)


@pytest.mark.parametrize(
    ("lower", "upper", "expected"),
    [
        ([1, 2, 3], [1, 2, 3], [1, 2, 3]),  # disjoint
        ([1, 1, 3], [2, 2, 3], [1, 1, 2]),  # overlapping pair, then a separate system
        ([1, 2, 3, 4], [2, 3, 4, 4], [1, 1, 1, 1]),  # chain: 1-2, 2-3, 3-4 overlap
        ([1, 2, 2, 4], [1, 4, 2, 4], [1, 2, 2, 2]),  # a wide range bridges non-neighbours
        ([1, 1, 1], [3, 3, 3], [1, 1, 1]),  # all the same
    ],
)
def test_clusters_from_hand_made_rank_ranges(lower, upper, expected):
    clusters = ts.clusters_from_rank_ranges(lower, upper, order=np.arange(len(lower)))
    np.testing.assert_array_equal(clusters, expected)


def test_clusters_follow_the_given_order():
    # the best system is listed last; the order puts it first
    lower, upper = np.array([3, 2, 1]), np.array([3, 2, 1])
    np.testing.assert_array_equal(ts.clusters_from_rank_ranges(lower, upper, [2, 1, 0]), [3, 2, 1])
    np.testing.assert_array_equal(ts.clusters_from_rank_ranges(lower, upper), [3, 2, 1])


def overlap_components(lower, upper):
    """Connected components of the 'ranges overlap' graph, like Spot The Bot's create_clusters."""
    n = len(lower)
    component = list(range(n))

    def root(i):
        while component[i] != i:
            i = component[i]
        return i

    for i in range(n):
        for j in range(i + 1, n):
            if not (upper[i] < lower[j] or upper[j] < lower[i]):
                component[root(i)] = root(j)
    return [root(i) for i in range(n)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(0, 3)), min_size=1, max_size=8))
def test_clusters_are_the_overlap_components(ranges):
    lower = np.array([start for start, _ in ranges])
    upper = lower + np.array([length for _, length in ranges])
    clusters = ts.clusters_from_rank_ranges(lower, upper)
    components = overlap_components(lower, upper)
    for i in range(len(ranges)):
        for j in range(len(ranges)):
            assert (clusters[i] == clusters[j]) == (components[i] == components[j])
    # cluster numbers grow with the ranges: every range of cluster k starts after cluster k-1
    for i in range(len(ranges)):
        for j in range(len(ranges)):
            if clusters[i] < clusters[j]:
                assert upper[i] < lower[j]


def simulate_tournament(strengths, n_per_pair, *, seed, draw_share=0.15):
    """Pairwise judgments with P(a beats b | no draw) = logistic(strength_a - strength_b)."""
    rng = np.random.default_rng(seed)
    pairs = [(i, j) for i in range(len(strengths)) for j in range(i + 1, len(strengths))]
    a = np.repeat([i for i, _ in pairs], n_per_pair)
    b = np.repeat([j for _, j in pairs], n_per_pair)
    strengths = np.asarray(strengths, dtype=float)
    p_a = 1 / (1 + np.exp(strengths[b] - strengths[a]))
    outcome = np.where(rng.random(a.size) < p_a, ts.A_WINS, ts.B_WINS)
    outcome[rng.random(a.size) < draw_share] = ts.DRAW
    shuffled = rng.permutation(a.size)
    return a[shuffled], b[shuffled], outcome[shuffled]


def test_separated_systems_are_recovered_in_separate_clusters():
    # system 3 is the best, then 0, 4, 1, 2
    strengths = [1.0, -1.0, -2.0, 2.0, 0.0]
    a, b, outcome = simulate_tournament(strengths, 120, seed=7)
    result = ts.trueskill_bootstrap(a, b, outcome, n_replicates=300, seed=1)
    np.testing.assert_array_equal(result.order, [3, 0, 4, 1, 2])
    assert result.clusters == ((3,), (0,), (4,), (1,), (2,))
    np.testing.assert_array_equal(result.cluster, [2, 4, 5, 1, 3])
    np.testing.assert_array_equal(result.rank_lower, result.rank_upper)
    assert result.mu.shape == result.ranks.shape == (300, 5)


def test_equal_systems_share_one_cluster():
    a, b, outcome = simulate_tournament([0.0, 0.0, 0.0, 0.0], 60, seed=8)
    result = ts.trueskill_bootstrap(a, b, outcome, n_replicates=300, seed=1)
    assert result.clusters == (tuple(int(p) for p in result.order),)
    assert np.all(result.rank_upper - result.rank_lower >= 2)


def test_conservative_ranking_uses_mu_minus_k_sigma():
    a, b, outcome = random_matches(150, seed=4)
    result = ts.trueskill_bootstrap(a, b, outcome, n_replicates=20, seed=0, conservative_k=3.0)
    expected = ts.ranks_from_scores(result.mu - 3.0 * result.sigma)
    np.testing.assert_array_equal(result.ranks, expected)


def test_results_are_read_only_and_seeded():
    a, b, outcome = random_matches(100, seed=6)
    first = ts.trueskill_bootstrap(a, b, outcome, n_replicates=10, seed=9)
    again = ts.trueskill_bootstrap(a, b, outcome, n_replicates=10, seed=9)
    np.testing.assert_array_equal(first.mu, again.mu)
    with pytest.raises(ValueError):
        first.mu[0, 0] = 1.0


@pytest.mark.parametrize(
    ("a", "b", "outcome"),
    [
        ([0, 1], [1, 1], [1, 0]),  # a system against itself
        ([0, 1], [1, 2], [1, 2]),  # unknown outcome code
        ([0, 1], [1], [1, 0]),  # lengths differ
        ([0, -1], [1, 2], [1, 0]),  # negative index
    ],
)
def test_invalid_matches_are_rejected(a, b, outcome):
    with pytest.raises(ValueError):
        ts.rate_matches(a, b, outcome, env=ts.TrueSkillEnv(beta=1.0, draw_probability=0.1))


def test_invalid_environments_are_rejected():
    with pytest.raises(ValueError):
        ts.TrueSkillEnv(beta=1.0, draw_probability=1.0)
    with pytest.raises(ValueError):
        ts.TrueSkillEnv(beta=0.0, draw_probability=0.1)
    with pytest.raises(ValueError):
        ts.TrueSkillEnv.from_matches([ts.DRAW, ts.DRAW])
    with pytest.raises(ValueError):
        ts.rate_matches([0], [3], [1], n_players=2)


def test_int32_bootstrap_indices_equal_the_int64_ones():
    wide = ts.bootstrap_match_indices(777, 30, seed=5)
    narrow = ts.bootstrap_match_indices(777, 30, seed=5, dtype=np.int32)
    assert narrow.dtype == np.int32
    np.testing.assert_array_equal(narrow, wide)


def test_rating_several_match_sets_together_equals_rating_each_alone():
    rng = np.random.default_rng(8)
    sets = []
    for n_matches, n_players, n_rows in ((120, 4, 7), (45, 3, 5), (200, 5, 3)):
        a = rng.integers(0, n_players, n_matches)
        b = (a + rng.integers(1, n_players, n_matches)) % n_players
        outcome = rng.choice([ts.A_WINS, ts.DRAW, ts.B_WINS], n_matches)
        env = ts.TrueSkillEnv.from_matches(outcome)
        indices = ts.bootstrap_match_indices(n_matches, n_rows, seed=rng)
        sets.append((a, b, outcome, indices, n_players, env))
    together = ts.rate_replicate_sets(sets)
    for (a, b, outcome, indices, n_players, env), rated in zip(sets, together, strict=True):
        alone = ts.rate_replicates(a, b, outcome, indices, n_players=n_players, env=env)
        np.testing.assert_array_equal(rated.mu, alone.mu)
        np.testing.assert_array_equal(rated.sigma, alone.sigma)
        assert rated.env is env


def test_rating_match_sets_with_different_tau_is_refused():
    outcome = np.array([ts.A_WINS, ts.DRAW])
    a, b, indices = np.array([0, 1]), np.array([1, 0]), np.zeros((2, 2), dtype=int)
    first = ts.TrueSkillEnv.from_matches(outcome)
    second = ts.TrueSkillEnv.from_matches(outcome, tau=0.1)
    with pytest.raises(ValueError, match="tau and backend"):
        ts.rate_replicate_sets(
            [(a, b, outcome, indices, 2, first), (a, b, outcome, indices, 2, second)]
        )
