"""``kill -9`` of a Celery worker in the middle of a collection, a judge run and an
analysis, on PostgreSQL and Redis with real worker processes: another worker takes the
work over through its lapsed lease (evalhub/leases.py) and finishes it within two minutes,
with no row lost or duplicated.

The test starts its own workers (their own names, the usual queues) so that it can kill a
whole worker, parent and pool, as an operator's ``kill -9`` or a lost machine would: its
unacknowledged message then stays with Redis until the visibility timeout, and only the
lease sweep of the next worker brings the work back. Where CI's shared worker took the
work instead, its pool process is killed (its parent hands the message back at once).
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from analysis.models import AnalysisRun
from analysis.runs.tasks import analyze_tournament
from endpoints.models import BotEndpoint
from evalhub.celery import app as celery_app
from evalhub.models import Conversation, Lease, Speaker, Turn
from judging import runs
from judging.models import AutomaticJudgment, JudgeRun
from tests import factories
from tests.analysis import builders as analysis_builders
from tests.endpoints import bots, openai_fake
from tests.judging import builders as judging_builders
from tests.judging import fake_judges
from tests.services import required
from tournaments import tasks as tournament_tasks
from tournaments.models import PlannedDialogue, Tournament

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

TAKEOVER_SECONDS = 120
CELERY = Path(sys.executable).with_name("celery")
ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"


@pytest.fixture(autouse=True)
def real_services():
    """The broker and a database the worker processes share with this test."""
    if not settings.CELERY_BROKER_URL:
        message = "needs CELERY_BROKER_URL and PostgreSQL (.ci/run sets both)"
        if required("EVALHUB_REQUIRE_SERVICES"):
            pytest.fail(f"EVALHUB_REQUIRE_SERVICES is set but this test {message}")
        pytest.skip(message)
    if connection.vendor != "postgresql" or not required("EVALHUB_USE_EXISTING_DB"):
        pytest.fail(
            "Worker processes must share the test database: PostgreSQL with "
            "EVALHUB_USE_EXISTING_DB=1, as .ci/run runs it."
        )


class Workers:
    """Celery workers this test starts, each in a process group of its own."""

    def __init__(self, name: str):
        self.name = name
        self.started: list[subprocess.Popen] = []

    def start(self) -> subprocess.Popen:
        n = len(self.started) + 1
        hostname = f"lease-test-{os.getpid()}-{self.name}-{n}@%h"
        ARTIFACTS.mkdir(exist_ok=True)
        log = open(ARTIFACTS / f"lease-worker-{self.name}-{n}.log", "wb")  # noqa: SIM115
        process = subprocess.Popen(
            [
                str(CELERY),
                "-A",
                "evalhub",
                "worker",
                "--concurrency=1",
                "--loglevel=INFO",
                "-n",
                hostname,
                "--queues=celery,collection,analysis",
            ],
            cwd=settings.BASE_DIR,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.started.append(process)
        destination = [hostname.replace("%h", os.uname().nodename)]
        answered = wait_for(lambda: celery_app.control.ping(destination=destination, timeout=1), 60)
        assert answered, f"the worker {hostname} did not start within 60 s"
        return process

    def kill_holder(self, key: str) -> None:
        """SIGKILL the worker holding the lease on ``key``: the whole worker if it is one
        of ours, else (CI's shared worker) its pool process."""
        pid = int(Lease.objects.get(key=key).owner.split(":")[1])
        for process in self.started:
            if process.poll() is None and os.getpgid(pid) == process.pid:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                return
        os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        for process in self.started:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture
def workers(request):
    # "collection", "run" (judge), "analysis": names its workers and their logs.
    pool = Workers(request.node.originalname.split("_whose")[0].split("_")[-1])
    yield pool
    pool.stop()


def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    return None


def held(key: str) -> bool:
    return Lease.objects.filter(key=key).exists()


# Collection -----------------------------------------------------------------------------


def seed_conversations(domain: str) -> None:
    for i in range(3):
        c = Conversation.objects.create(
            external_id=f"hh-{i}", domain=domain, source=Conversation.Source.HUMAN_HUMAN
        )
        Speaker.objects.bulk_create([Speaker(conversation=c, index=s) for s in (0, 1)])
        Turn.objects.bulk_create(
            Turn(conversation=c, position=p, speaker=p % 2, text=f"turn {p} of {i}")
            for p in range(3)
        )


def test_a_collection_whose_worker_is_killed_is_finished_by_another(workers):
    seed_conversations("chitchat")
    with bots.BotPool() as pool:
        server = pool.start(bots.slow(bots.counting, 1.0))  # the kill lands mid-dialogue
        system = factories.system(None, slug="solo")
        BotEndpoint.objects.create(system=system, url=server.url, timeout_seconds=5)
        tournament = Tournament.objects.create(
            slug="cup",
            name="Cup",
            kind="spot_the_bot",
            schedule="self-play",
            domain="chitchat",
            conversations_per_pair=2,
            exchanges=2,
            seed=7,
        )
        tournament.systems.set([system])
        workers.start()
        tournament_tasks.collect_tournament.delay(tournament.pk)
        first = wait_for(lambda: tournament.plan.order_by("pk").first(), 60)
        key = f"collection:{first.pk}"
        assert wait_for(lambda: held(key), 60), "no worker took the dialogue within 60 s"
        time.sleep(1.5)  # a turn or two in
        workers.kill_holder(key)
        killed_at = time.monotonic()
        workers.start()
        plan = PlannedDialogue.objects.filter(tournament=tournament)
        done = wait_for(
            lambda: not plan.exclude(status=PlannedDialogue.Status.COMPLETE).exists(),
            TAKEOVER_SECONDS,
        )
    assert done, f"the collection did not finish within {TAKEOVER_SECONDS} s of the kill"
    assert time.monotonic() - killed_at < TAKEOVER_SECONDS
    n = plan.count()
    collected = Conversation.objects.filter(source="self-play")
    assert n == 2 and collected.count() == n
    assert Turn.objects.filter(conversation__in=collected).count() == n * 2 * 2
    assert PlannedDialogue.objects.get(pk=first.pk).attempts >= 2
    assert not Lease.objects.exists()


# Judge run ------------------------------------------------------------------------------


def test_a_judge_run_whose_worker_is_killed_is_finished_by_another(workers):
    with openai_fake.FakePool() as pool:
        server = pool.start(fake_judges.Slow({"better": "1"}, 1.0))
        judge = judging_builders.judge(server)
        campaign = judging_builders.ab(6, owner=judge.owner)
        rubric = judging_builders.default_rubric("ab")
        workers.start()
        run = runs.start(judge.owner, judge, rubric, campaign, concurrency=1)
        key = f"judge-run:{run.pk}"
        assert wait_for(lambda: held(key), 60), "no worker took the judge run within 60 s"
        assert wait_for(lambda: AutomaticJudgment.objects.filter(run=run).exists(), 30)
        workers.kill_holder(key)
        killed_at = time.monotonic()
        workers.start()
        done = wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.DONE,
            TAKEOVER_SECONDS,
        )
    assert done, f"the judge run did not finish within {TAKEOVER_SECONDS} s of the kill"
    assert time.monotonic() - killed_at < TAKEOVER_SECONDS
    run.refresh_from_db()
    judgments = AutomaticJudgment.objects.filter(run=run)
    assert judgments.count() == 6 == run.items_done
    assert judgments.values("item").distinct().count() == 6
    assert not Lease.objects.exists()


# Analysis -------------------------------------------------------------------------------

# Enough resampling that the kill lands mid-analysis, little enough to redo in the budget.
MEDIUM = {
    "replicates": 20_000,
    "bt_bootstrap": 20_000,
    "alpha_resamples": 20_000,
    "stability_subsamples": 10,
}


def test_an_analysis_whose_worker_is_killed_is_finished_by_another(workers):
    tournament = analysis_builders.spot_the_bot_tournament()
    workers.start()
    run = analyze_tournament(tournament, MEDIUM)
    key = f"analysis-run:{run.pk}"
    assert wait_for(lambda: held(key), 60), "no worker took the analysis within 60 s"
    time.sleep(2)
    assert AnalysisRun.objects.get(pk=run.pk).status == AnalysisRun.Status.RUNNING
    workers.kill_holder(key)
    killed_at = time.monotonic()
    workers.start()
    done = wait_for(
        lambda: AnalysisRun.objects.get(pk=run.pk).status == AnalysisRun.Status.SUCCEEDED,
        TAKEOVER_SECONDS,
    )
    assert done, f"the analysis did not finish within {TAKEOVER_SECONDS} s of the kill"
    assert time.monotonic() - killed_at < TAKEOVER_SECONDS
    run.refresh_from_db()
    assert run.attempts >= 2 and run.result and run.plots
    assert AnalysisRun.objects.filter(tournament=tournament).count() == 1
    # With workers the stability curve follows the run as a part of its own, under its own
    # lease (analysis.runs.stability): every lease is gone once it is done too.
    assert wait_for(
        lambda: AnalysisRun.objects.get(pk=run.pk).stability_state == "done", TAKEOVER_SECONDS
    ), "the run's stability curve was not computed after it"
    assert not Lease.objects.exists()
