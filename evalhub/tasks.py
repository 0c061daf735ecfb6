"""Background jobs of the catalog."""

import logging

from celery import shared_task
from django.db import OperationalError, transaction
from django.utils import timezone

from analysis.stats.text_metrics import compute_text_metrics

from .models import Submission

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
        raise
    with transaction.atomic():
        Submission.objects.filter(pk=submission_id).update(
            metrics=metrics,
            status=Submission.Status.SCORED,
            error_report=[],
            scored_at=timezone.now(),
        )
    return metrics
