"""The Celery application; tasks are discovered in each app's tasks.py (analysis keeps them
in analysis/runs/tasks.py, named as they were when it was analysis/tasks.py).

Two queues: ``collection`` (talking to bots: I/O bound, many slots) and ``analysis``
(statistics and plots: CPU bound, one slot per core), each consumed by its own worker
service in docker-compose.yml; everything else (metrics, maintenance) goes to ``celery``.
Beat's schedule is here, in code, so that it is reviewed and versioned with the tasks.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")

app = Celery("evalhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(["analysis.runs"])

COLLECTION_QUEUE = "collection"
ANALYSIS_QUEUE = "analysis"
DEFAULT_QUEUE = "celery"

app.conf.task_routes = {
    "tournaments.tasks.collect_planned_dialogue": {"queue": COLLECTION_QUEUE},
    "tournaments.tasks.collect_tournament": {"queue": COLLECTION_QUEUE},
    # Judges talk to model endpoints: I/O bound like collection.
    "judging.tasks.run_judge": {"queue": COLLECTION_QUEUE},
    "analysis.tasks.run_analysis": {"queue": ANALYSIS_QUEUE},
}

# Per-task limits (seconds, soft then hard); the others get CELERY_TASK_*_TIME_LIMIT.
# A dialogue makes many bot calls, each retried with backoff; an analysis bootstraps.
app.conf.task_annotations = {
    "tournaments.tasks.collect_planned_dialogue": {"soft_time_limit": 1800, "time_limit": 1860},
    "analysis.tasks.run_analysis": {"soft_time_limit": 3000, "time_limit": 3060},
    # A slice (EVALHUB_JUDGE_SLICE_SECONDS) plus the requests in flight when it ends.
    "judging.tasks.run_judge": {"soft_time_limit": 1800, "time_limit": 1860},
    "evalhub.tasks.compute_submission_metrics": {"soft_time_limit": 300, "time_limit": 330},
}


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
    "requeue-pending-analyses": {
        "task": "analysis.tasks.requeue_pending_analyses",
        "schedule": _every_interval(),
    },
    "reclaim-stale-dialogues": {
        "task": "tournaments.tasks.reclaim_stale_dialogues",
        "schedule": _every_interval(),
    },
    "reclaim-stale-judge-runs": {
        "task": "judging.tasks.reclaim_stale_judge_runs",
        "schedule": _every_interval(),
    },
    "prune-endpoint-calls": {
        "task": "endpoints.tasks.prune_endpoint_calls",
        "schedule": 3600.0,
    },
    "clear-expired-sessions": {
        "task": "evalhub.tasks.clear_expired_sessions",
        "schedule": 24 * 3600.0,
    },
    "crowd-sync": {
        "task": "annotation.tasks.sync_crowd_campaigns",
        "schedule": _crowd_sync_interval(),
    },
}
