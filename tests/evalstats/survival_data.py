"""Simulated Spot The Bot judgments and interval helpers shared by the survival tests
(test_intervals, test_turnbull, test_interval_logrank, test_interval_cox)."""

import numpy as np

from evalstats.pairwise import BOT, HUMAN, UNSURE

SEGMENT_LENGTHS = np.array([2.0, 3.0, 5.0])
# The six distinct Spot The Bot intervals for segment lengths 2, 3, 5: spotted within k,
# then survived past k.
STUDY_LEFT = np.array([0.0, 0.0, 0.0, 2.0, 3.0, 5.0])
STUDY_RIGHT = np.array([2.0, 3.0, 5.0, np.inf, np.inf, np.inf])
# lifelines takes closed intervals [lower, upper]; (k, inf) becomes [k + EPS, inf].
EPS = 1e-6


def simulate_judgments(rng, n_per_system, rates, lengths=SEGMENT_LENGTHS):
    """Exponential time to being spotted (rate per system), uniformly chosen segment lengths."""
    system = np.repeat(np.arange(len(rates)), n_per_system)
    k = rng.choice(lengths, system.size)
    spotted = rng.exponential(1.0 / np.asarray(rates)[system]) <= k
    not_spotted = rng.choice([HUMAN, UNSURE], system.size)
    return system, k, np.where(spotted, BOT, not_spotted)


def simulate_study_counts(rng, rate, n, size):
    """Counts of the six STUDY_LEFT/STUDY_RIGHT intervals for ``size`` simulated systems."""
    lengths = rng.multinomial(n, [1 / 3] * 3, size=size)
    spotted = rng.binomial(lengths, -np.expm1(-rate * SEGMENT_LENGTHS))
    return np.concatenate([spotted, lengths - spotted], axis=1)


def lifelines_bounds(left, right):
    """Our (left, right] intervals as the closed intervals lifelines expects."""
    return np.where(left < right, left + EPS, left), right


def containment(left, right, interval_left, interval_right):
    """alpha_ij = 1 when observation i (left < T <= right; T = left if exact) contains
    Turnbull interval j ((l, r], or the point l when l == r)."""
    lo, hi = interval_left[None, :], interval_right[None, :]
    obs_left, obs_right = left[:, None], right[:, None]
    point = lo == hi
    inside = np.where(point, obs_left < lo, obs_left <= lo) & (hi <= obs_right)
    return np.where(obs_left == obs_right, point & (lo == obs_left), inside).astype(float)


def right_censored_sample(rng, n_groups, n, *, ties=True):
    group = np.repeat(np.arange(n_groups), n)
    event_time = rng.exponential(5.0, group.size) * (1 + 0.3 * group)
    censor_time = rng.uniform(2.0, 15.0, group.size)
    if ties:
        event_time, censor_time = np.ceil(event_time), np.ceil(censor_time)
    duration = np.minimum(event_time, censor_time)
    observed = event_time <= censor_time
    return group, duration, observed
