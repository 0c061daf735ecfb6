"""The Spot The Bot report and the result contract: keys, types, hand-counted numbers, NaN as
null, errors."""

import json
import math

import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from analysis.reports import (
    NothingToAnalyse,
    SpotTheBotData,
    build_report,
    json_safe,
)
from analysis.runs.parameters import PRESETS
from demo.simulation import simulate_spot_the_bot
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


def test_the_published_preset_runs_the_papers_tests(simulated):
    """As published: the 2x2 chi-square test with Yates' correction per pair, Bonferroni
    over the pairs, Zhao & Sun's log-rank variance; defaults stay as they were."""
    data, default = simulated
    published = build_report(
        data, {**builders.FAST, **PRESETS["as-published"], "logrank_imputations": 10}
    )
    assert default["survival"]["logrank_variance"] == "permutation"
    assert published["survival"]["logrank_variance"] == "zhao-sun"
    for row in published["pairwise"]:
        n = row["wins_a"] + row["wins_b"] + row["ties"]
        table = [[row["wins_a"], row["wins_b"]], [n - row["wins_a"], n - row["wins_b"]]]
        assert row["p_value"] == pytest.approx(stats.chi2_contingency(table).pvalue)
        assert row["p_adjusted"] == pytest.approx(
            min(1.0, row["p_value"] * len(published["pairwise"]))
        )
    by_pair = {(t["a"], t["b"]): t for t in default["survival"]["logrank"]}
    for test in published["survival"]["logrank"]:
        assert test["statistic"] != pytest.approx(by_pair[test["a"], test["b"]]["statistic"])


def test_self_play_counts_for_the_system_and_never_makes_a_pair():
    judgments = [
        ("c1", 1, ["x", "y"], 2, ["human", "bot"], {"fluency": 0}),
        ("c2", 2, ["y", "x"], 2, ["bot", "unsure"], {"fluency": 1}),
        ("s1", 1, ["x", "x"], 2, ["human", "bot"], {"fluency": 0}),  # self-play
        ("s2", 3, ["y", "y"], 3, ["bot", "bot"], {}),  # self-play
    ]
    result = build_report(spot_the_bot_data(judgments), builders.FAST)
    assert [(p["a"], p["b"]) for p in result["pairwise"]] == [("x", "y")]
    pair = result["pairwise"][0]
    assert (pair["wins_a"], pair["wins_b"], pair["ties"]) == (2, 0, 0)
    # x's own figures hold its two self-play speakers: 2 + 2 judged, 2 human.
    assert result["scores"]["x"] | {"ci": None} == {
        "judged": 4,
        "human": 2,
        "unsure": 1,
        "bot": 1,
        "share_human": 0.5,
        "ci": None,
        "conversations": 3,
        "self_play_judged": 2,
    }
    assert result["survival"]["spotted"]["y"] == [[2, 2], [2, 2]]  # k = 2, k = 3
    assert result["features"]["win_rates"]["x"]["fluency"]["wins"] == 2  # s1 not counted


def test_a_self_play_tournament_is_scored_without_a_ranking():
    judgments = [
        ("s1", 1, ["x", "x"], 2, ["human", "human"], {}),
        ("s2", 2, ["y", "y"], 2, ["bot", "unsure"], {}),
        ("s3", 2, ["x", "x"], 3, ["human", "bot"], {}),
    ]
    result = build_report(spot_the_bot_data(judgments), builders.FAST)
    assert result["pairwise"] == [] and result["ranking"] == []
    assert result["systems"] == ["x", "y"]  # by share judged human
    assert result["scores"]["x"]["share_human"] == 0.75
    assert result["scores"]["y"]["bot"] == 1
    assert result["survival"]["curves"].keys() == {"x", "y"}
    assert any("self-play only" in w for w in result["warnings"])


def test_bipartite_play_partners_are_reported_apart_and_never_ranked():
    data = spot_the_bot_data(
        [
            (f"{t}-{p}-{n}", n, [t, p], 2, labels, {})
            for t, p, labels in [
                ("good", "alpha", ["human", "bot"]),
                ("good", "beta", ["human", "unsure"]),
                ("poor", "alpha", ["bot", "human"]),
                ("poor", "beta", ["bot", "bot"]),
            ]
            for n in range(6)
        ]
    )
    data = SpotTheBotData(**{**data.__dict__, "partners": ("alpha", "beta", "absent")})
    result = build_report(data, builders.FAST)
    assert result["systems"] == ["good", "poor"]
    assert [row["system"] for row in result["ranking"]] == ["good", "poor"]
    assert [row["cluster"] for row in result["ranking"]][0] == 1
    assert all(row["rank_range"][0] >= 1 for row in result["ranking"])
    assert {row["system"] for row in result["bradley_terry"]} == {"good", "poor"}
    assert min(row["rank"] for row in result["bradley_terry"]) == 1
    partners = {row["system"]: row for row in result["partners"]}
    assert partners.keys() == {"alpha", "beta"}
    # alpha: beaten by good 6 times, beat poor 6 times.
    assert (partners["alpha"]["wins"], partners["alpha"]["losses"]) == (6, 6)
    assert (partners["beta"]["wins"], partners["beta"]["ties"]) == (0, 6)
    assert "alpha" not in result["scores"] and "alpha" not in result["survival"]["curves"]
    # No pairwise row ranks a partner; its matches are listed with it, per target.
    assert result["pairwise"] == []
    against = {row["target"]: row for row in partners["alpha"]["against"]}
    assert (against["good"]["target_wins"], against["good"]["partner_wins"]) == (6, 0)
    assert (against["poor"]["target_wins"], against["poor"]["partner_wins"]) == (0, 6)


def test_the_stability_ranked_in_another_process_gives_the_same_report(monkeypatch):
    from analysis.reports import spot_the_bot
    from analysis.runs import background

    data = simulate_spot_the_bot(builders.small_spot_the_bot_model(), seed=5)
    here = build_report(data, builders.FAST)
    parts = []
    start = background.start

    def spy(*args, **kwargs):
        parts.append(start(*args, **kwargs))
        return parts[-1]

    monkeypatch.setattr(background, "start", spy)
    monkeypatch.setattr(background, "can_fork", lambda: True)
    monkeypatch.setattr(spot_the_bot, "_MATCHES_WORTH_A_PROCESS", 1)
    elsewhere = build_report(data, builders.FAST)
    assert [type(part) for part in parts] == [background._Forked]
    assert json.dumps(json_safe(elsewhere)) == json.dumps(json_safe(here))
    assert len(here["stability"]["share_reproduced"]) == builders.FAST["stability_points"]


def test_a_small_tournament_s_stability_is_ranked_here(monkeypatch):
    from analysis.runs import background

    parts = []
    start = background.start
    monkeypatch.setattr(background, "start", lambda *a, **k: parts.append(k) or start(*a, **k))
    build_report(simulate_spot_the_bot(builders.small_spot_the_bot_model(), seed=5), builders.FAST)
    assert parts == [{"worth_a_process": False}]


def test_each_stability_point_has_a_wilson_interval_and_enough_subsamples():
    data = simulate_spot_the_bot(builders.small_spot_the_bot_model(), seed=5)
    params = {**builders.FAST, "stability_subsamples": 400, "stability_precision": 0.1}
    result = build_report(data, params)
    stability = result["stability"]
    assert (stability["precision"], stability["subsamples"]) == (0.1, 400)
    for share, low, high, drawn in zip(
        stability["share_reproduced"],
        stability["reproduced_low"],
        stability["reproduced_high"],
        stability["subsamples_drawn"],
        strict=True,
    ):
        reproduced = round(share * drawn)
        expected = proportion_confint(reproduced, drawn, method="wilson")
        assert (low, high) == pytest.approx(expected, abs=1e-12)
        # Drawn 50 at a time until the interval is within ±0.1 of the share.
        assert drawn % 50 == 0 and max(share - low, high - share) <= 0.1
    assert not any("pin the share down" in warning for warning in result["warnings"])


def test_a_cap_too_low_for_the_precision_is_said():
    data = simulate_spot_the_bot(builders.small_spot_the_bot_model(), seed=5)
    result = build_report(data, builders.FAST)  # at most 2 subsamples per point
    assert result["stability"]["subsamples_drawn"] == [2, 2]
    assert any("do not pin the share down to ±0.05" in w for w in result["warnings"])
