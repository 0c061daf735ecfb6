"""The analysis recovers what the simulated studies were built from."""

import math

import pytest

from analysis.reports import build_report
from demo.leaderboards import DEMO_HAZARDS, DEMO_STRENGTHS
from demo.simulation import ABModel, SpotTheBotModel, simulate_ab, simulate_spot_the_bot
from tests.analysis import builders
from tests.analysis.builders import assert_clusters_follow


@pytest.mark.parametrize("seed", [0, 1])
def test_spot_the_bot_recovers_the_known_order_and_survival(seed):
    model = SpotTheBotModel(DEMO_HAZARDS)
    result = build_report(simulate_spot_the_bot(model, seed=seed), builders.FAST)
    order = model.order()
    assert_clusters_follow(order, result["ranking"])
    assert len({row["cluster"] for row in result["ranking"]}) >= 3
    survival = result["survival"]
    careless = model.careless_workers / model.workers
    for system in order:
        for k, estimate in zip(
            survival["segment_lengths"], survival["curves"][system], strict=True
        ):
            # Careless judges say "bot" a third of the time, whatever they read.
            expected = (1 - careless) * model.survival(system, k) + careless * 2 / 3
            assert estimate == pytest.approx(expected, abs=0.12), (system, k)
    # Systems whose hazards differ by a factor of 3 or more are told apart by the log-rank test.
    for test in survival["logrank"]:
        ratio = DEMO_HAZARDS[test["a"]] / DEMO_HAZARDS[test["b"]]
        if max(ratio, 1 / ratio) >= 3:
            assert test["p_adjusted"] < 0.05, test


def test_preferred_speakers_survive_longer_in_the_cox_models():
    model = SpotTheBotModel(DEMO_HAZARDS)
    result = build_report(simulate_spot_the_bot(model, seed=5), builders.FAST)
    coefficients = [
        values["coef"]
        for features in result["survival"]["cox"].values()
        for values in features.values()
    ]
    assert len(coefficients) == 3 * len(DEMO_HAZARDS)
    assert sum(c < 0 for c in coefficients) >= 0.8 * len(coefficients)


def test_feature_win_rates_follow_the_hazards():
    model = SpotTheBotModel(DEMO_HAZARDS)
    result = build_report(simulate_spot_the_bot(model, seed=2), builders.FAST)
    rates = result["features"]["win_rates"]
    order = model.order()
    assert (
        rates[order[0]]["sensibleness"]["win_rate"]
        > 0.6
        > 0.4
        > rates[order[-1]]["sensibleness"]["win_rate"]
    )


def test_ab_recovers_the_known_bradley_terry_order():
    model = ABModel(DEMO_STRENGTHS)
    result = build_report(simulate_ab(model, seed=3), builders.FAST)
    assert_clusters_follow(model.order(), result["ranking"])
    ratings = {row["system"]: row["rating"] for row in result["bradley_terry"]}
    assert sorted(ratings, key=ratings.get, reverse=True) == model.order()
    # The Elo-like scale: 400 points per log10 of the odds, so gaps follow the strengths.
    strong, weak = model.order()[0], model.order()[-1]
    gap = (DEMO_STRENGTHS[strong] - DEMO_STRENGTHS[weak]) * 400 / math.log(10)
    # Ties and careless judges shrink the observed gap; it must keep most of it.
    assert 0.4 * gap < ratings[strong] - ratings[weak] < 1.2 * gap
