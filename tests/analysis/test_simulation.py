"""The analysis recovers what the simulated studies were built from, and the demo loads."""

import math

import pytest

from analysis.models import AnalysisRun
from analysis.report import build_report
from analysis.simulation import (
    AB_DEMO_SLUG,
    DEMO_HAZARDS,
    DEMO_STRENGTHS,
    SPOT_THE_BOT_DEMO_SLUG,
    ABModel,
    SpotTheBotModel,
    load_analysis_demo,
    simulate_ab,
    simulate_spot_the_bot,
)
from annotation.models import Judgment
from tests.analysis import builders
from tournaments.models import Tournament


def assert_clusters_follow(order: list[str], ranking: list[dict]):
    """Clusters never put a weaker system above a stronger one; the extremes are apart."""
    cluster = {row["system"]: row["cluster"] for row in ranking}
    clusters = [cluster[system] for system in order]
    assert clusters == sorted(clusters), clusters
    assert clusters[0] == 1 and clusters[-1] == max(clusters) > 1


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


@pytest.mark.django_db
def test_the_demo_loads_analyses_and_is_idempotent(django_capture_on_commit_callbacks):
    small = builders.small_spot_the_bot_model(hazards=DEMO_HAZARDS, conversations_per_pair=8)
    ab = ABModel(DEMO_STRENGTHS, prompts=25)
    with django_capture_on_commit_callbacks(execute=False):
        runs = load_analysis_demo(spot_the_bot=small, ab=ab, parameters=builders.FAST)
    assert set(runs) == {SPOT_THE_BOT_DEMO_SLUG, AB_DEMO_SLUG}
    for slug, run in runs.items():
        tournament = Tournament.objects.get(slug=slug)
        assert tournament.published and tournament.status == Tournament.Status.FINISHED
        assert tournament.campaign.status == "finished"
        assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
        assert tournament.analysis_runs.latest_succeeded() == run
        assert set(tournament.systems.values_list("slug", flat=True)) == set(run.result["systems"])
    assert_clusters_follow(small.order(), runs[SPOT_THE_BOT_DEMO_SLUG].result["ranking"])
    assert_clusters_follow(ab.order(), runs[AB_DEMO_SLUG].result["ranking"])
    stb = Tournament.objects.get(slug=SPOT_THE_BOT_DEMO_SLUG)
    judged = Judgment.objects.filter(campaign=stb.campaign).count()
    assert judged == runs[SPOT_THE_BOT_DEMO_SLUG].result["judgments"] > 0

    with django_capture_on_commit_callbacks(execute=False):
        again = load_analysis_demo(spot_the_bot=small, ab=ab, parameters=builders.FAST)
    assert {slug: run.pk for slug, run in again.items()} == {
        slug: run.pk for slug, run in runs.items()
    }
    assert Judgment.objects.filter(campaign=stb.campaign).count() == judged
    assert Tournament.objects.filter(slug__in=list(runs)).count() == 2
