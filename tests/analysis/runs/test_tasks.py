"""Runs are computed idempotently, failures are recorded and retried, campaigns that finish
are analysed, and excluding blocked workers changes what is analysed."""

import socket
import subprocess
import sys

import pytest

from analysis.inputs.judgments import load_inputs
from analysis.models import AnalysisRun
from analysis.reports import NothingToAnalyse
from analysis.runs import tasks
from analysis.runs.tasks import analyze_tournament, run_analysis
from annotation.models import Campaign, Judgment, Worker
from evalhub.models import Lease
from tests import factories
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


def test_a_run_whose_lease_is_live_elsewhere_is_left_alone():
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, builders.FAST)  # queued on commit: not computed here
    AnalysisRun.objects.filter(pk=run.pk).update(status=AnalysisRun.Status.RUNNING, attempts=1)
    factories.lease(f"analysis-run:{run.pk}")
    assert run_analysis(run.pk) == "skipped"
    run.refresh_from_db()
    assert run.status == AnalysisRun.Status.RUNNING and run.attempts == 1 and run.result is None


def test_a_run_whose_lease_lapsed_is_taken_over_and_computed_once():
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, builders.FAST)  # queued on commit: not computed here
    AnalysisRun.objects.filter(pk=run.pk).update(status=AnalysisRun.Status.RUNNING, attempts=1)
    factories.lease(f"analysis-run:{run.pk}", lapsed=True)
    assert run_analysis(run.pk) == "succeeded"
    assert run_analysis(run.pk) == "skipped"
    run.refresh_from_db()
    assert run.status == AnalysisRun.Status.SUCCEEDED and run.attempts == 2 and run.result
    assert AnalysisRun.objects.filter(tournament=tournament).count() == 1
    assert not Lease.objects.exists()


def test_a_redelivered_message_takes_over_at_once_the_run_of_a_dead_process_of_this_host():
    """acks_late + reject_on_worker_lost: a killed worker process's message comes back at
    once, and its lease, still live but owned by a process gone from this host, is taken."""
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, builders.FAST)  # queued on commit: not computed here
    AnalysisRun.objects.filter(pk=run.pk).update(status=AnalysisRun.Status.RUNNING, attempts=1)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    factories.lease(f"analysis-run:{run.pk}", owner=f"{socket.gethostname()}:{gone.pid}:dead")
    assert run_analysis(run.pk) == "succeeded"
    run.refresh_from_db()
    assert run.status == AnalysisRun.Status.SUCCEEDED and run.attempts == 2 and run.result
    assert run_analysis.reject_on_worker_lost and run_analysis.acks_late


def test_the_sweep_queues_running_runs_whose_lease_lapsed(monkeypatch):
    tournament = builders.spot_the_bot_tournament()
    dead = analyze_tournament(tournament, builders.FAST)
    alive = analyze_tournament(tournament, {**builders.FAST, "replicates": 7})
    AnalysisRun.objects.filter(pk__in=[dead.pk, alive.pk]).update(status=AnalysisRun.Status.RUNNING)
    factories.lease(f"analysis-run:{dead.pk}", lapsed=True)
    factories.lease(f"analysis-run:{alive.pk}")
    queued = []
    monkeypatch.setattr(tasks, "enqueue", lambda task, pk: queued.append(pk) or True)
    assert tasks.requeue_pending_analyses() == 1
    assert queued == [dead.pk]
    assert AnalysisRun.objects.get(pk=dead.pk).status == AnalysisRun.Status.RUNNING


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


def test_a_failed_run_tells_who_asked_for_it(monkeypatch):
    from evalhub.models import Notice

    owner = factories.user("owner")
    tournament = builders.spot_the_bot_tournament(owner=owner)

    def broken(*args, **kwargs):
        raise RuntimeError("the survival fit exploded")

    monkeypatch.setattr(tasks, "build_report", broken)
    run = analyze_tournament(tournament, builders.FAST, synchronous=True, user=owner)

    [notice] = Notice.objects.filter(user=owner, kind="analysis_failed")
    assert run.status == AnalysisRun.Status.FAILED
    assert notice.text.endswith("failed: RuntimeError: the survival fit exploded")
    assert notice.url == tournament.get_absolute_url()


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


def test_the_tasks_keep_the_names_queued_messages_and_beat_use():
    # The module moved from analysis/tasks.py; a message queued before the move names the
    # task as it was, and so do evalhub/celery.py's routes, limits and beat schedule.
    from evalhub.celery import app

    assert run_analysis.name == "analysis.tasks.run_analysis"
    assert tasks.requeue_pending_analyses.name == "analysis.tasks.requeue_pending_analyses"
    app.loader.import_default_modules()
    scheduled = {entry["task"] for entry in app.conf.beat_schedule.values()}
    named = set(app.conf.task_routes) | set(app.conf.task_annotations) | scheduled
    assert {name for name in named if name.startswith("analysis.")} <= set(app.tasks)
