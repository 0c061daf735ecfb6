"""Runs are computed idempotently, failures are recorded and retried, campaigns that finish
are analysed, and excluding blocked workers changes what is analysed."""

from datetime import timedelta

import pytest
from django.utils import timezone

from analysis import tasks
from analysis.inputs import load_inputs
from analysis.models import AnalysisRun
from analysis.reports import NothingToAnalyse
from analysis.tasks import analyze_tournament, run_analysis
from annotation.models import Campaign, Judgment, Worker
from tests.analysis import builders

pytestmark = pytest.mark.django_db


def test_a_run_is_queued_after_commit_and_computed(django_capture_on_commit_callbacks):
    tournament = builders.spot_the_bot_tournament()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        run = analyze_tournament(tournament, builders.FAST)
    assert len(callbacks) == 1
    run.refresh_from_db()
    assert run.status == AnalysisRun.Status.SUCCEEDED
    assert run.result["tournament"] == tournament.slug
    assert {"heatmap", "survival", "cox", "stability"} <= set(run.plots)


def test_running_a_finished_run_again_changes_nothing():
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, builders.FAST, synchronous=True)
    finished = run.finished_at
    assert run_analysis(run.pk) == "skipped"
    run.refresh_from_db()
    assert run.finished_at == finished and run.attempts == 1


def test_a_synchronous_run_reads_the_judgments_once(monkeypatch):
    tournament = builders.spot_the_bot_tournament()
    reads = []

    def counted(*args, **kwargs):
        reads.append(args)
        return load_inputs(*args, **kwargs)

    monkeypatch.setattr(tasks, "load_inputs", counted)
    run = analyze_tournament(tournament, builders.FAST, synchronous=True)
    assert len(reads) == 1
    assert run.status == AnalysisRun.Status.SUCCEEDED and run.result


def test_a_queued_run_reads_the_judgments_again_when_it_runs(monkeypatch):
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, builders.FAST)  # queued, not computed
    reads = []

    def counted(*args, **kwargs):
        reads.append(args)
        return load_inputs(*args, **kwargs)

    monkeypatch.setattr(tasks, "load_inputs", counted)
    assert run_analysis(run.pk) == "succeeded"
    assert len(reads) == 1


def test_a_run_being_computed_elsewhere_is_left_alone_until_it_is_stale():
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, builders.FAST)  # queued on commit: not computed here
    AnalysisRun.objects.filter(pk=run.pk).update(
        status=AnalysisRun.Status.RUNNING, started_at=timezone.now()
    )
    assert run_analysis(run.pk) == "skipped"
    AnalysisRun.objects.filter(pk=run.pk).update(
        started_at=timezone.now() - tasks.stale_after() - timedelta(minutes=1)
    )
    assert run_analysis(run.pk) == "succeeded"


def test_the_stale_time_is_the_setting(settings):
    settings.EVALHUB_ANALYSIS_STALE_SECONDS = 60
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, builders.FAST)  # queued on commit: not computed here
    AnalysisRun.objects.filter(pk=run.pk).update(
        status=AnalysisRun.Status.RUNNING, started_at=timezone.now() - timedelta(seconds=30)
    )
    assert run_analysis(run.pk) == "skipped"
    AnalysisRun.objects.filter(pk=run.pk).update(started_at=timezone.now() - timedelta(seconds=90))
    assert run_analysis(run.pk) == "succeeded"
    assert AnalysisRun.objects.get(pk=run.pk).status == AnalysisRun.Status.SUCCEEDED


def test_a_redelivered_message_takes_over_the_run_of_a_dead_worker():
    """acks_late + reject_on_worker_lost: a killed worker's message comes back marked
    redelivered, and its run, still "running", is computed once more and completes."""
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, builders.FAST)  # queued on commit: not computed here
    AnalysisRun.objects.filter(pk=run.pk).update(
        status=AnalysisRun.Status.RUNNING, started_at=timezone.now(), attempts=1
    )
    run_analysis.push_request(delivery_info={"redelivered": True})
    try:
        assert run_analysis.run(run.pk) == "succeeded"
    finally:
        run_analysis.pop_request()
    run.refresh_from_db()
    assert run.status == AnalysisRun.Status.SUCCEEDED and run.attempts == 2 and run.result
    assert AnalysisRun.objects.filter(tournament=tournament).count() == 1
    assert run_analysis.reject_on_worker_lost and run_analysis.acks_late


def test_a_failure_is_recorded_and_a_retry_succeeds(monkeypatch):
    tournament = builders.spot_the_bot_tournament()

    def broken(*args, **kwargs):
        raise RuntimeError("the survival fit exploded")

    monkeypatch.setattr(tasks, "build_report", broken)
    run = analyze_tournament(tournament, builders.FAST, synchronous=True)
    assert run.status == AnalysisRun.Status.FAILED
    assert run.error == "RuntimeError: the survival fit exploded"
    assert run.finished_at is not None and run.result is None

    monkeypatch.undo()
    retried = analyze_tournament(tournament, builders.FAST, synchronous=True)
    assert retried.pk == run.pk
    assert retried.status == AnalysisRun.Status.SUCCEEDED
    assert retried.error == "" and retried.attempts == 2 and retried.result


def test_judgments_that_change_after_the_request_fail_the_run():
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, builders.FAST)  # queued, not computed
    Judgment.objects.filter(campaign=tournament.campaign).order_by("pk").first().delete()
    assert run_analysis(run.pk) == "failed"
    run.refresh_from_db()
    assert "changed after this analysis was requested" in run.error


def test_excluding_blocked_workers_changes_the_digest_and_the_result():
    tournament = builders.spot_the_bot_tournament()
    Worker.objects.filter(external_id__contains="careless").update(blocked=True)
    everyone = analyze_tournament(tournament, builders.FAST, synchronous=True)
    careful = analyze_tournament(
        tournament, {**builders.FAST, "exclude_blocked": True}, synchronous=True
    )
    assert careful.pk != everyone.pk
    assert careful.inputs_digest != everyone.inputs_digest
    blocked = Judgment.objects.filter(campaign=tournament.campaign, worker__blocked=True).count()
    assert blocked > 0
    assert careful.result["judgments"] == everyone.result["judgments"] - blocked
    assert careful.result["pairwise"] != everyone.result["pairwise"]


def test_finishing_a_tournament_campaign_queues_its_analysis(django_capture_on_commit_callbacks):
    tournament = builders.spot_the_bot_tournament()
    campaign = tournament.campaign
    campaign.status = Campaign.Status.FINISHED
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        campaign.save()
    (run,) = AnalysisRun.objects.filter(tournament=tournament)
    assert run.status == AnalysisRun.Status.PENDING and run.parameters["replicates"] == 1000
    assert len(callbacks) == 1
    # Saving the finished campaign again is not a new finish.
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        campaign.title = "Renamed"
        campaign.save()
    assert callbacks == [] and AnalysisRun.objects.filter(tournament=tournament).count() == 1


def test_other_campaign_changes_do_not_analyse():
    tournament = builders.spot_the_bot_tournament()
    campaign = tournament.campaign
    campaign.status = Campaign.Status.PAUSED
    campaign.save()
    alone = Campaign.objects.create(slug="no-tournament", title="Alone", task_kind="ab")
    alone.status = Campaign.Status.FINISHED
    alone.save()
    assert not AnalysisRun.objects.exists()


def test_a_campaign_finished_without_judgments_is_not_analysed():
    tournament = builders.spot_the_bot_tournament()
    Judgment.objects.filter(campaign=tournament.campaign).delete()
    tournament.campaign.status = Campaign.Status.FINISHED
    tournament.campaign.save()
    assert not AnalysisRun.objects.exists()
    with pytest.raises(NothingToAnalyse):
        analyze_tournament(tournament)


def test_a_missing_run_is_reported():
    assert run_analysis(987654) == "missing"


def test_an_ab_tournament_is_analysed_too():
    tournament = builders.ab_tournament()
    run = analyze_tournament(tournament, builders.FAST, synchronous=True)
    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    assert run.result["kind"] == "ab" and run.result["systems"][0] == "ab-strong"
    assert "heatmap" in run.plots and "survival" not in run.plots


def test_library_versions_are_read_once_per_process(monkeypatch):
    looked_up = []
    monkeypatch.setattr(tasks.metadata, "version", lambda name: looked_up.append(name) or "1.0")
    tasks._installed_versions.cache_clear()
    try:
        first = tasks.library_versions(plotted=True)
        first["numpy"] = "changed by a caller"
        second = tasks.library_versions(plotted=True)
    finally:
        tasks._installed_versions.cache_clear()
    assert sorted(looked_up) == sorted([*tasks._LIBRARIES, "evalhub"])
    assert second == {**dict.fromkeys(tasks._LIBRARIES, "1.0"), "evalhub": "1.0"}
