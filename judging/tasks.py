"""Background jobs of automatic judges (judging/execution.py does the work).

`run_judge` is idempotent: it claims the run first, so a second message for a run that is
already being judged does nothing, and a run's items are judged once whatever the number
of messages. `reclaim_stale_judge_runs` (beat) sends again the runs whose worker died
(running without a heartbeat for EVALHUB_JUDGE_STALE_SECONDS) and the queued ones whose
message was lost (queued for that long).
"""

import logging

from celery import shared_task
from django.db import OperationalError
from django.db.models import Q

from evalhub.queueing import enqueue

from .execution import execute, stale_before
from .models import JudgeRun

logger = logging.getLogger(__name__)


@shared_task(autoretry_for=(OperationalError,), retry_backoff=True, max_retries=5, acks_late=True)
def run_judge(run_id: int) -> str:
    return execute(run_id)


@shared_task
def reclaim_stale_judge_runs() -> int:
    stale = stale_before()
    ids = JudgeRun.objects.filter(
        Q(status=JudgeRun.Status.RUNNING, heartbeat__lt=stale)
        | Q(status=JudgeRun.Status.QUEUED)
        & (Q(heartbeat__lt=stale) | Q(heartbeat__isnull=True, created__lt=stale))
    ).values_list("pk", flat=True)
    return sum(enqueue(run_judge, pk) for pk in ids)
