"""The k-way ranking report: Plackett-Luce on the rankings, shaped as Bradley-Terry's rows."""

import numpy as np
import pytest

from analysis.reports import NothingToAnalyse, RankingData, build_report
from evalstats.plackett_luce import bootstrap_plackett_luce

PARAMS = {"bt_bootstrap": 80, "seed": 3, "coverage": 0.9}


def data_of(rankings, automatic=(), weight=1):
    """RankingData from rankings given as {system: rank} dicts (the automatic ones last)."""
    columns = {name: [] for name in ("ranking", "item", "worker", "system", "rank", "automatic")}
    for number, ranks in enumerate([*rankings, *automatic]):
        auto = number >= len(rankings)
        for system, rank in ranks.items():
            for name, value in zip(
                columns, (number, number, -1 if auto else 7, system, rank, auto), strict=True
            ):
                columns[name].append(value)
    return RankingData(subject="rank", automatic_weight=weight, **columns)


RANKINGS = [
    {"x": 1, "y": 2, "z": 3},
    {"x": 2, "y": 1, "z": 3},
    {"x": 1, "y": 3, "z": 2},
    {"x": 3, "y": 1, "z": 2},
    {"x": 1, "y": 1, "z": 3},
    {"x": 2, "y": 3, "z": 1},
] * 3


def test_ratings_are_plackett_luce_on_the_rankings_as_tiers():
    report = build_report(data_of(RANKINGS), PARAMS)
    tiers = [
        [sorted("xyz".index(s) for s in r if r[s] == rank) for rank in sorted(set(r.values()))]
        for r in RANKINGS
    ]
    expected = bootstrap_plackett_luce(tiers, 3, n_bootstrap=80, seed=3, confidence=0.9)
    rows = {row["system"]: row for row in report["plackett_luce"]}
    for index, system in enumerate("xyz"):
        assert rows[system]["rating"] == pytest.approx(expected.ratings[index])
        assert rows[system]["ci"] == pytest.approx(
            [expected.confidence_interval.low[index], expected.confidence_interval.high[index]]
        )
        assert rows[system]["rank"] == expected.ranks[index]
    assert report["systems"][0] == "x" and report["judgments"] == 18
    assert report["kind"] == "ranking" and report["automatic_ties"] == 0


def test_counts_give_firsts_with_ties_sharing_first_place_and_mean_places():
    report = build_report(data_of(RANKINGS), PARAMS)
    rows = {row["system"]: row for row in report["plackett_luce"]}
    assert [rows[s]["first"] for s in "xyz"] == [9, 9, 3]
    assert rows["x"]["rankings"] == 18
    # x's places: 1, 2, 1, 3, 1, 2 (three times each).
    assert rows["x"]["mean_position"] == pytest.approx(10 / 6)


def test_an_automatic_tie_counts_once_per_judge():
    report = build_report(data_of(RANKINGS, automatic=[{"x": 1, "y": 1, "z": 1}], weight=3), PARAMS)
    assert report["automatic_ties"] == 1 and report["judgments"] == 18
    assert report["plackett_luce"][0]["rankings"] == 21


def test_an_unbeaten_system_is_fitted_with_the_prior_and_said_so():
    report = build_report(data_of([{"x": 1, "y": 2}, {"x": 1, "y": 2}]), PARAMS)
    assert any("Plackett-Luce: unbeaten" in w for w in report["warnings"])
    assert np.isfinite(report["plackett_luce"][0]["rating"])


def test_no_ranking_is_nothing_to_analyse():
    with pytest.raises(NothingToAnalyse):
        build_report(data_of([]), PARAMS)
