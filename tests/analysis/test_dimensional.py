"""Analysis runs of ABC-Eval, Likert and comparative campaigns and of imported studies, on a
made-up study whose counts are known (tests/analysis/dimensional_builders.py)."""

import math

import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_campaign, analyze_study
from annotation.models import Campaign
from tests.analysis.dimensional_builders import FAST, imported_study

pytestmark = pytest.mark.django_db


def study_run(**parameters):
    study = imported_study()
    run = analyze_study(study, {**FAST, **parameters}, synchronous=True)
    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    return study, run


def rate(result, system, label):
    [row] = [
        r for r in result["behaviours"]["rates"] if r["system"] == system and r["label"] == label
    ]
    return row


def test_a_study_run_belongs_to_the_study_and_is_reused():
    study, run = study_run()
    assert run.study == study and run.campaign is None and run.tournament is None
    assert run.result["kind"] == "study"
    assert {c["kind"] for c in run.result["campaigns"]} == {"abc_eval", "likert", "comparative"}
    assert analyze_study(study, FAST, synchronous=True).pk == run.pk
    assert AnalysisRun.objects.filter(study=study).count() == 1


def test_behaviour_rates_count_one_annotation_per_conversation_with_wilson_intervals():
    _, run = study_run()
    # The paper's design: 6 conversations x 4 bot turns, first annotation; "ignore" in 6 of
    # bot-good's turns, 18 of bot-bad's (the second annotations serve agreement).
    for system, present in (("bot-good", 6), ("bot-bad", 18)):
        row = rate(run.result, system, "ignore")
        low, high = proportion_confint(present, 24, method="wilson")
        assert (row["n_turns"], row["n_present"], row["design_effect"]) == (24, present, 1.0)
        assert row["low"] == pytest.approx(low) and row["high"] == pytest.approx(high)
        assert row["group"] == "undesirable"
    assert rate(run.result, "bot-good", "empathetic")["group"] == "desirable"
    behaviours = run.result["behaviours"]
    assert (behaviours["annotations_used"], behaviours["unit"]) == ("first", "bot turn")


def test_every_annotation_is_a_parameter_and_clustered_by_turn():
    _, run = study_run(annotations="all")
    row = rate(run.result, "bot-bad", "ignore")
    # 48 (turn, annotation) observations of 24 turns: the design effect of the turns.
    assert (row["n_turns"], row["n_present"], row["clusters"]) == (48, 34, 24)
    low, high = proportion_confint(34 / row["design_effect"], row["effective_n"], method="wilson")
    assert row["effective_n"] == pytest.approx(48 / row["design_effect"])
    # Identical annotations would be worth 24 turns; the disagreeing one adds a little.
    assert 24 < row["effective_n"] < 36
    assert row["low"] == pytest.approx(low) and row["high"] == pytest.approx(high)
    assert run.result["behaviours"]["annotations_used"] == "all"


def test_behaviour_agreement_is_alpha_per_label_over_doubly_annotated_conversations():
    _, run = study_run()
    alpha = {row["label"]: row for row in run.result["behaviours"]["agreement"]}
    assert alpha["empathetic"]["alpha"] == pytest.approx(1.0)  # both annotators agree
    assert alpha["ignore"]["alpha"] < 1.0
    assert alpha["ignore"]["conversations"] == 12 and alpha["ignore"]["turns"] == 48


def test_behaviour_comparisons_and_table_5_counts():
    _, run = study_run()
    [test] = [r for r in run.result["behaviours"]["comparisons"] if r["label"] == "ignore"]
    table = stats.chi2_contingency([[6, 18], [18, 6]], correction=False)
    assert test["p_value"] == pytest.approx(table.pvalue)
    counts = {
        (r["metric"], r["alpha"]): r["significant"] for r in run.result["behaviours"]["sensitivity"]
    }
    assert counts[("ignore", 0.01)] == 1


def test_likert_means_have_student_t_intervals():
    _, run = study_run()
    means = {(r["system"], r["dimension"]): r for r in run.result["likert"]["means"]}
    row = means[("bot-good", "quality")]
    # One rating per dialogue (the paper's design), not both workers' ratings.
    assert (row["n"], row["ratings"], row["unit"]) == (6, 6, "conversation")
    assert 4 <= row["mean"] <= 5
    half = stats.t.ppf(0.975, 5) * row["sd"] / math.sqrt(6)
    assert row["high"] - row["mean"] == pytest.approx(half)
    [test] = [r for r in run.result["likert"]["comparisons"] if r["dimension"] == "quality"]
    assert test["p_value"] < 1e-6


def test_comparative_wins_ties_losses_with_a_sign_test():
    _, run = study_run()
    [row] = [r for r in run.result["comparative"]["results"] if r["dimension"] == "quality"]
    # Alphabetical orientation: bot-bad is a, and loses all 6 pairs on quality (each judged
    # twice: one unit, its first verdict).
    assert (row["a"], row["b"], row["n"], row["judgments"]) == ("bot-bad", "bot-good", 6, 12)
    assert (row["wins"]["count"], row["ties"]["count"], row["losses"]["count"]) == (0, 0, 6)
    assert row["p_value"] == pytest.approx(stats.binomtest(0, 6).pvalue)


def test_validity_fits_quality_on_behaviours_and_likert_dimensions():
    _, run = study_run()
    validity = run.result["validity"]
    methods = {row["method"] for row in validity["predictive"]}
    assert {"abc_eval", "likert"} <= methods
    [ignore] = [r for r in validity["predictive"] if r["metric"] == "ignore"]
    assert ignore["n"] == 12 and ignore["fit"] > 0.5  # bot-bad ignores more and rates lower
    paths = {path["method"]: path["steps"] for path in validity["incremental"]}
    assert paths["abc_eval"][0]["predictors"] == ["empathetic", "ignore"]
    assert len(paths["abc_eval"][-1]["predictors"]) == 1


def test_a_campaign_run_belongs_to_the_campaign_alone():
    study = imported_study()
    campaign = Campaign.objects.get(study=study, task_kind="likert")
    run = analyze_campaign(campaign, FAST, synchronous=True)
    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    assert run.campaign == campaign and run.tournament is None and run.study is None
    assert run.result["kind"] == "likert" and run.result["subject"] == campaign.slug
    assert run.result["judgments"] == 24
    assert analyze_campaign(campaign, FAST, synchronous=True).pk == run.pk


def test_plots_are_drawn_for_every_section():
    _, run = study_run()
    assert {
        "behaviours-undesirable",
        "behaviours-desirable",
        "likert-dialogue",
        "comparative",
        "agreement",
    } <= set(run.plots)
    # Text stays text: the legend names both systems, the axis the behaviour.
    svg = run.plots["behaviours-undesirable"]
    assert "bot-good" in svg and "bot-bad" in svg and ">ignore<" in svg


def test_a_live_likert_campaign_is_analysed_when_it_finishes(django_capture_on_commit_callbacks):
    study = imported_study()
    assert not AnalysisRun.objects.exists()  # importing a study analyses nothing by itself
    campaign = Campaign.objects.get(study=study, task_kind="likert")
    Campaign.objects.filter(pk=campaign.pk).update(study=None, status=Campaign.Status.LIVE)
    campaign.refresh_from_db()
    campaign.status = Campaign.Status.FINISHED
    with django_capture_on_commit_callbacks(execute=True):
        campaign.save()
    run = AnalysisRun.objects.get(campaign=campaign, tournament=None)
    assert run.status == AnalysisRun.Status.SUCCEEDED and run.result["kind"] == "likert"
