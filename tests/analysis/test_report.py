"""The result contract: keys, types, hand-counted numbers, NaN as null, A/B and errors."""

import json
import math

import pytest

from analysis.report import (
    ABData,
    NothingToAnalyse,
    SpotTheBotData,
    build_report,
    json_safe,
    normalize_parameters,
)
from analysis.simulation import ABModel, simulate_ab, simulate_spot_the_bot
from tests.analysis import builders

FEATURES = ("sensibleness", "specificity", "fluency")


def spot_the_bot_data(judgments) -> SpotTheBotData:
    """`judgments`: (conversation, worker, speakers, k, labels, better) tuples."""
    columns = {
        name: []
        for name in [
            "judgment",
            "worker",
            "conversation",
            "speaker",
            "system",
            "opponent",
            "exchanges",
            "label",
            "opponent_label",
            "preferences",
        ]
    }
    for n, (conversation, worker, speakers, k, labels, better) in enumerate(judgments):
        for s in (0, 1):
            columns["judgment"].append(n)
            columns["worker"].append(worker)
            columns["conversation"].append(conversation)
            columns["speaker"].append(s)
            columns["system"].append(speakers[s])
            columns["opponent"].append(speakers[1 - s])
            columns["exchanges"].append(k)
            columns["label"].append(labels[s])
            columns["opponent_label"].append(labels[1 - s])
            columns["preferences"].append(
                tuple(
                    0 if better.get(f) is None else (1 if better[f] == s else -1) for f in FEATURES
                )
            )
    return SpotTheBotData(
        subject="hand", features=FEATURES, **{k: tuple(v) for k, v in columns.items()}
    )


@pytest.fixture(scope="module")
def simulated():
    data = simulate_spot_the_bot(builders.small_spot_the_bot_model(), seed=1)
    return data, build_report(data, builders.FAST)


def test_the_contract_has_every_key_with_its_type(simulated):
    data, result = simulated
    json.dumps(result, allow_nan=False)  # strict JSON: no NaN or infinity anywhere
    assert set(result) >= {
        "tournament",
        "systems",
        "judgments",
        "pairwise",
        "ranking",
        "bradley_terry",
        "survival",
        "agreement",
        "stability",
    }
    systems = sorted(builders.HAZARDS)
    assert sorted(result["systems"]) == systems
    assert result["judgments"] == len(set(data.judgment))
    for row in result["pairwise"]:
        assert set(row) == {
            "a",
            "b",
            "wins_a",
            "wins_b",
            "ties",
            "win_rate_a",
            "p_value",
            "p_adjusted",
        }
        assert isinstance(row["wins_a"], int) and 0 <= row["win_rate_a"] <= 1
        assert row["p_value"] <= row["p_adjusted"] <= 1
    assert len(result["pairwise"]) == 3
    for row in result["ranking"]:
        assert set(row) == {"system", "win_rate", "mu", "sigma", "rank_range", "cluster"}
        low, high = row["rank_range"]
        assert 1 <= low <= high <= 3 and isinstance(row["cluster"], int)
    for row in result["bradley_terry"]:
        assert set(row) == {"system", "rating", "ci", "rank"}
        assert row["ci"][0] <= row["rating"] <= row["ci"][1]
    survival = result["survival"]
    assert survival["segment_lengths"] == [2, 3, 5]
    assert sorted(survival["curves"]) == systems
    assert all(len(curve) == 3 for curve in survival["curves"].values())
    assert len(survival["human"]) == 3
    assert {(t["a"], t["b"]) for t in survival["logrank"]} == {
        tuple(sorted(p)) for p in [systems[:2], systems[1:], systems[::2]]
    }
    for system in systems:
        assert set(survival["cox"][system]) == set(FEATURES)
        assert set(survival["cox"][system]["fluency"]) == {"coef", "se", "p_value"}
    assert result["agreement"]["krippendorff"]["nominal"]["units"] > 0
    assert {"system", "label", "share"} <= set(result["agreement"]["cooccurrence"][0])
    stability = result["stability"]
    assert len(stability["n_conversations"]) == len(stability["share_reproduced"]) == 2
    assert sorted(s for cluster in stability["reference"] for s in cluster) == systems


def test_hand_counted_win_rates_and_feature_win_rates():
    # Win function: human > unsure > bot; equal labels tie.
    judgments = [
        ("c1", 1, ["x", "y"], 2, ["human", "bot"], {"fluency": 0}),  # x wins
        ("c1", 2, ["x", "y"], 3, ["unsure", "bot"], {"fluency": 0}),  # x wins
        ("c2", 1, ["y", "x"], 2, ["human", "unsure"], {"fluency": 0}),  # y wins
        ("c2", 3, ["y", "x"], 3, ["bot", "bot"], {"fluency": None}),  # tie
        ("c3", 2, ["x", "z"], 2, ["human", "human"], {"fluency": 1}),  # tie, z more fluent
    ]
    result = build_report(spot_the_bot_data(judgments), builders.FAST)
    pair = next(p for p in result["pairwise"] if {p["a"], p["b"]} == {"x", "y"})
    wins = {pair["a"]: pair["wins_a"], pair["b"]: pair["wins_b"]}
    assert wins == {"x": 2, "y": 1} and pair["ties"] == 1
    assert pair["win_rate_a"] == pytest.approx(wins[pair["a"]] / 3)
    fluency = result["features"]["win_rates"]
    # x: preferred in c1 twice, the other side preferred in c2 once and in c3 once.
    assert fluency["x"]["fluency"] == {"win_rate": 0.5, "wins": 2, "losses": 2, "no_difference": 1}
    assert fluency["z"]["fluency"]["win_rate"] == 1.0


def test_pairs_are_oriented_best_first(simulated):
    _, result = simulated
    place = {system: i for i, system in enumerate(result["systems"])}
    assert [r["system"] for r in result["ranking"]] == result["systems"]
    assert all(place[p["a"]] < place[p["b"]] for p in result["pairwise"])


def test_undefined_numbers_become_null():
    assert json_safe({"x": math.nan, "y": [math.inf, 1.5], "z": (1, 2)}) == {
        "x": None,
        "y": [None, 1.5],
        "z": [1, 2],
    }
    # A pair that was never decided has no win rate and no test.
    judgments = [
        ("c1", 1, ["x", "y"], 2, ["bot", "bot"], {}),
        ("c2", 1, ["x", "z"], 2, ["human", "bot"], {}),
        ("c3", 2, ["y", "z"], 2, ["human", "bot"], {}),
    ]
    result = build_report(spot_the_bot_data(judgments), builders.FAST)
    undecided = next(p for p in result["pairwise"] if {p["a"], p["b"]} == {"x", "y"})
    assert undecided["win_rate_a"] is None and undecided["p_value"] is None
    json.dumps(result, allow_nan=False)


def test_ab_results_have_empty_survival_and_stability():
    data = simulate_ab(ABModel(builders.STRENGTHS, prompts=15), seed=2)
    result = build_report(data, builders.FAST)
    json.dumps(result, allow_nan=False)
    assert result["kind"] == "ab"
    assert result["systems"][0] == "ab-strong" and result["systems"][-1] == "ab-weak"
    assert result["survival"]["curves"] == {} and result["survival"]["cox"] == {}
    assert result["survival"]["logrank"] == [] and result["stability"] == {}
    assert result["automatic_ties"] == sum(data.automatic)
    assert result["judgments"] == len(data.choice) - sum(data.automatic)
    assert len(result["bradley_terry"]) == 3


def test_automatic_ties_count_as_ties_from_every_judge():
    data = ABData(
        subject="ties",
        item=(1, 2, 2, 3),
        worker=(-1, 5, 6, 5),
        system_a=("p", "p", "p", "p"),
        system_b=("q", "q", "q", "q"),
        choice=("tie", "a", "a", "b"),
        automatic=(True, False, False, False),
        automatic_weight=3,
    )
    result = build_report(data, builders.FAST)
    (pair,) = result["pairwise"]
    assert pair["ties"] == 3 and {pair["wins_a"], pair["wins_b"]} == {2, 1}
    assert result["judgments"] == 3 and result["automatic_ties"] == 1


def test_parameters_are_checked():
    assert normalize_parameters(None)["replicates"] == 1000
    with pytest.raises(ValueError, match="unknown analysis parameter"):
        normalize_parameters({"replicate": 5})
    with pytest.raises(ValueError, match="correction"):
        normalize_parameters({"correction": "fdr"})
    with pytest.raises(ValueError, match="coverage"):
        normalize_parameters({"coverage": 1.5})
    with pytest.raises(ValueError, match="whole number"):
        normalize_parameters({"seed": "x"})


def test_nothing_to_analyse_is_an_error():
    with pytest.raises(NothingToAnalyse):
        build_report(spot_the_bot_data([]))
    humans_only = [("h1", 1, ["human", "human"], 2, ["human", "bot"], {})]
    with pytest.raises(NothingToAnalyse):
        build_report(spot_the_bot_data(humans_only))


def test_the_report_reports_its_stages():
    stages = []
    data = simulate_spot_the_bot(
        builders.small_spot_the_bot_model(conversations_per_pair=3), seed=4
    )
    build_report(data, builders.FAST, progress=stages.append)
    assert stages[0] == "Pairwise win rates" and "Survival analysis" in stages
    assert stages[-1] == "Ranking stability"


def test_stability_works_when_some_pairs_never_met():
    data = simulate_spot_the_bot(builders.small_spot_the_bot_model(), seed=6)
    # Leave out every bot-weak vs bot-strong conversation, as in a bipartite design.
    keep = [
        i
        for i in range(len(data.judgment))
        if {data.system[i], data.opponent[i]} != {"bot-weak", "bot-strong"}
    ]
    columns = {
        name: tuple(getattr(data, name)[i] for i in keep)
        for name in (
            "judgment",
            "worker",
            "conversation",
            "speaker",
            "system",
            "opponent",
            "exchanges",
            "label",
            "opponent_label",
            "preferences",
        )
    }
    partial = SpotTheBotData(subject="partial", features=data.features, **columns)
    result = build_report(partial, builders.FAST)
    assert len(result["pairwise"]) == 3
    met = [p for p in result["pairwise"] if {p["a"], p["b"]} != {"bot-weak", "bot-strong"}]
    assert all(p["wins_a"] + p["wins_b"] > 0 for p in met)
    stability = result["stability"]
    assert stability["n_conversations"][-1] == 6  # every conversation of a pair that met
    assert len(stability["share_reproduced"]) == len(stability["n_conversations"]) == 2
