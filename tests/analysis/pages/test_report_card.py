"""Strengths and weaknesses read from result JSON (the report card's pure part), on hand-made
results."""

import pytest
from scipy import stats

from analysis.pages.report_card import strengths_and_weaknesses


def rate(system, label, rate, low, high, group=None):
    row = {"system": system, "label": label, "rate": rate, "low": low, "high": high, "n_turns": 100}
    return row | ({"group": group} if group else {})


BEHAVIOURS = {
    "rates": [
        # ignore (undesirable): x's interval lies wholly below the others' mean 0.30.
        rate("x", "ignore", 0.05, 0.02, 0.10),
        rate("y", "ignore", 0.20, 0.15, 0.26),
        rate("z", "ignore", 0.40, 0.33, 0.47),
        # empathetic (desirable): x lies wholly below the others' mean 0.5: a weakness.
        rate("x", "empathetic", 0.10, 0.05, 0.18, group="desirable"),
        rate("y", "empathetic", 0.50, 0.40, 0.60, group="desirable"),
        rate("z", "empathetic", 0.50, 0.40, 0.60, group="desirable"),
        # redundant: x's interval covers the others' mean: even.
        rate("x", "redundant", 0.10, 0.02, 0.30),
        rate("y", "redundant", 0.12, 0.05, 0.20),
    ]
}


def rows_by_name(result, system="x"):
    return {(r["section"], r["name"]): r for r in strengths_and_weaknesses(result, system)}


def test_behaviours_compare_the_interval_with_the_others_mean():
    rows = rows_by_name({"behaviours": BEHAVIOURS})
    assert rows[("behaviour", "ignore")]["verdict"] == "strength"
    assert rows[("behaviour", "ignore")]["others"] == pytest.approx(0.30)
    assert rows[("behaviour", "empathetic")]["verdict"] == "weakness"
    assert rows[("behaviour", "redundant")]["verdict"] == "even"
    ordered = [r["verdict"] for r in strengths_and_weaknesses({"behaviours": BEHAVIOURS}, "x")]
    assert ordered == ["strength", "weakness", "even"]


def test_likert_means_higher_is_better():
    means = [
        {"system": "x", "dimension": "quality", "level": "dialogue", "mean": 4.2, "low": 3.9,
         "high": 4.5, "n": 30},
        {"system": "y", "dimension": "quality", "level": "dialogue", "mean": 3.0, "low": 2.7,
         "high": 3.3, "n": 30},
        {"system": "x", "dimension": "relevance", "level": "dialogue", "mean": 3.0, "low": 2.0,
         "high": 4.0, "n": 30},
        {"system": "y", "dimension": "relevance", "level": "dialogue", "mean": 3.5, "low": 3.0,
         "high": 4.0, "n": 30},
    ]  # fmt: skip
    rows = rows_by_name({"likert": {"means": means}})
    assert rows[("likert", "quality")]["verdict"] == "strength"
    assert rows[("likert", "relevance")]["verdict"] == "even"
    assert rows_by_name({"likert": {"means": means}}, "y")[("likert", "quality")]["verdict"] == (
        "weakness"
    )


def outcome(count):
    return {"count": count, "share": None, "low": None, "high": None}


def test_comparative_wins_count_from_either_side_of_a_pair():
    results = [
        # x is b here: its wins are a's losses.
        {"dimension": "quality", "a": "w", "b": "x", "n": 30, "wins": outcome(5),
         "ties": outcome(5), "losses": outcome(20), "p_adjusted": 0.004},
        {"dimension": "quality", "a": "x", "b": "y", "n": 30, "wins": outcome(12),
         "ties": outcome(6), "losses": outcome(12), "p_adjusted": 1.0},
        {"dimension": "relevance", "a": "x", "b": "y", "n": 30, "wins": outcome(4),
         "ties": outcome(4), "losses": outcome(22), "p_adjusted": 0.001},
        {"dimension": "quality", "a": "w", "b": "y", "n": 30, "wins": outcome(30),
         "ties": outcome(0), "losses": outcome(0), "p_adjusted": 0.0},
    ]  # fmt: skip
    rows = rows_by_name({"comparative": {"results": results}})
    quality = rows[("comparative", "quality")]
    assert quality["verdict"] == "strength" and quality["n"] == 60
    assert quality["value"] == pytest.approx(32 / 60)  # 20 + 12 wins in 60
    assert rows[("comparative", "relevance")]["verdict"] == "weakness"


def test_spot_the_bot_features_use_the_sign_test():
    features = {
        "win_rates": {
            "x": {
                "fluency": {"win_rate": 0.75, "wins": 15, "losses": 5, "no_difference": 3},
                "specificity": {"win_rate": 0.55, "wins": 11, "losses": 9, "no_difference": 0},
            }
        }
    }
    rows = rows_by_name({"features": features})
    # scipy's exact binomial test: 15 of 20 at 1/2 gives p = 0.041 < 0.05.
    assert stats.binomtest(15, 20).pvalue < 0.05 < stats.binomtest(11, 20).pvalue
    assert rows[("feature", "fluency")]["verdict"] == "strength"
    assert rows[("feature", "specificity")]["verdict"] == "even"


def test_a_result_without_the_system_has_no_rows():
    assert strengths_and_weaknesses({"behaviours": BEHAVIOURS}, "nobody") == []
