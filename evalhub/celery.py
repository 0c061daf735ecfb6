"""The Celery application; tasks are discovered in each app's tasks.py (analysis keeps them
in analysis/runs/tasks.py, named as they were when it was analysis/tasks.py).

Two queues: ``collection`` (talking to bots: I/O bound, many slots) and ``analysis``
(statistics and plots: CPU bound, one slot per core), each consumed by its own worker
service in docker-compose.yml; everything else (metrics, maintenance) goes to ``celery``.
Beat's schedule is here, in code, so that it is reviewed and versioned with the tasks.
"""

import logging
import os
import threading

from celery import Celery
from celery.signals import worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")

app = Celery("evalhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(["analysis.runs"])
# The parts of a run that follow it (its plots, its stability curve), each its own module.
app.autodiscover_tasks(["analysis.runs"], related_name="drawing")
app.autodiscover_tasks(["analysis.runs"], related_name="stability")

COLLECTION_QUEUE = "collection"
ANALYSIS_QUEUE = "analysis"
DEFAULT_QUEUE = "celery"

app.conf.task_routes = {
    "tournaments.tasks.collect_planned_dialogue": {"queue": COLLECTION_QUEUE},
    "tournaments.tasks.collect_tournament": {"queue": COLLECTION_QUEUE},
    # Judges talk to model endpoints: I/O bound like collection.
    "judging.tasks.run_judge": {"queue": COLLECTION_QUEUE},
    "analysis.tasks.run_analysis": {"queue": ANALYSIS_QUEUE},
    "analysis.tasks.draw_plots": {"queue": ANALYSIS_QUEUE},
    "analysis.tasks.compute_stability": {"queue": ANALYSIS_QUEUE},
    # Bootstraps, like an analysis: CPU bound.
    "arenas.tasks.compute_leaderboard": {"queue": ANALYSIS_QUEUE},
}

# Per-task limits (seconds, soft then hard); the others get CELERY_TASK_*_TIME_LIMIT.
# A dialogue makes many bot calls, each retried with backoff; an analysis bootstraps.
app.conf.task_annotations = {
    "tournaments.tasks.collect_planned_dialogue": {"soft_time_limit": 1800, "time_limit": 1860},
    "analysis.tasks.run_analysis": {"soft_time_limit": 3000, "time_limit": 3060},
    # Hundreds of subsamples per point, each a TrueSkill bootstrap: as long as a run.
    "analysis.tasks.compute_stability": {"soft_time_limit": 3000, "time_limit": 3060},
    # A slice (EVALHUB_JUDGE_SLICE_SECONDS) plus the requests in flight when it ends.
    "judging.tasks.run_judge": {"soft_time_limit": 1800, "time_limit": 1860},
    "evalhub.tasks.compute_submission_metrics": {"soft_time_limit": 300, "time_limit": 330},
    # One request, bounded by EVALHUB_WEBHOOK_TIMEOUT_SECONDS (at most 60).
    "webhooks.tasks.deliver_webhook": {"soft_time_limit": 90, "time_limit": 120},
}


# A message whose worker died unacknowledged (the whole worker killed, so nobody handed it
# back) is delivered again by Redis after the visibility timeout. No shorter than the longest
# hard limit, or a task still running would be delivered a second time (harmless under the
# lease, but wasted); no longer, so such a message waits as little as possible. The lease
# sweep (below) takes the work over well before that anyway.


def longest_task_seconds(conf) -> int:
    """The longest hard time limit of any task (the annotated ones and the default)."""
    limits = [int(limits["time_limit"]) for limits in conf.task_annotations.values()]
    return max([*limits, int(conf.task_time_limit or 0)])


@app.on_after_configure.connect
def _set_visibility_timeout(sender, **_) -> None:
    # The settings are read lazily (they import this module's package): set it once read.
    sender.conf.broker_transport_options = {
        **(sender.conf.broker_transport_options or {}),
        "visibility_timeout": longest_task_seconds(sender.conf),
    }


# The sweeps that queue again the work whose lease lapsed (its worker died) or whose
# message was never sent; run by beat and by every worker process (below).
LEASE_SWEEPS = (
    "analysis.tasks.requeue_pending_analyses",
    "analysis.tasks.requeue_stability_parts",
    "tournaments.tasks.reclaim_lapsed_dialogues",
    "judging.tasks.reclaim_lapsed_judge_runs",
    # Not a lease, but the same need: a webhook attempt whose worker died (or whose
    # message was lost) is sent again even where beat does not run.
    "webhooks.tasks.requeue_lost_deliveries",
)

logger = logging.getLogger(__name__)


def _sweep_interval() -> float:
    from django.conf import settings

    return float(settings.EVALHUB_LEASE_SWEEP_SECONDS)


def sweep_lapsed_work() -> int:
    """Run every lease sweep here and now; how many pieces of work were queued again."""
    queued = 0
    for name in LEASE_SWEEPS:
        try:
            queued += int(app.tasks[name]() or 0)
        except Exception:
            logger.exception("The sweep %s failed", name)
    return queued


_sweeper_stop = threading.Event()


def _sweep_forever() -> None:
    from django.db import connections

    while True:
        try:
            sweep_lapsed_work()
        finally:
            connections.close_all()  # this thread's; a child forked meanwhile inherits none
        if _sweeper_stop.wait(_sweep_interval()):
            return


@worker_ready.connect
def _start_sweeping(**_) -> None:
    """Every worker sweeps at its start and then every EVALHUB_LEASE_SWEEP_SECONDS, so a
    dead worker's work is taken over within two minutes even where beat does not run."""
    _sweeper_stop.clear()
    threading.Thread(target=_sweep_forever, name="lease sweep", daemon=True).start()


@worker_shutdown.connect
def _stop_sweeping(**_) -> None:
    _sweeper_stop.set()


def _every_interval() -> float:
    from django.conf import settings

    return float(settings.EVALHUB_MAINTENANCE_INTERVAL_SECONDS)


def _crowd_sync_interval() -> float:
    from django.conf import settings

    return float(settings.EVALHUB_CROWD_SYNC_SECONDS)


app.conf.beat_schedule = {
    "requeue-pending-submissions": {
        "task": "evalhub.tasks.requeue_pending_submissions",
        "schedule": _every_interval(),
    },
    **{
        f"lease-sweep-{name.split('.')[0]}-{name.rsplit('.', 1)[-1]}": {
            "task": name,
            "schedule": _sweep_interval(),
        }
        for name in LEASE_SWEEPS
    },
    "prune-endpoint-calls": {
        "task": "endpoints.tasks.prune_endpoint_calls",
        "schedule": 3600.0,
    },
    "requeue-lost-arena-leaderboards": {
        "task": "arenas.tasks.requeue_lost_leaderboards",
        "schedule": _every_interval(),
    },
    "clear-expired-sessions": {
        "task": "evalhub.tasks.clear_expired_sessions",
        "schedule": 24 * 3600.0,
    },
    "prune-webhook-deliveries": {
        "task": "webhooks.tasks.prune_webhook_deliveries",
        "schedule": 24 * 3600.0,
    },
    "crowd-sync": {
        "task": "annotation.tasks.sync_crowd_campaigns",
        "schedule": _crowd_sync_interval(),
    },
}
