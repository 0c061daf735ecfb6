"""The ChatEval section of the A/B report: win/tie/loss against each baseline with a sign
test, Cohen's weighted kappa, outlier workers."""

import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from analysis.reports import ABData, build_report
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
