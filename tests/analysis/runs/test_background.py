"""A report's costly part runs in a forked process on a second core, or here when it cannot."""

import gc
import json
import multiprocessing.util
import os
import time

import pytest

from analysis.runs import background
from annotation.models import Campaign

needs_fork = pytest.mark.skipif(
    not background.can_fork(), reason="no second core or no fork on this machine"
)


def pid_and(value):
    return os.getpid(), value


def fail(message):
    raise ValueError(message)


@needs_fork
def test_a_part_worth_a_process_runs_in_another_process():
    part = background.start(pid_and, 42)
    pid, value = part.result()
    assert value == 42
    assert pid != os.getpid()


@needs_fork
def test_an_error_in_the_other_process_is_raised_by_result():
    part = background.start(fail, "no subsample")
    with pytest.raises(ValueError, match="no subsample"):
        part.result()


def test_a_part_not_worth_a_process_is_computed_here_when_asked():
    calls = []
    part = background.start(lambda: calls.append(os.getpid()) or "done", worth_a_process=False)
    assert calls == []
    assert part.result() == "done"
    assert calls == [os.getpid()]


def test_with_a_single_core_the_part_is_computed_here(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert not background.can_fork()
    assert background.start(pid_and, 1).result() == (os.getpid(), 1)


def test_without_fork_the_part_is_computed_here(monkeypatch):
    monkeypatch.delattr(os, "fork")
    assert not background.can_fork()
    assert background.start(pid_and, 2).result() == (os.getpid(), 2)


def sleep_and_return(seconds):
    time.sleep(seconds)
    return seconds


@needs_fork
def test_a_part_whose_result_is_never_asked_for_is_stopped():
    part = background.start(sleep_and_return, 60)
    pid = part.pid
    os.kill(pid, 0)  # running
    del part
    gc.collect()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # stopped and reaped


class Hooked:
    """An object whose after-fork hook (as kombu's connection pools register) leaves a mark."""

    def __init__(self, mark):
        self.mark = mark
        multiprocessing.util.register_after_fork(self, Hooked.leave_mark)

    def leave_mark(self):
        self.mark.write_text("the hook ran")


@needs_fork
def test_the_child_runs_no_after_fork_hook(tmp_path):
    hooked = Hooked(tmp_path / "mark")
    assert background.start(pid_and, 4).result()[1] == 4
    assert not hooked.mark.exists()


@needs_fork
def test_a_child_that_dies_is_an_error_not_a_hang():
    part = background.start(os._exit, 3)
    with pytest.raises(ChildProcessError, match="exit code 3"):
        part.result()


@needs_fork
@pytest.mark.django_db
def test_the_database_connection_still_works_after_a_forked_part():
    Campaign.objects.count()  # the connection is open when the process forks
    assert background.start(pid_and, 3).result()[1] == 3
    assert Campaign.objects.count() == 0


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_celery_worker_ranks_a_large_tournament_s_stability_in_a_forked_process():
    """Prefork workers are daemonic processes, from which the standard library refuses to
    fork: the report's part must still run there (CI's worker has two cores)."""
    from analysis.inputs.judgments import load_inputs
    from analysis.models import AnalysisRun
    from analysis.reports import build_report, json_safe
    from analysis.reports import spot_the_bot as report
    from analysis.runs.tasks import analyze_tournament
    from tests.analysis import builders
    from tests.services import require_celery_worker

    require_celery_worker()
    model = builders.small_spot_the_bot_model(conversations_per_pair=30)
    tournament = builders.spot_the_bot_tournament(model=model)
    inputs = load_inputs(tournament)
    bots = (inputs.system != "human") & (inputs.opponent != "human")
    assert ((inputs.speaker == 0) & bots & (inputs.system != inputs.opponent)).sum() > 500
    run = analyze_tournament(tournament, builders.FAST)
    deadline = time.monotonic() + 120
    waiting = (AnalysisRun.Status.PENDING, AnalysisRun.Status.RUNNING)
    while AnalysisRun.objects.get(pk=run.pk).status in waiting:
        assert time.monotonic() < deadline, "the worker did not analyse within 2 minutes"
        time.sleep(0.2)
    run.refresh_from_db()
    assert run.status == AnalysisRun.Status.SUCCEEDED, run.error
    here = json_safe(build_report(inputs, run.parameters))
    assert report._MATCHES_WORTH_A_PROCESS <= 500
    assert run.result["stability"] == json.loads(json.dumps(here["stability"]))
