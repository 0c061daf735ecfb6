"""Background jobs of automatic judges (judging/execution.py does the work).

`run_judge` is idempotent: it holds the run's lease first, so a second message for a run
that is already being judged does nothing, and a run's items are judged once whatever the
number of messages. A run handed on after its slice is sent again from here, once its
lease is released. `reclaim_lapsed_judge_runs` (the lease sweep: beat and every worker,
evalhub/celery.py) sends again the running runs whose lease lapsed (their worker died) and
the queued ones whose message was lost (queued for a maintenance interval).
"""

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import OperationalError
from django.db.models import Q
from django.utils import timezone

from evalhub import leases
from evalhub.queueing import enqueue

from .execution import LEASE_PREFIX, execute
from .models import JudgeRun

logger = logging.getLogger(__name__)


@shared_task(autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5, acks_late=True)
def run_judge(run_id: int) -> str:
    outcome = execute(run_id)
    if outcome == "continued":
        enqueue(run_judge, run_id)
    return outcome


@shared_task
def reclaim_lapsed_judge_runs() -> int:
    waited = timezone.now() - timedelta(seconds=settings.EVALHUB_MAINTENANCE_INTERVAL_SECONDS)
    lost_message = Q(status=JudgeRun.Status.QUEUED) & (
        Q(heartbeat__lt=waited) | Q(heartbeat__isnull=True, created__lt=waited)
    )
    ids = (
        JudgeRun.objects.filter(Q(status=JudgeRun.Status.RUNNING) | lost_message)
        .filter(leases.lapsed(LEASE_PREFIX))
        .values_list("pk", flat=True)
    )
    return sum(enqueue(run_judge, pk) for pk in ids)
