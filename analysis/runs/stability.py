"""A Spot The Bot run's stability curve, computed after the run as a part of its own.

The curve ranks hundreds of subsamples per grid point (each point drawn until its share is
known to ``stability_precision``): 10-20 s of CPU for the largest real domain, ten times
the rest of the report. A run that computes it apart stores its report first with
``"stability": null`` and ``stability_state`` "pending"; ``compute_stability``, a task on
the analysis queue, then fills the section in and appends its warnings, so that the result
is the one the report computed with its stability would have been
(``analysis.reports.build_stability``). Who computes it apart (docs/architecture.md,
"Analysis parts after the run"):

- ``manage.py analyze`` always (``--wait`` computes it before the command ends); it queues
  the part when there is a broker, so a worker computes it at once;
- ``run_analysis`` when there is a broker: the part is queued when the report is stored;
  in the embedded mode (eager Celery, no worker) the report computes it itself, on the
  second core while it computes the rest, as there is no other process to hand it to;
- a result page or the API showing a run whose part is pending (or running with a lapsed
  lease: its worker died) queues it: this computes it in the embedded mode (the task runs
  in the request, as the plots are drawn there), and the lease sweep of the workers does
  the same for a part nobody looks at.

The task is idempotent: it computes while it holds the run's stability lease
("analysis-stability:<pk>", evalhub/leases.py), only a part pending or running (its
worker died: holding the lease proves nobody else computes it), and writes fenced by the
lease. A failure is recorded (``stability_error``) and waits for a retry (``retry``), which
the page's button, a new request of the same analysis and ``analyze`` again all make.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import OperationalError, transaction
from django.db.models import Q
from django.utils import timezone

from analysis.inputs.judgments import InputsChanged, load_inputs
from analysis.models import AnalysisRun, StabilityState
from analysis.reports import build_stability, canonical_digest
from evalhub import leases
from evalhub.queueing import enqueue

__all__ = [
    "LEASE_PREFIX",
    "UNFINISHED",
    "apart",
    "compute_stability",
    "compute_stability_now",
    "pending",
    "queue",
    "queue_if_pending",
    "requeue_stability_parts",
    "retry",
    "wait",
]

logger = logging.getLogger(__name__)

LEASE_PREFIX = "analysis-stability"

UNFINISHED = (StabilityState.PENDING, StabilityState.RUNNING)


def apart() -> bool:
    """Whether a run queued to a worker computes its stability as a part of its own: only
    when there are workers (a broker); eager Celery would run the part in the same request
    right after the report, later than the report's own second core would have."""
    return not settings.CELERY_TASK_ALWAYS_EAGER


def queue(run_id: int) -> bool:
    """Queue the part (after commit: a worker must find the row)."""
    transaction.on_commit(lambda: enqueue(compute_stability, run_id))
    return True


def queue_if_pending(run_id: int) -> bool:
    """Queue the part of a run just stored with it pending; False when it has none."""
    if not AnalysisRun.objects.filter(pk=run_id, stability_state=StabilityState.PENDING).exists():
        return False
    return queue(run_id)


def pending(run: AnalysisRun | None) -> bool:
    """True while ``run``'s stability part is pending or running; a part nobody computes
    (pending, or running with a lapsed lease) is queued. A page showing the run says the
    curve is being computed and refreshes; the API says so in the run's provenance."""
    if run is None or run.stability_state not in UNFINISHED:
        return False
    unattended = AnalysisRun.objects.filter(pk=run.pk, stability_state__in=UNFINISHED).filter(
        leases.lapsed(LEASE_PREFIX)
    )
    if unattended.exists():
        queue(run.pk)
    return True


def retry(run: AnalysisRun, *, send: bool = True) -> bool:
    """Set a failed part pending again and (with ``send``) queue it; False (nothing done)
    when it has not failed."""
    again = AnalysisRun.objects.filter(pk=run.pk, stability_state=StabilityState.FAILED).update(
        stability_state=StabilityState.PENDING, stability_error=""
    )
    if again:
        run.stability_state, run.stability_error = StabilityState.PENDING, ""
        if send:
            queue(run.pk)
    return bool(again)


@shared_task(
    name="analysis.tasks.compute_stability",
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
    acks_late=True,
    reject_on_worker_lost=True,
)
def compute_stability(run_id: int) -> str:
    """Compute one run's stability part: "done", "failed", "skipped" (not pending, or
    being computed) or "missing" (no succeeded run with that id)."""
    return compute_stability_now(run_id)


def compute_stability_now(run_id: int) -> str:
    """``compute_stability``'s work, in this process."""
    succeeded = AnalysisRun.objects.filter(pk=run_id, status=AnalysisRun.Status.SUCCEEDED)
    run = succeeded.select_related("tournament", "campaign", "study").defer("plots").first()
    if run is None:
        return "missing"
    if run.stability_state not in UNFINISHED:
        return "skipped"
    with leases.holding(leases.key_for(LEASE_PREFIX, run_id)) as held:
        if held is None:
            return "skipped"
        mine = held.fence(succeeded.filter(stability_state__in=UNFINISHED))
        if not mine.update(stability_state=StabilityState.RUNNING):
            return "skipped"
        try:
            part = build_stability(_inputs(run), run.parameters)
        except OperationalError:
            mine.update(stability_state=StabilityState.PENDING)  # Celery retries it
            raise
        except Exception as error:
            logger.exception("The stability part of analysis run %s failed", run_id)
            mine.update(
                stability_state=StabilityState.FAILED,
                stability_error=f"{type(error).__name__}: {error}"[:2000],
            )
            return "failed"
        result = {
            **run.result,
            "stability": part["stability"],
            "warnings": [*run.result.get("warnings", []), *part["warnings"]],
        }
        if not mine.update(stability_state=StabilityState.DONE, result=result):
            return "skipped"  # another worker took the part over and writes it
    return "done"


def _inputs(run: AnalysisRun):
    """The run's inputs loaded again (a Spot The Bot tournament's or study's: the only
    reports with a stability part); InputsChanged if they are no longer the run's."""
    inputs = load_inputs(
        run.tournament,
        campaign=None if run.tournament_id else run.campaign,
        study=run.study,
        exclude_blocked=run.parameters["exclude_blocked"],
    )
    if canonical_digest(inputs) != run.inputs_digest:
        raise InputsChanged(
            "The judgments changed after this analysis was requested; run a new analysis."
        )
    return inputs


def wait(run_id: int, *, poll_seconds: float = 1.0) -> str:
    """Compute the part here, or wait while another process computes it: the part's state
    at the end ("done", "failed", or "" when there was none)."""
    while True:
        compute_stability_now(run_id)
        state = AnalysisRun.objects.values_list("stability_state", flat=True).get(pk=run_id)
        if state not in UNFINISHED:
            return state
        time.sleep(poll_seconds)


@shared_task(name="analysis.tasks.requeue_stability_parts")
def requeue_stability_parts() -> int:
    """Queue again the stability parts left pending (their message was never sent) or
    running with a lapsed lease (their worker died); how many were queued."""
    now = timezone.now()
    waiting = Q(
        stability_state=StabilityState.PENDING,
        finished_at__lt=now - timedelta(seconds=settings.EVALHUB_MAINTENANCE_INTERVAL_SECONDS),
    ) | Q(stability_state=StabilityState.RUNNING)
    ids = (
        AnalysisRun.objects.filter(waiting, status=AnalysisRun.Status.SUCCEEDED)
        .filter(leases.lapsed(LEASE_PREFIX))
        .values_list("pk", flat=True)
    )
    return sum(enqueue(compute_stability, pk) for pk in ids)
