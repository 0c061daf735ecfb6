"""The review of a campaign's submitted work: what staff decide on, and deciding in bulk.

`review_rows(campaign)` lists assignments waiting for review (submitted) with their
worker's quality figures (annotation/quality.py: gold accuracy, agreement, median time per
item) and training outcome. `decide(campaign, public_ids, action, ...)` approves, rejects,
pays a bonus or blocks for each chosen assignment through annotation/crowd/review.py (the
platform first, then EvalHub; each decision logged with who and when); one assignment the
platform refuses does not stop the others.
"""

import uuid
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db.models import CharField
from django.db.models.functions import Cast

from evalhub.errors import UserInputError

from .crowd import review
from .crowd.base import CrowdError
from .models import Assignment, Campaign, CrowdAction, Qualification, Worker
from .quality import WorkerFigures, worker_figures
from .training import training_key

ACTIONS = ("approve", "reject", "bonus", "block")


class ReviewInvalid(UserInputError):
    pass


@dataclass(frozen=True)
class ReviewRow:
    assignment: Assignment
    figures: WorkerFigures | None
    training: str  # "passed", "failed (2 attempts)", "not taken" or "" (no training)


@dataclass
class Outcome:
    done: list[Assignment] = field(default_factory=list)
    failed: list[tuple[Assignment, str]] = field(default_factory=list)


def _training_outcomes(campaign: Campaign, workers) -> dict[int, str]:
    key = training_key(campaign) if campaign.requires_training else None
    if key is None:
        return {}
    outcomes = dict.fromkeys(workers, "not taken")
    for q in Qualification.objects.filter(worker__in=workers, key=key):
        if q.passed:
            outcomes[q.worker_id] = "passed"
        elif q.attempts:
            outcomes[q.worker_id] = f"not passed ({q.attempts} attempt{'s' * (q.attempts > 1)})"
    return outcomes


def review_rows(campaign: Campaign, statuses=(Assignment.Status.SUBMITTED,)) -> list[ReviewRow]:
    assignments = list(
        Assignment.objects.filter(campaign=campaign, status__in=statuses)
        .select_related("worker", "batch")
        .order_by("submitted_at", "pk")
    )
    figures = {f.worker.pk: f for f in worker_figures(campaign)} if assignments else {}
    training = _training_outcomes(campaign, {a.worker_id for a in assignments})
    return [
        ReviewRow(a, figures.get(a.worker_id), training.get(a.worker_id, "")) for a in assignments
    ]


def parse_amount(value) -> Decimal:
    try:
        amount = Decimal(str(value)).quantize(Decimal("0.01"))
    except (InvalidOperation, ValueError):
        raise ReviewInvalid("Give the bonus as an amount, e.g. 0.50.", field="amount") from None
    if not Decimal("0.01") <= amount <= Decimal("100.00"):
        raise ReviewInvalid("A bonus is between 0.01 and 100.00.", field="amount")
    return amount


def decide(
    campaign: Campaign,
    public_ids,
    action: str,
    *,
    actor,
    reason: str = "",
    amount=None,
    key: str = "",
) -> Outcome:
    """Apply one decision to each chosen assignment of the campaign.

    `key` names a bonus round: the same key never pays an assignment twice (a form sent
    twice, an API call retried). Raises ReviewInvalid, deciding nothing, for a missing
    reason, a bad amount or an assignment of another campaign.
    """
    reason = (reason or "").strip()
    if action not in ACTIONS:
        raise ReviewInvalid(
            f"Unknown action {action!r}: one of {', '.join(ACTIONS)}.", field="action"
        )
    if not public_ids:
        raise ReviewInvalid("Choose at least one assignment.", field="assignments")
    try:
        public_ids = {uuid.UUID(str(value)) for value in public_ids}
    except ValueError:
        raise ReviewInvalid("An assignment id is not valid.", field="assignments") from None
    if action in ("reject", "bonus", "block") and not reason:
        raise ReviewInvalid(f"A {action} needs a reason the worker will read.", field="reason")
    if action == "bonus":
        amount = parse_amount(amount)
        if not key:
            raise ReviewInvalid("A bonus needs an idempotency key.", field="key")
    chosen = list(
        Assignment.objects.filter(campaign=campaign, public_id__in=public_ids).select_related(
            "campaign", "worker"
        )
    )
    if len(chosen) != len(public_ids):
        raise ReviewInvalid("Some chosen assignments are not this campaign's.", field="assignments")
    outcome = Outcome()
    blocked: set[int] = set()
    for assignment in chosen:
        try:
            if action == "approve":
                review.approve(assignment, actor=actor)
            elif action == "reject":
                review.reject(assignment, reason, actor=actor)
            elif action == "bonus":
                review.bonus(
                    assignment, amount, reason, key=f"{key}:{assignment.public_id}", actor=actor
                )
            elif assignment.worker_id not in blocked:
                review.block(assignment.worker, reason, campaign=campaign, actor=actor)
                blocked.add(assignment.worker_id)
        except CrowdError as refused:
            outcome.failed.append((assignment, str(refused)))
        else:
            outcome.done.append(assignment)
    return outcome


def review_log(campaign: Campaign, limit: int = 50) -> list[dict]:
    """The latest review decisions (who, when, what) and platform calls of the campaign."""
    # LogEntry.object_id is text: compare with the ids as text, in the database.
    assignment_ids = (
        Assignment.objects.filter(campaign=campaign)
        .annotate(text_id=Cast("pk", CharField()))
        .values("text_id")
    )
    worker_ids = (
        Worker.objects.filter(assignments__campaign=campaign)
        .annotate(text_id=Cast("pk", CharField()))
        .values("text_id")
    )
    entries = LogEntry.objects.filter(
        content_type=ContentType.objects.get_for_model(Assignment), object_id__in=assignment_ids
    ) | LogEntry.objects.filter(
        content_type=ContentType.objects.get_for_model(Worker), object_id__in=worker_ids
    )
    rows = [
        {
            "when": e.action_time,
            "who": e.user.username,
            "what": e.object_repr,
            "how": e.change_message,
        }
        for e in entries.select_related("user").order_by("-action_time")[:limit]
    ]
    rows += [
        {
            "when": a.created,
            "who": a.actor.username if a.actor else "periodic sync",
            "what": f"{a.provider} {a.action}",
            "how": a.get_state_display() + (f": {a.error}" if a.error else ""),
        }
        for a in CrowdAction.objects.filter(campaign=campaign).select_related("actor")[:limit]
    ]
    rows.sort(key=lambda r: r["when"], reverse=True)
    return rows[:limit]


def unmatched_submissions(campaign: Campaign, limit: int = 200) -> list[dict]:
    """Platform submissions that no finished assignment matched, which sync rejected (a
    completion code passed around, a preview): {when, submission, participant, state}."""
    rows = CrowdAction.objects.filter(campaign=campaign, action="reject_unmatched").order_by(
        "-created"
    )[:limit]
    return [
        {
            "when": row.created,
            "submission": row.request.get("submission", ""),
            "participant": row.request.get("participant", ""),
            "state": row.get_state_display(),
            "error": row.error,
        }
        for row in rows
    ]
