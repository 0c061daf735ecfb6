"""Background jobs of the catalog."""

import logging
from datetime import timedelta
from importlib import import_module

from celery import shared_task
from django.conf import settings
from django.db import OperationalError, transaction
from django.utils import timezone

from evalstats.text_metrics import compute_text_metrics

from .models import NoticeKind, Submission
from .notifications import notify
from .queueing import enqueue

logger = logging.getLogger(__name__)


@shared_task(
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    max_retries=5,
    acks_late=True,
)
def compute_submission_metrics(submission_id: int) -> dict | None:
    """Compute and store a submission's automatic metrics.

    Idempotent: it recomputes from the stored responses and overwrites, so running it twice
    (a retry, or an admin asking again) leaves the same result. A failure is recorded on
    the submission so that the profile shows it and an admin can run it again.
    """
    submission = Submission.objects.filter(pk=submission_id).first()
    if submission is None:
        logger.warning("Submission %s vanished before its metrics were computed", submission_id)
        return None
    rows = list(
        submission.responses.order_by("prompt__position").values_list("text", "prompt__references")
    )
    try:
        texts = [text for text, _ in rows]
        references = [refs or [] for _, refs in rows]
        metrics = compute_text_metrics(texts, references).as_dict()
    except Exception as error:
        logger.exception("Metrics failed for submission %s", submission_id)
        Submission.objects.filter(pk=submission_id).update(
            status=Submission.Status.FAILED,
            error_report=[{"line": None, "message": f"Computing metrics failed: {error}"}],
        )
        _tell_owner(submission, NoticeKind.SUBMISSION_FAILED, f"failed: {error}")
        raise
    with transaction.atomic():
        Submission.objects.filter(pk=submission_id).update(
            metrics=metrics,
            status=Submission.Status.SCORED,
            error_report=[],
            scored_at=timezone.now(),
        )
        _tell_owner(submission, NoticeKind.SUBMISSION_SCORED, "was scored")
    return metrics


def _tell_owner(submission: Submission, kind: str, what: str) -> None:
    system = submission.system
    text = f"Your submission of {system.name} on {submission.prompt_set.name} {what}."
    # Once per submission and outcome: a retried task does not tell twice.
    key = f"{kind}:{submission.public_id}"
    notify(system.owner, kind, text, submission.get_absolute_url(), once_key=key)


def _pending_before():
    """Work older than one maintenance interval lost its message (or its worker)."""
    return timezone.now() - timedelta(seconds=settings.EVALHUB_MAINTENANCE_INTERVAL_SECONDS)


@shared_task
def requeue_pending_submissions() -> int:
    """Queue again the metrics of submissions still waiting (the broker was down when they
    were uploaded, or their worker died); how many were queued."""
    ids = Submission.objects.filter(
        status=Submission.Status.VALIDATED, created__lt=_pending_before()
    ).values_list("pk", flat=True)
    return sum(enqueue(compute_submission_metrics, pk) for pk in ids)


@shared_task
def clear_expired_sessions() -> None:
    """What `manage.py clearsessions` does, on beat's schedule."""
    engine = import_module(settings.SESSION_ENGINE)
    engine.SessionStore.clear_expired()
