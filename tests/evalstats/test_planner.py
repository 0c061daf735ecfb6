"""The budget planner: its arithmetic by hand, and its predicted power against the realised
share of separated studies in an independent simulation (votes drawn up front, the stopping
rule checked on full fits of the counts so far, `pairing.state_from_counts`)."""

import numpy as np
import pytest

from evalstats import pairing as pg
from evalstats import planner as pl


def test_the_spread_gives_evenly_spaced_strengths_by_hand():
    # 400 Elo points is ln(10) in log-odds: three systems at +ln(10)/2, 0, -ln(10)/2.
    strengths = pl.spread_strengths(3, 400.0)
    assert strengths == pytest.approx([np.log(10) / 2, 0.0, -np.log(10) / 2])


def test_votes_for_a_power_are_the_quantile_of_the_stopping_counts():
    plan = pl.StudyPlan(
        "uniform", 0.95, np.array([100.0, 300.0, 200.0, 400.0, np.inf]), np.ones(5, bool), 500
    )
    assert plan.votes_for_power(0.6) == 300
    assert plan.votes_for_power(0.8) == 400
    assert plan.votes_for_power(0.95) is None  # one study in five never stopped
    assert plan.power(250) == pytest.approx(0.4)


def realised_share(strengths, tie_rate, budget, check_every, n_studies, seed):
    """Studies run as the platform runs a uniform one, all votes drawn up front: the
    stopping rule checked every `check_every` votes on a fit from scratch of the counts so
    far (`pairing.answered_by_counts`)."""
    n = strengths.size
    rows, cols = np.triu_indices(n, 1)
    rng = np.random.default_rng(seed)
    pair = rng.integers(rows.size, size=(n_studies, budget))
    first, second = rows[pair], cols[pair]
    p = 1.0 / (1.0 + np.exp(strengths[second] - strengths[first]))
    u = rng.random((n_studies, budget))
    tie = u < tie_rate
    first_won = ~tie & ((u - tie_rate) / (1 - tie_rate) < p)
    study = np.broadcast_to(np.arange(n_studies)[:, None], (n_studies, budget))
    wins = np.zeros((n_studies, budget // check_every, n, n))
    ties = np.zeros_like(wins)
    checkpoint = np.broadcast_to(np.arange(budget) // check_every, (n_studies, budget))
    keep = checkpoint < budget // check_every
    # Counts per checkpoint window, then summed up to each checkpoint.
    lost = ~first_won & ~tie
    for mask, target, a, b in [
        (first_won, wins, first, second),
        (lost, wins, second, first),
        (tie, ties, first, second),
        (tie, ties, second, first),
    ]:
        m = mask & keep
        np.add.at(target, (study[m], checkpoint[m], a[m], b[m]), 1)
    wins, ties = wins.cumsum(axis=1), ties.cumsum(axis=1)
    answered = pg.answered_by_counts(wins.reshape(-1, n, n), ties.reshape(-1, n, n))
    return answered.reshape(n_studies, -1).any(axis=1).mean()


def test_the_predicted_power_is_the_realised_share_of_separated_studies():
    strengths = pl.spread_strengths(3, 200.0)
    plan = pl.plan_study(strengths, tie_rate=0.1, n_studies=2000, min_batch=5, growth=0.0, seed=11)
    budget = plan.votes_for_power(0.8)
    predicted = plan.power(budget)
    assert predicted >= 0.8
    realised = realised_share(strengths, 0.1, budget, 10, n_studies=1000, seed=12)
    assert abs(realised - predicted) <= 0.05


def test_adaptive_allocation_needs_fewer_votes_than_uniform_on_six_systems():
    strengths = pl.spread_strengths(6, 250.0)
    options = {"n_studies": 40, "seed": 3, "tie_rate": 0.1}
    uniform = pl.plan_study(strengths, allocation="uniform", **options)
    adaptive = pl.plan_study(strengths, allocation="adaptive", **options)
    assert adaptive.votes_for_power(0.8) < uniform.votes_for_power(0.8)


def test_a_budget_too_small_for_any_study_gives_no_answer():
    plan = pl.plan_study(pl.spread_strengths(4, 50.0), max_votes=200, n_studies=20, seed=1)
    assert plan.votes_for_power(0.8) is None
    assert plan.power(200) < 0.8


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"tie_rate": 1.0}, "tie share"),
        ({"level": 1.0}, "level"),
        ({"allocation": "greedy"}, "allocation"),
        ({"n_studies": 0}, "simulated studies"),
    ],
)
def test_bad_plans_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        pl.plan_study([0.5, 0.0, -0.5], **options)


def test_a_spread_out_of_range_is_refused():
    with pytest.raises(ValueError, match="Elo"):
        pl.spread_strengths(4, 0.0)
