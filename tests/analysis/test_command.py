"""`manage.py analyze <slug> --json OUT.json [--exclude-blocked]`."""

import json

import pytest
from django.core.management import CommandError, call_command

from analysis.models import AnalysisRun
from annotation.models import Worker
from tests.analysis import builders

pytestmark = pytest.mark.django_db


FAST_OPTIONS = [f"--param={name}={value}" for name, value in builders.FAST.items()]


def analyze(slug, out, *options):
    call_command("analyze", slug, "--json", str(out), *FAST_OPTIONS, *options)
    return json.loads(out.read_text())


def test_it_writes_the_result_contract(tmp_path):
    tournament = builders.spot_the_bot_tournament()
    result = analyze(tournament.slug, tmp_path / "out.json")
    run = AnalysisRun.objects.get(tournament=tournament)
    assert run.status == AnalysisRun.Status.SUCCEEDED
    assert result["tournament"] == tournament.slug and result["run"]["id"] == run.pk
    assert result["ranking"] == run.result["ranking"]
    assert result["run"]["parameters"]["stability_subsamples"] == 2
    # The same judgments and settings: the stored run is reused.
    assert analyze(tournament.slug, tmp_path / "again.json")["run"]["id"] == run.pk


def test_excluding_blocked_workers_is_another_run(tmp_path):
    tournament = builders.spot_the_bot_tournament()
    Worker.objects.filter(external_id__contains="careless").update(blocked=True)
    everyone = analyze(tournament.slug, tmp_path / "all.json")
    careful = analyze(tournament.slug, tmp_path / "careful.json", "--exclude-blocked")
    assert careful["run"]["parameters"]["exclude_blocked"] is True
    assert careful["run"]["inputs_digest"] != everyone["run"]["inputs_digest"]
    assert careful["judgments"] < everyone["judgments"]


def test_it_refuses_an_unknown_tournament(tmp_path):
    with pytest.raises(CommandError, match="No tournament"):
        analyze("nope", tmp_path / "out.json")


def test_it_explains_a_tournament_without_campaign(tmp_path):
    tournament = builders.bare_tournament()
    with pytest.raises(CommandError, match="has no campaign"):
        analyze(tournament.slug, tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()


def test_a_failed_analysis_is_an_error(tmp_path, monkeypatch):
    tournament = builders.spot_the_bot_tournament()

    def broken(*args, **kwargs):
        raise ArithmeticError("diverged")

    monkeypatch.setattr("analysis.runs.tasks.build_report", broken)
    with pytest.raises(CommandError, match="ArithmeticError: diverged"):
        analyze(tournament.slug, tmp_path / "out.json")


def test_parameters_are_checked(tmp_path):
    tournament = builders.spot_the_bot_tournament()
    with pytest.raises(CommandError, match="correction must be one of"):
        analyze(tournament.slug, tmp_path / "out.json", "--param", "correction=fdr")
    with pytest.raises(CommandError, match="NAME=VALUE"):
        analyze(tournament.slug, tmp_path / "out.json", "--param", "replicates")
    assert not AnalysisRun.objects.exists()


def test_seed_and_replicates_reach_the_run(tmp_path):
    tournament = builders.spot_the_bot_tournament()
    result = analyze(tournament.slug, tmp_path / "out.json", "--seed", "5", "--replicates", "60")
    assert result["run"]["parameters"]["seed"] == 5
    assert result["run"]["parameters"]["replicates"] == 60


def test_a_misspelt_or_out_of_range_param_is_refused_by_name(tmp_path):
    tournament = builders.spot_the_bot_tournament()
    with pytest.raises(CommandError, match="'replicate' is an unknown analysis parameter"):
        analyze(tournament.slug, tmp_path / "out.json", "--param", "replicate=5")
    with pytest.raises(CommandError, match="replicates must be from 1 to 100000, got 0"):
        analyze(tournament.slug, tmp_path / "out.json", "--param", "replicates=0")
    assert not AnalysisRun.objects.exists()


def test_it_analyses_a_study_and_a_campaign_by_slug(tmp_path):
    from annotation.models import Campaign
    from tests.analysis.dimensional_builders import FAST, imported_study

    study = imported_study(slug="made-up")
    options = [f"--param={name}={value}" for name, value in FAST.items()]
    call_command("analyze", "made-up", "--json", str(tmp_path / "s.json"), *options)
    result = json.loads((tmp_path / "s.json").read_text())
    assert result["kind"] == "study" and result["run"]["id"] == study.analysis_runs.get().pk
    campaign = Campaign.objects.get(study=study, task_kind="comparative")
    out = tmp_path / "c.json"
    call_command("analyze", campaign.slug, "--kind", "campaign", "--json", str(out), *options)
    assert json.loads(out.read_text())["kind"] == "comparative"
    assert AnalysisRun.objects.filter(campaign=campaign, tournament=None).count() == 1


def test_the_kind_restricts_where_the_slug_is_looked_up(tmp_path):
    from tests.analysis.dimensional_builders import imported_study

    imported_study(slug="made-up")
    with pytest.raises(CommandError, match="No campaign with the slug 'made-up'"):
        analyze("made-up", tmp_path / "out.json", "--kind", "campaign")


def test_the_published_preset_from_the_command_line(tmp_path):
    tournament = builders.spot_the_bot_tournament()
    result = analyze(
        tournament.slug,
        tmp_path / "out.json",
        "--preset",
        "as-published",
        "--param",
        "logrank_imputations=5",
    )
    parameters = result["run"]["parameters"]
    assert parameters["pair_test"] == "chi-square-2x2" and parameters["correction"] == "bonferroni"
    assert parameters["logrank_variance"] == "zhao-sun" and parameters["logrank_imputations"] == 5
    assert result["survival"]["logrank_variance"] == "zhao-sun"


def test_it_writes_the_contract_without_drawing_the_plots(tmp_path):
    tournament = builders.spot_the_bot_tournament()
    result = analyze(tournament.slug, tmp_path / "out.json")
    run = AnalysisRun.objects.get(tournament=tournament)
    assert run.plots == {} and "matplotlib" not in run.versions
    assert result["ranking"] == run.result["ranking"]


def test_plots_draws_them_before_writing(tmp_path):
    tournament = builders.spot_the_bot_tournament()
    without = analyze(tournament.slug, tmp_path / "out.json")
    with_plots = analyze(tournament.slug, tmp_path / "plots.json", "--plots")
    run = AnalysisRun.objects.get(tournament=tournament)
    assert with_plots["run"]["id"] == without["run"]["id"] == run.pk
    assert with_plots["ranking"] == without["ranking"]
    assert set(run.plots) >= {"heatmap", "survival"} and "matplotlib" in run.versions
