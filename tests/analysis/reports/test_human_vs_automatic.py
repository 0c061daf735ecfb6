from collections import Counter, defaultdict

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from analysis.inputs.comparable import compare_payload
from analysis.reports import build_report
from analysis.reports.data import HumanVsAutomaticData, NothingToAnalyse
from analysis.reports.human_vs_automatic import convergence_sizes

FAST = {"seed": 3, "judge_resamples": 200, "convergence_repeats": 50, "convergence_points": 4}
QUALITY = {"t-best": 4.4, "t-good": 3.6, "t-fair": 2.8, "t-poor": 2.0, "partner": 3.0}


def likert_world(seed=5, conversations=10, workers=3, judged_fraction=1.0, kind="likert"):
    """Likert ratings of one dimension: every conversation rated by ``workers`` humans and by
    the judge, both noisy around the system's quality. The partner (bipartite-play) talks
    in conversations of its own and must never be ranked."""
    rng = np.random.default_rng(seed)
    human_labels, judge_labels, human_scores, judge_scores = [], [], [], []
    item = 0
    for system, quality in QUALITY.items():
        for c in range(conversations):
            item += 1
            content = {"meta": {"conversation": f"{system}-{c}", "system": system}}
            truth = quality + rng.normal(0, 0.5)
            for worker in range(workers):
                rating = int(np.clip(round(truth + rng.normal(0, 0.7)), 1, 5))
                labels, scores = compare_payload(
                    "likert", item, {"ratings": {"overall": rating}}, content
                )
                human_labels += [(d, u, worker, v) for d, u, v in labels]
                human_scores += scores
            if rng.random() < judged_fraction:
                rating = int(np.clip(round(truth + rng.normal(0, 0.6)), 1, 5))
                labels, scores = compare_payload(
                    "likert", item, {"ratings": {"overall": rating}}, content
                )
                judge_labels += labels
                judge_scores += scores
    return HumanVsAutomaticData(
        subject="likert-camp",
        task_kind=kind,
        level="ordinal",
        judge_run=12,
        judge="Judge (likert/overall v1, run 12)",
        human_judgments=len(human_labels),
        automatic_judgments=len(judge_labels),
        human_labels=tuple(human_labels),
        judge_labels=tuple(judge_labels),
        human_scores=tuple(human_scores),
        judge_scores=tuple(judge_scores),
        partners=("partner",),
    )


def _majority_pairs(data):
    by_unit = defaultdict(list)
    for _, unit, _, value in data.human_labels:
        by_unit[unit].append(value)
    judge = {unit: value for _, unit, value in data.judge_labels}
    majority, judged = [], []
    for unit, given in by_unit.items():
        counts = Counter(given).most_common()
        if unit in judge and (len(counts) == 1 or counts[0][1] > counts[1][1]):
            majority.append(counts[0][0])
            judged.append(judge[unit])
    return majority, judged


def test_kappa_is_sklearns_between_the_judge_and_the_human_majority():
    data = likert_world()
    (section,) = build_report(data, FAST)["dimensions"]
    majority, judged = _majority_pairs(data)
    expected = cohen_kappa_score(majority, judged, labels=[1, 2, 3, 4, 5], weights="quadratic")
    assert section["agreement"]["kappa"] == pytest.approx(expected, rel=1e-12)
    assert section["agreement"]["kappa_weights"] == "quadratic"
    assert section["agreement"]["kappa_units"] == len(majority)
    assert section["agreement"]["units"] == 50


def test_kappa_weights_follow_the_parameter():
    data = likert_world()
    (section,) = build_report(data, {**FAST, "judge_kappa_weights": "none"})["dimensions"]
    majority, judged = _majority_pairs(data)
    assert section["agreement"]["kappa"] == pytest.approx(cohen_kappa_score(majority, judged))
    assert section["agreement"]["kappa_weights"] == "none"


def test_alpha_adds_the_judge_as_one_more_coder_as_the_krippendorff_package():
    data = likert_world()
    (section,) = build_report(data, FAST)["dimensions"]
    units = sorted({u for _, u, _, _ in data.human_labels})
    column = {u: i for i, u in enumerate(units)}
    matrix = np.full((4, len(units)), np.nan)
    for _, unit, worker, value in data.human_labels:
        matrix[worker, column[unit]] = value
    for _, unit, value in data.judge_labels:
        matrix[3, column[unit]] = value
    humans = krippendorff.alpha(reliability_data=matrix[:3], level_of_measurement="ordinal")
    with_judge = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    assert section["agreement"]["alpha_humans"] == pytest.approx(humans, rel=1e-10)
    assert section["agreement"]["alpha_with_judge"] == pytest.approx(with_judge, rel=1e-10)
    assert section["agreement"]["alpha_units"] == 50


def _means(rows, partners=("partner",)):
    by = defaultdict(lambda: defaultdict(list))
    for _, system, conversation, score in rows:
        if system not in partners:
            by[system][conversation].append(score)
    return {s: np.mean([np.mean(v) for v in c.values()]) for s, c in by.items()}


def test_ranking_correlation_is_scipys_on_the_targets_only():
    data = likert_world()
    report = build_report(data, FAST)
    (section,) = report["dimensions"]
    human, judge = _means(data.human_scores), _means(data.judge_scores)
    systems = sorted(human)
    h, j = [human[s] for s in systems], [judge[s] for s in systems]
    correlation = section["correlation"]
    assert correlation["spearman"] == pytest.approx(stats.spearmanr(h, j).statistic)
    assert correlation["kendall"] == pytest.approx(stats.kendalltau(h, j).statistic)
    assert correlation["spearman_low"] <= correlation["spearman"] <= correlation["spearman_high"]
    assert correlation["systems"] == 4
    assert correlation["conversations"] == 40
    assert correlation["resamples"] == 200
    assert "partner" not in report["systems"]
    assert report["partners"] == ["partner"]
    assert [r["system"] for r in section["systems"]] == report["systems"]


def test_system_rows_rank_by_mean_score_highest_first():
    data = likert_world()
    (section,) = build_report(data, FAST)["dimensions"]
    human = _means(data.human_scores)
    rows = {r["system"]: r for r in section["systems"]}
    order = sorted(human, key=lambda s: -human[s])
    assert [rows[s]["human_rank"] for s in order] == [1, 2, 3, 4]
    assert rows["t-best"]["human_mean"] == pytest.approx(human["t-best"])
    assert rows["t-best"]["judge_conversations"] == 10


def test_convergence_ends_at_scipys_correlation_with_every_dialogue():
    data = likert_world()
    (section,) = build_report(data, FAST)["dimensions"]
    points = section["convergence"]
    assert [p["n_dialogues"] for p in points] == convergence_sizes(10, 4) == [1, 2, 5, 10]
    human, judge = _means(data.human_scores), _means(data.judge_scores)
    systems = sorted(human)
    exact = stats.spearmanr([judge[s] for s in systems], [human[s] for s in systems]).statistic
    # With all 10 dialogues of every system each subset is the whole set.
    assert points[-1]["spearman_mean"] == pytest.approx(exact)
    assert points[-1]["spearman_low"] == pytest.approx(exact)
    assert points[0]["spearman_low"] < points[0]["spearman_high"]
    assert points[0]["repeats"] == 50


def test_correlation_uses_only_conversations_both_scored():
    data = likert_world(judged_fraction=0.6, seed=9)
    (section,) = build_report(data, FAST)["dimensions"]
    judged = {c for _, s, c, _ in data.judge_scores if s != "partner"}
    assert section["correlation"]["conversations"] == len(judged)
    assert sum(r["judge_conversations"] for r in section["systems"]) == len(judged)


def test_exactly_tied_systems_are_tied_in_the_ranks_the_means_and_the_correlations():
    # The judge's mean of A and B is 0.7 / 3 in exact arithmetic; summed in the order the
    # rows come, A's floats give 0.23333333333333330 and B's 0.23333333333333336, while in
    # conversation order A's give B's: a tie shown in one place and broken in another.
    judge = {
        "A": [("a3", 0.1), ("a1", 0.4), ("a2", 0.2)],
        "B": [("b1", 0.1), ("b2", 0.2), ("b3", 0.4)],
        "C": [("c1", 0.0), ("c2", 0.1), ("c3", 0.1)],
    }
    human = {"A": 0.9, "B": 0.5, "C": 0.1}
    data = HumanVsAutomaticData(
        subject="ties",
        task_kind="likert",
        level="ordinal",
        judge_run=1,
        judge="J",
        human_judgments=9,
        automatic_judgments=9,
        human_labels=(),
        judge_labels=(("overall", "u", 1),),
        human_scores=tuple(
            ("overall", s, c, human[s]) for s, rows in judge.items() for c, _ in rows
        ),
        judge_scores=tuple(("overall", s, c, v) for s, rows in judge.items() for c, v in rows),
    )
    (section,) = build_report(data, FAST)["dimensions"]
    rows = {r["system"]: r for r in section["systems"]}
    assert rows["A"]["judge_mean"] == rows["B"]["judge_mean"]
    assert (rows["A"]["judge_rank"], rows["B"]["judge_rank"]) == (1.5, 1.5)
    shown = sorted(rows)
    h = [rows[s]["human_mean"] for s in shown]
    j = [rows[s]["judge_mean"] for s in shown]
    assert [rows[s]["judge_rank"] for s in shown] == list(stats.rankdata([-v for v in j]))
    correlation = section["correlation"]
    assert correlation["spearman"] == pytest.approx(stats.spearmanr(h, j).statistic, rel=1e-12)
    assert correlation["kendall"] == pytest.approx(stats.kendalltau(h, j).statistic, rel=1e-12)
    assert correlation["spearman"] == pytest.approx(np.sqrt(3) / 2)  # not 1: A and B tie


def test_nominal_labels_are_compared_unweighted():
    content = {"meta": {"conversation": "c", "system": "s"}, "bot_turns": [1, 3]}
    rows = [
        (1, [1, 0], [1, 0], [0, 0]),
        (2, [0, 1], [0, 1], [0, 1]),
        (3, [1, 1], [1, 0], [1, 1]),
    ]
    human_labels, judge_labels = [], []
    for item, first, second, judge in rows:
        for worker, flags in ((0, first), (1, second)):
            labels, _ = compare_payload("abc_eval", item, {"labels": {"ignore": flags}}, content)
            human_labels += [(d, u, worker, v) for d, u, v in labels]
        labels, _ = compare_payload("abc_eval", item, {"labels": {"ignore": judge}}, content)
        judge_labels += labels
    data = HumanVsAutomaticData(
        subject="abc",
        task_kind="abc_eval",
        level="nominal",
        judge_run=1,
        judge="J",
        human_judgments=6,
        automatic_judgments=3,
        human_labels=tuple(human_labels),
        judge_labels=tuple(judge_labels),
        human_scores=(),
        judge_scores=(),
    )
    report = build_report(data, FAST)
    (section,) = report["dimensions"]
    # Units where the two humans agree have a majority: 1:1, 1:3, 2:1, 2:3, 3:1.
    assert section["agreement"]["kappa"] == pytest.approx(
        cohen_kappa_score([1, 0, 0, 1, 1], [0, 0, 0, 1, 1])
    )
    assert section["agreement"]["tied_majority"] == 1
    assert section["agreement"]["kappa_weights"] == "none"
    assert section["correlation"] is None
    assert report["warnings"] == [
        "ignore: fewer than two systems have conversations scored by both: no correlation"
    ]


def test_nothing_judged_by_the_judge_is_nothing_to_analyse():
    data = likert_world()
    empty = HumanVsAutomaticData(
        **{
            **data.__dict__,
            "judge_labels": (),
            "judge_scores": (),
            "automatic_judgments": 0,
        }
    )
    with pytest.raises(NothingToAnalyse, match="The judge has judged no item yet"):
        build_report(empty, FAST)


def test_the_report_names_its_judge_run_and_counts():
    data = likert_world()
    report = build_report(data, FAST)
    assert report["kind"] == "human_vs_automatic"
    assert report["task_kind"] == "likert"
    assert report["judge"] == {"run": 12, "label": "Judge (likert/overall v1, run 12)"}
    assert report["judgments"] == data.human_judgments
    assert report["automatic_judgments"] == data.automatic_judgments


@pytest.mark.parametrize(
    ("smallest", "points", "expected"),
    [(1, 6, [1]), (10, 1, [10]), (50, 6, [1, 2, 5, 10, 23, 50]), (3, 8, [1, 2, 3])],
)
def test_convergence_sizes_span_one_to_the_smallest(smallest, points, expected):
    assert convergence_sizes(smallest, points) == expected


def test_a_judge_giving_every_system_the_same_score_has_no_correlation_and_says_so():
    data = likert_world()
    flat = HumanVsAutomaticData(
        **{
            **data.__dict__,
            "judge_scores": tuple((d, s, c, 3.0) for d, s, c, _ in data.judge_scores),
        }
    )
    report = build_report(flat, FAST)
    (section,) = report["dimensions"]
    assert section["correlation"]["spearman"] is None
    assert section["convergence"][0]["spearman_mean"] is None
    assert report["warnings"] == [
        "overall: every system has the same mean score on one side: no correlation"
    ]


def test_a_judge_alone_ranks_the_targets_and_converges_to_its_own_ranking():
    data = likert_world()
    alone = HumanVsAutomaticData(
        **{**data.__dict__, "human_labels": (), "human_scores": (), "human_judgments": 0}
    )
    report = build_report(alone, FAST)
    (section,) = report["dimensions"]
    judge = _means(data.judge_scores)
    assert report["systems"] == sorted(judge, key=lambda s: -judge[s])
    assert [r["judge_rank"] for r in section["systems"]] == [1, 2, 3, 4]
    assert all(r["human_mean"] is None for r in section["systems"])
    assert section["correlation"] is None and section["agreement"]["kappa"] is None
    assert section["convergence_target"] == "judge"
    # With every dialogue, the judge's ranking is its own.
    assert section["convergence"][-1]["spearman_mean"] == pytest.approx(1.0)
    assert report["warnings"] == [
        "no human judgments yet: the judge's ranking alone, without agreement"
    ]


def test_with_humans_the_curve_approaches_the_human_ranking():
    (section,) = build_report(likert_world(), FAST)["dimensions"]
    assert section["convergence_target"] == "human"


def test_alpha_with_many_crowdworkers_each_on_a_few_units_is_the_krippendorff_packages():
    rng = np.random.default_rng(4)
    workers, units = 30, 60
    human_labels, judge_labels = [], []
    matrix = np.full((workers + 1, units), np.nan)
    for unit in range(units):
        truth = int(rng.integers(1, 6))
        for worker in rng.choice(workers, size=int(rng.integers(1, 4)), replace=False):
            value = int(np.clip(truth + rng.choice([-1, 0, 0, 1]), 1, 5))
            human_labels.append(("overall", str(unit), int(worker), value))
            matrix[worker, unit] = value
        judge_labels.append(("overall", str(unit), truth))
        matrix[workers, unit] = truth
    data = HumanVsAutomaticData(
        subject="crowd",
        task_kind="likert",
        level="ordinal",
        judge_run=1,
        judge="J",
        human_judgments=len(human_labels),
        automatic_judgments=units,
        human_labels=tuple(human_labels),
        judge_labels=tuple(judge_labels),
        human_scores=(),
        judge_scores=(),
    )
    (section,) = build_report(data, FAST)["dimensions"]
    # Both alphas on the units two humans or more labelled (units labelled once leave the
    # humans' alpha, so they leave the judge's too).
    paired = (~np.isnan(matrix[:workers])).sum(axis=0) >= 2
    assert section["agreement"]["alpha_units"] == paired.sum() < units
    assert section["agreement"]["alpha_humans"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix[:workers], level_of_measurement="ordinal")
    )
    assert section["agreement"]["alpha_with_judge"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix[:, paired], level_of_measurement="ordinal")
    )
