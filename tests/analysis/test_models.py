import pytest
from django.db import IntegrityError, transaction

from analysis.models import AnalysisRun, RunIsFinal
from analysis.runs.tasks import analyze_tournament
from tests.analysis import builders

pytestmark = pytest.mark.django_db


def test_the_same_inputs_and_parameters_reuse_the_run():
    tournament = builders.spot_the_bot_tournament()
    first = analyze_tournament(tournament, builders.FAST, synchronous=True)
    second = analyze_tournament(tournament, builders.FAST, synchronous=True)
    assert first.status == AnalysisRun.Status.SUCCEEDED
    assert second.pk == first.pk
    assert AnalysisRun.objects.filter(tournament=tournament).count() == 1


def test_other_parameters_make_another_run():
    tournament = builders.spot_the_bot_tournament()
    first = analyze_tournament(tournament, builders.FAST, synchronous=True)
    other = analyze_tournament(tournament, {**builders.FAST, "seed": 7}, synchronous=True)
    assert other.pk != first.pk
    assert other.inputs_digest == first.inputs_digest
    assert other.parameters_digest != first.parameters_digest
    assert other.parameters["seed"] == 7 and first.parameters["seed"] == 0


def test_a_run_records_parameters_versions_and_timing():
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, builders.FAST, synchronous=True)
    assert run.parameters["replicates"] == 100 and run.parameters["correction"] == "holm"
    assert run.parameters["exclude_blocked"] is False
    assert set(run.versions) == {"numpy", "scipy", "matplotlib", "evalhub"}
    assert run.versions["evalhub"] and run.versions["numpy"]
    assert run.started_at <= run.finished_at and run.seconds >= 0
    assert len(run.inputs_digest) == 64 and run.progress == "Done"


def test_a_succeeded_run_is_final():
    run = builders.stored_run(builders.bare_tournament())
    run = AnalysisRun.objects.get(pk=run.pk)
    run.result = {"tampered": True}
    with pytest.raises(RunIsFinal):
        run.save()
    assert AnalysisRun.objects.get(pk=run.pk).result != {"tampered": True}


def test_a_failed_run_can_be_saved_again():
    run = builders.stored_run(builders.bare_tournament(), status=AnalysisRun.Status.FAILED)
    run = AnalysisRun.objects.get(pk=run.pk)
    run.status = AnalysisRun.Status.PENDING
    run.save()
    assert AnalysisRun.objects.get(pk=run.pk).status == AnalysisRun.Status.PENDING


def test_the_database_refuses_a_duplicate_run():
    tournament = builders.bare_tournament()
    builders.stored_run(tournament, inputs_digest="same")
    with pytest.raises(IntegrityError), transaction.atomic():
        builders.stored_run(tournament, inputs_digest="same")


def test_a_run_needs_a_tournament_or_a_campaign():
    with pytest.raises(IntegrityError), transaction.atomic():
        AnalysisRun.objects.create(parameters={}, parameters_digest="p", inputs_digest="i")


def test_latest_succeeded_ignores_failed_and_pending_runs():
    tournament = builders.bare_tournament()
    good = builders.stored_run(tournament)
    builders.stored_run(tournament, status=AnalysisRun.Status.FAILED, error="boom")
    builders.stored_run(tournament, status=AnalysisRun.Status.PENDING)
    assert tournament.analysis_runs.latest_succeeded() == good
