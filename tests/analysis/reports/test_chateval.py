"""The ChatEval section of the A/B report: win/tie/loss against each baseline with a sign
test, Cohen's weighted kappa, outlier workers."""

import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from analysis.reports import ABData, build_report
from analysis.runs.parameters import PRESETS, normalize_parameters
from tests.analysis import builders

# Items 1-6 against baseline "q", judged by workers 1, 2 and 4 (who agree) and worker 3
# (who always says the opposite); item 7 against "r" is an automatic tie.
ITEMS = {1: "a", 2: "a", 3: "a", 4: "b", 5: "tie", 6: "a"}
OPPOSITE = {"a": "b", "b": "a", "tie": "tie"}


def data() -> ABData:
    rows = []
    for item, choice in ITEMS.items():
        rows += [(item, w, "q", choice) for w in (1, 2, 4)] + [(item, 3, "q", OPPOSITE[choice])]
    rows.append((7, -1, "r", "tie"))
    return ABData(
        subject="chat",
        item=tuple(r[0] for r in rows),
        worker=tuple(r[1] for r in rows),
        system_a=tuple("p" for _ in rows),
        system_b=tuple(r[2] for r in rows),
        choice=tuple(r[3] for r in rows),
        automatic=tuple(r[1] == -1 for r in rows),
        automatic_weight=3,
    )


def chateval(**parameters):
    return build_report(data(), {**builders.FAST, **parameters})["chateval"]


def test_wins_ties_and_losses_against_each_baseline_with_a_sign_test():
    rows = {row["baseline"]: row for row in chateval()["baselines"]}
    q = rows["q"]
    # 4 "a", 1 "b", 1 tie from each of workers 1, 2 and 4; the reverse from worker 3.
    assert (q["wins"], q["ties"], q["losses"]) == (13, 4, 7)
    assert q["p_value"] == pytest.approx(stats.binomtest(13, 20).pvalue)
    assert q["win_share"] == pytest.approx(13 / 24)
    assert (rows["r"]["ties"], rows["r"]["n"]) == (3, 3)  # weighed as every judge's tie


def test_agreement_is_cohens_weighted_kappa_of_two_workers_per_item():
    kappa = chateval()["kappa"]
    first = [ITEMS[i] for i in ITEMS]
    expected = cohen_kappa_score(first, first, labels=["b", "tie", "a"], weights="linear")
    assert kappa == {"weights": "linear", "kappa": pytest.approx(expected), "items": 6}


def test_a_worker_against_the_others_is_flagged_as_an_outlier():
    workers = {row["worker_id"]: row for row in chateval()["workers"]}
    assert workers[3]["outlier"] and workers[3]["kappa"] < 0
    assert not workers[1]["outlier"] and workers[1]["items"] == 6
    assert workers[1]["kappa"] > 0.5
    assert chateval(outlier_min_items=7)["outliers"] == 0


def data_with_a_bad_first_worker() -> ABData:
    """ITEMS judged by worker 3 (always the opposite) first, then workers 1, 2 and 4."""
    rows = []
    for item, choice in ITEMS.items():
        rows += [(item, 3, OPPOSITE[choice])] + [(item, w, choice) for w in (1, 2, 4)]
    return ABData(
        subject="chat",
        item=tuple(r[0] for r in rows),
        worker=tuple(r[1] for r in rows),
        system_a=tuple("p" for _ in rows),
        system_b=tuple("q" for _ in rows),
        choice=tuple(r[2] for r in rows),
        automatic=tuple(False for _ in rows),
    )


def test_agreement_is_reported_with_and_without_the_outliers():
    section = build_report(data_with_a_bad_first_worker(), builders.FAST)["chateval"]
    choices = list(ITEMS.values())
    opposite = [OPPOSITE[c] for c in choices]
    # With every worker the first two of an item are 3 and 1; without 3, workers 1 and 2.
    with_all = cohen_kappa_score(opposite, choices, labels=["b", "tie", "a"], weights="linear")
    without = cohen_kappa_score(choices, choices, labels=["b", "tie", "a"], weights="linear")
    assert section["kappa"]["kappa"] == pytest.approx(with_all) and with_all < 0
    assert section["kappa_without_outliers"] == {
        "weights": "linear",
        "kappa": pytest.approx(without),
        "items": 6,
    }
    # Kept by default: the baselines count worker 3's judgments.
    assert (section["removed_outliers"], section["removed_judgments"]) == (False, 0)
    assert section["baselines"][0]["n"] == 24


def test_the_outliers_can_be_removed_as_the_paper_did():
    result = build_report(
        data_with_a_bad_first_worker(), {**builders.FAST, "remove_outliers": True}
    )
    section = result["chateval"]
    [row] = section["baselines"]
    # Workers 1, 2 and 4: 4 "a", 1 "b", 1 tie each.
    assert (row["wins"], row["ties"], row["losses"]) == (12, 3, 3)
    assert row["p_value"] == pytest.approx(stats.binomtest(12, 15).pvalue)
    assert (section["removed_outliers"], section["removed_judgments"]) == (True, 6)
    # The ranking leaves them out too.
    [pair] = result["pairwise"]
    assert pair["wins_a"] + pair["wins_b"] + pair["ties"] == 18
    assert any("outlier worker(s) left out" in w for w in result["warnings"])


def test_the_published_preset_removes_the_outliers():
    assert PRESETS["as-published"]["remove_outliers"] is True
    assert normalize_parameters({})["remove_outliers"] is False
