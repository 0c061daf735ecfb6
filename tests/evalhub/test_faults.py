"""Faults survived: an unreachable broker costs no request a 500 and loses no work; beat's
periodic tasks send the work again."""

from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.urls import reverse
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerUnreachable

from analysis.models import AnalysisRun
from analysis.runs.tasks import requeue_pending_analyses
from evalhub.celery import LEASE_SWEEPS
from evalhub.celery import app as celery_app
from evalhub.models import Submission
from evalhub.queueing import QUEUE_UNREACHABLE
from evalhub.services import submit_responses
from evalhub.tasks import clear_expired_sessions, requeue_pending_submissions
from tests import factories
from tests.analysis import builders


def broker_down():
    return mock.patch(
        "celery.app.task.Task.apply_async", side_effect=BrokerUnreachable("Connection refused")
    )


@pytest.mark.django_db(transaction=True)
def test_an_upload_is_stored_and_shown_queued_when_the_broker_is_unreachable(client):
    owner = factories.user("owner")
    system = factories.system(owner)
    prompts = factories.prompt_set(2)
    with broker_down():
        submission = submit_responses(
            system=system, prompt_set=prompts, data=b"a b\nc d\n", filename="r.txt", user=owner
        )
        page = client.get(reverse("system-detail", args=[system.slug]))
    stored = Submission.objects.get(pk=submission.pk)
    assert stored.status == Submission.Status.VALIDATED and stored.metrics in (None, {})
    assert stored.responses.count() == 2
    assert page.status_code == 200 and "queued" in page.content.decode()


@pytest.mark.django_db(transaction=True)
def test_an_analysis_request_says_queued_when_the_broker_is_unreachable(client):
    tournament = builders.spot_the_bot_tournament()
    client.force_login(factories.user("boss", staff=True))
    with broker_down():
        response = client.post(reverse("analysis:analyze", args=[tournament.slug]), follow=True)
    assert response.status_code == 200
    assert QUEUE_UNREACHABLE in response.content.decode()
    (run,) = AnalysisRun.objects.filter(tournament=tournament)
    assert run.status == AnalysisRun.Status.PENDING and run.progress == QUEUE_UNREACHABLE


@pytest.mark.django_db(transaction=True)
def test_beat_requeues_an_analysis_left_pending_and_it_completes():
    tournament = builders.spot_the_bot_tournament()
    from analysis.runs.tasks import analyze_tournament

    with broker_down():
        run = analyze_tournament(tournament)
    AnalysisRun.objects.filter(pk=run.pk).update(created=timezone.now() - timedelta(hours=1))
    # Called as beat would have the worker call it; the run it queues is computed here (eager).
    assert requeue_pending_analyses() == 1
    run.refresh_from_db()
    assert run.status == AnalysisRun.Status.SUCCEEDED and run.result
    assert AnalysisRun.objects.filter(tournament=tournament).count() == 1


@pytest.mark.django_db(transaction=True)
def test_beat_requeues_submissions_left_without_metrics():
    system = factories.system(factories.user())
    prompts = factories.prompt_set(2)
    with broker_down():
        submission = submit_responses(
            system=system, prompt_set=prompts, data=b"a b a\nb c\n", filename="r.txt"
        )
    assert requeue_pending_submissions() == 0  # too recent: its message may still be on its way
    Submission.objects.filter(pk=submission.pk).update(created=timezone.now() - timedelta(hours=1))
    assert requeue_pending_submissions() == 1
    submission.refresh_from_db()
    assert submission.status == Submission.Status.SCORED
    assert submission.metrics["distinct_1"] == pytest.approx(0.6)


@pytest.mark.django_db
def test_beat_clears_expired_sessions():
    alive, expired = SessionStore(), SessionStore()
    alive.create()
    expired.set_expiry(-10)
    expired.create()
    clear_expired_sessions()
    assert set(Session.objects.values_list("session_key", flat=True)) == {alive.session_key}


def test_beat_schedules_every_maintenance_task_and_each_is_registered():
    schedule = celery_app.conf.beat_schedule
    tasks = {entry["task"] for entry in schedule.values()}
    assert tasks == {
        "evalhub.tasks.requeue_pending_submissions",
        "analysis.tasks.requeue_pending_analyses",
        "analysis.tasks.requeue_stability_parts",
        "tournaments.tasks.reclaim_lapsed_dialogues",
        "judging.tasks.reclaim_lapsed_judge_runs",
        "evalhub.tasks.clear_expired_sessions",
        "annotation.tasks.sync_crowd_campaigns",
        "endpoints.tasks.prune_endpoint_calls",
        "arenas.tasks.requeue_lost_leaderboards",
        "webhooks.tasks.requeue_lost_deliveries",
        "webhooks.tasks.prune_webhook_deliveries",
    }
    celery_app.loader.import_default_modules()
    assert tasks <= set(celery_app.tasks)


def test_a_killed_worker_s_task_is_delivered_again_and_limits_are_set():
    conf = celery_app.conf
    assert conf.task_acks_late and conf.task_reject_on_worker_lost
    assert conf.worker_max_tasks_per_child > 0
    assert conf.task_time_limit > conf.task_soft_time_limit > 0
    assert conf.task_annotations["analysis.tasks.run_analysis"]["time_limit"] > 0


def test_the_visibility_timeout_is_the_longest_task_limit_and_prefetch_is_one():
    """A message of a worker killed whole comes back after the visibility timeout: never
    while its task may still run, and no later than that."""
    conf = celery_app.conf
    longest = max(
        [limits["time_limit"] for limits in conf.task_annotations.values()] + [conf.task_time_limit]
    )
    assert conf.broker_transport_options["visibility_timeout"] == longest == 3060
    assert conf.worker_prefetch_multiplier == 1


def test_the_lease_sweeps_run_within_the_takeover_budget(settings):
    """A dead worker's lease lapses after EVALHUB_LEASE_SECONDS and the next sweep queues
    its work: together within the two minutes promised, with renewals four times a lease."""
    schedule = celery_app.conf.beat_schedule
    swept = {entry["task"]: entry["schedule"] for entry in schedule.values()}
    assert all(swept[name] == settings.EVALHUB_LEASE_SWEEP_SECONDS for name in LEASE_SWEEPS)
    assert settings.EVALHUB_LEASE_SECONDS + settings.EVALHUB_LEASE_SWEEP_SECONDS < 120
