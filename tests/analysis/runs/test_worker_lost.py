"""A worker process killed in the middle of an analysis, with the real broker and worker
that CI starts (.ci/run): the message is delivered again and one complete run results."""

import os
import signal
import time

import pytest

from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_tournament
from evalhub.celery import app as celery_app
from tests.analysis import builders
from tests.services import require_celery_worker

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

# Enough resampling that the analysis is still running when the test kills its process.
SLOW = {
    "replicates": 100_000,
    "bt_bootstrap": 100_000,
    "alpha_resamples": 100_000,
    "stability_subsamples": 50,
}


@pytest.fixture(autouse=True)
def real_worker():
    require_celery_worker()


def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    return None


def pid_computing(run_id: int) -> int | None:
    for tasks in (celery_app.control.inspect(timeout=1).active() or {}).values():
        for task in tasks:
            if task["name"] == "analysis.tasks.run_analysis" and task["args"] == [run_id]:
                return task["worker_pid"]
    return None


def test_a_killed_worker_s_analysis_is_delivered_again_and_completes_once():
    tournament = builders.spot_the_bot_tournament()
    run = analyze_tournament(tournament, SLOW)
    pid = wait_for(lambda: pid_computing(run.pk), 60)
    assert pid, "no worker took the analysis within 60 s"
    assert wait_for(
        lambda: AnalysisRun.objects.get(pk=run.pk).status == AnalysisRun.Status.RUNNING, 30
    )
    os.kill(pid, signal.SIGKILL)
    done = wait_for(
        lambda: AnalysisRun.objects.get(pk=run.pk).status == AnalysisRun.Status.SUCCEEDED, 600
    )
    assert done, "the analysis was not delivered again and completed within 10 minutes"
    run.refresh_from_db()
    assert run.attempts >= 2 and run.result and run.plots
    assert AnalysisRun.objects.filter(tournament=tournament).count() == 1
