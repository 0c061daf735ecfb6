"""evalstats.match_waves, and the TrueSkill passes run on its schedule."""

import math

import numpy as np
import pytest

from evalstats import match_waves as mw
from evalstats import trueskill as ts


def random_block(n_positions, n_rows, n_players, *, seed):
    """(positions, rows) slots of random distinct pairs, row r owning slots r * n_players + i."""
    rng = np.random.default_rng(seed)
    first = rng.integers(0, n_players, (n_positions, n_rows))
    second = (first + rng.integers(1, n_players, (n_positions, n_rows))) % n_players
    base = np.arange(n_rows) * n_players
    drawn = rng.random((n_positions, n_rows)) < 0.3
    return first + base, second + base, drawn


@pytest.mark.parametrize(("n_players", "seed"), [(2, 0), (3, 1), (5, 2), (10, 3)])
def test_same_wave_matches_of_a_row_have_disjoint_players(n_players, seed):
    first, second, _ = random_block(60, 7, n_players, seed=seed)
    waves = mw.match_waves(first, second, 7 * n_players)
    for row in range(7):
        for wave in np.unique(waves[:, row]):
            here = waves[:, row] == wave
            players = np.concatenate([first[here, row], second[here, row]])
            assert len(set(players.tolist())) == players.size


@pytest.mark.parametrize(("n_players", "seed"), [(2, 4), (3, 5), (10, 6)])
def test_a_match_comes_after_every_earlier_match_of_its_players(n_players, seed):
    first, second, _ = random_block(60, 5, n_players, seed=seed)
    waves = mw.match_waves(first, second, 5 * n_players)
    for row in range(5):
        for p in range(60):
            mine = {first[p, row], second[p, row]}
            for q in range(p):
                if mine & {first[q, row], second[q, row]}:
                    assert waves[q, row] < waves[p, row]


def test_two_players_take_one_wave_per_match():
    first, second, _ = random_block(20, 3, 2, seed=7)
    waves = mw.match_waves(first, second, 6)
    np.testing.assert_array_equal(waves, np.broadcast_to(np.arange(20)[:, None], (20, 3)))


def test_schedule_lists_each_active_entry_once_by_wave_draws_first():
    first, second, drawn = random_block(40, 6, 4, seed=8)
    active = np.arange(40)[:, None] < np.array([40, 1, 0, 17, 40, 33])[None, :]
    waves = mw.match_waves(first, second, 24)
    schedule = mw.WaveScheduler(24).schedule(first, second, drawn, active)
    np.testing.assert_array_equal(np.sort(schedule.order), np.flatnonzero(active.ravel()))
    flat_waves, flat_drawn = waves.ravel(), drawn.ravel()
    for step, (lo, hi, n_draws) in enumerate(schedule.steps()):
        entries = schedule.order[lo:hi]
        assert set(flat_waves[entries].tolist()) == {step}
        assert flat_drawn[entries[:n_draws]].all()
        assert not flat_drawn[entries[n_draws:]].any()
    np.testing.assert_array_equal(schedule.drawn(), flat_drawn[schedule.order])


def test_scheduler_buffers_serve_blocks_of_any_size():
    scheduler = mw.WaveScheduler(30)
    for n_positions, seed in ((50, 9), (3, 10), (50, 11)):
        first, second, drawn = random_block(n_positions, 6, 5, seed=seed)
        fresh = mw.WaveScheduler(30).schedule(first, second, drawn)
        reused = scheduler.schedule(first, second, drawn)
        np.testing.assert_array_equal(reused.order, fresh.order)
        assert reused.starts == fresh.starts and reused.n_draws == fresh.n_draws


# --- the passes on the wave schedule equal match-by-match passes ---------------------------------


def sequential_pass(a, b, outcome, order, n_players, env):
    """One match at a time in plain Python: the update rule of the trueskill module docstring."""
    mu = [float(env.mu)] * n_players
    var = [float(env.sigma) ** 2] * n_players
    margin = env.draw_margin
    for m in order:
        i, j = (b[m], a[m]) if outcome[m] == ts.B_WINS else (a[m], b[m])
        var_i, var_j = var[i] + env.tau**2, var[j] + env.tau**2
        c2 = 2.0 * env.beta**2 + var_i + var_j
        c = math.sqrt(c2)
        v, w = ts.truncation_corrections(
            (mu[i] - mu[j]) / c, margin / c, outcome[m] == ts.DRAW, env.backend
        )
        mu[i], mu[j] = mu[i] + var_i / c * v, mu[j] - var_j / c * v
        var[i], var[j] = var_i * (1.0 - var_i / c2 * w), var_j * (1.0 - var_j / c2 * w)
    return np.array(mu), np.sqrt(var)


def random_set(n_matches, n_players, n_rows, *, seed, beta_scale=0.025, tau=0.0, backend):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n_matches)
    b = (a + rng.integers(1, n_players, n_matches)) % n_players
    outcome = rng.choice([ts.A_WINS, ts.DRAW, ts.B_WINS], n_matches, p=[0.45, 0.25, 0.3])
    outcome[0] = ts.A_WINS  # never all draws
    env = ts.TrueSkillEnv.from_matches(outcome, beta_scale=beta_scale, tau=tau, backend=backend)
    indices = ts.bootstrap_match_indices(n_matches, n_rows, seed=rng)
    return a, b, outcome, indices, n_players, env


def assert_equals_sequential(rated, a, b, outcome, indices, n_players, env):
    for row, order in enumerate(indices):
        mu, sigma = sequential_pass(a, b, outcome, order, n_players, env)
        np.testing.assert_array_equal(rated.mu[row], mu)
        np.testing.assert_array_equal(rated.sigma[row], sigma)


@pytest.mark.parametrize("backend", ["scipy", "builtin"])
@pytest.mark.parametrize(
    ("n_matches", "n_players", "n_rows", "seed"),
    [(1, 2, 3, 0), (30, 2, 4, 1), (60, 3, 5, 2), (150, 10, 6, 3)],
)
def test_passes_equal_match_by_match_passes(backend, n_matches, n_players, n_rows, seed):
    problem = random_set(n_matches, n_players, n_rows, seed=seed, tau=0.01, backend=backend)
    rated = ts.rate_replicates(*problem[:4], n_players=n_players, env=problem[5])
    assert_equals_sequential(rated, *problem)


@pytest.mark.parametrize("backend", ["scipy", "builtin"])
def test_match_sets_of_different_lengths_and_environments_equal_match_by_match(
    backend, monkeypatch
):
    # small blocks: many block barriers, rows ending inside a block and before it
    monkeypatch.setattr(ts, "_BLOCK_ELEMENTS", 64)
    sets = [
        random_set(1, 2, 2, seed=4, beta_scale=0.5, backend=backend),
        random_set(45, 3, 3, seed=5, beta_scale=0.01, backend=backend),
        random_set(130, 6, 2, seed=6, beta_scale=0.025, backend=backend),
        random_set(20, 4, 4, seed=7, beta_scale=0.1, backend=backend),
    ]
    for problem, rated in zip(sets, ts.rate_replicate_sets(sets), strict=True):
        assert_equals_sequential(rated, *problem)


def test_block_size_does_not_change_the_ratings(monkeypatch):
    a, b, outcome, indices, n_players, env = random_set(300, 5, 8, seed=12, backend="builtin")
    large = ts.rate_replicates(a, b, outcome, indices, env=env)
    monkeypatch.setattr(ts, "_BLOCK_ELEMENTS", 40)
    small = ts.rate_replicates(a, b, outcome, indices, env=env)
    np.testing.assert_array_equal(small.mu, large.mu)
    np.testing.assert_array_equal(small.sigma, large.sigma)


def test_builtin_cdf_is_half_the_package_erfc_bit_for_bit():
    rng = np.random.default_rng(13)
    x = np.concatenate(
        [rng.normal(0, 3, 2000), [0.0, -0.0, 5e-324, -5e-324, 1e-300, -1e-300, 40.0, -40.0]]
    )
    expected = np.array([0.5 * float(ts._builtin_erfc(-value / math.sqrt(2))) for value in x])
    np.testing.assert_array_equal(ts._builtin_cdf(x), expected)


@pytest.mark.parametrize(
    ("w", "mass", "drawn", "raises"),
    [
        ([0.5, 0.5], [1.0, 1.0], [False, True], False),
        ([0.5, 1.5], [0.0, 1.0], [False, True], False),  # a draw's w, a win's unused mass
        ([0.0, 0.5], [1.0, 1.0], [False, True], True),  # a win's w at 0
        ([np.nan, 0.5], [1.0, 1.0], [False, True], True),
        ([0.5, 0.5], [1.0, 0.0], [False, True], True),  # a draw of zero mass
    ],
)
def test_builtin_checks_look_at_win_w_and_draw_mass_only(w, mass, drawn, raises):
    arrays = np.array(w), np.array(mass), np.array(drawn)
    if raises:
        with pytest.raises(FloatingPointError):
            ts._check_builtin(*arrays)
    else:
        ts._check_builtin(*arrays)
