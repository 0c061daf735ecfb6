"""Review decisions: the platform is told first, then EvalHub's database records it.

Assignments that came through the shared link (no platform id) are decided in EvalHub
only; every call made on a platform is logged as a CrowdAction by the provider, and every
decision someone makes (approve, reject, bonus, block) is also kept in the admin log
(LogEntry: who, when, what, why) whatever the platform.
"""

from decimal import Decimal

from django.contrib.admin.models import CHANGE, LogEntry
from django.utils import timezone

from ..models import Assignment, Worker
from ..quality import set_blocked
from . import get_provider
from .base import CrowdError


def _on_platform(assignment) -> bool:
    return (
        bool(assignment.provider_ref) and assignment.worker.provider == assignment.campaign.provider
    )


def _log(actor, obj, message: str) -> None:
    if getattr(actor, "is_authenticated", False):
        LogEntry.objects.log_actions(actor.pk, [obj], CHANGE, change_message=message)


def approve(assignment, *, actor=None, feedback: str = "") -> None:
    if assignment.status == Assignment.Status.APPROVED:
        return
    if assignment.status != Assignment.Status.SUBMITTED:
        raise CrowdError(f"Only a submitted assignment can be approved ({assignment.status}).")
    if _on_platform(assignment):
        get_provider(assignment.campaign.provider).approve(
            assignment, actor=actor, feedback=feedback
        )
    Assignment.objects.filter(pk=assignment.pk).update(
        status=Assignment.Status.APPROVED, reviewed_at=timezone.now()
    )
    assignment.status = Assignment.Status.APPROVED
    _log(actor, assignment, f"Approved{': ' + feedback if feedback else ''}")


def reject(assignment, reason: str, *, actor=None) -> None:
    if not reason.strip():
        raise CrowdError("A rejection needs a reason the worker will read.")
    if assignment.status != Assignment.Status.SUBMITTED:
        raise CrowdError(f"Only a submitted assignment can be rejected ({assignment.status}).")
    if _on_platform(assignment):
        get_provider(assignment.campaign.provider).reject(assignment, reason, actor=actor)
    Assignment.objects.filter(pk=assignment.pk).update(
        status=Assignment.Status.REJECTED, reviewed_at=timezone.now()
    )
    assignment.status = Assignment.Status.REJECTED
    _log(actor, assignment, f"Rejected: {reason}")


def bonus(assignment, amount: Decimal, reason: str, *, key: str, actor=None) -> None:
    if not _on_platform(assignment):
        raise CrowdError("Bonuses are paid through a crowd platform; this worker came by link.")
    get_provider(assignment.campaign.provider).bonus(
        assignment, amount, reason, key=key, actor=actor
    )
    _log(actor, assignment, f"Bonus {amount}: {reason}")


def block(worker: Worker, reason: str, *, campaign, actor=None) -> None:
    """Block in EvalHub (allocation refuses the worker) and on the worker's platform."""
    if not reason.strip():
        raise CrowdError("A block needs a reason; the worker may ask.")
    if worker.provider == campaign.provider and campaign.provider != "local":
        get_provider(campaign.provider).block(worker, reason, campaign=campaign, actor=actor)
    set_blocked(worker, blocked=True, reason=reason, by=actor)


def unblock(worker: Worker, *, campaign, actor=None) -> None:
    if worker.provider == campaign.provider and campaign.provider != "local":
        get_provider(campaign.provider).unblock(worker, campaign=campaign, actor=actor)
    set_blocked(worker, blocked=False, reason="", by=actor)


def pay_submitted(campaign, *, actor=None) -> int:
    """Approve every submitted assignment of the campaign; returns how many."""
    approved = 0
    for assignment in Assignment.objects.filter(
        campaign=campaign, status=Assignment.Status.SUBMITTED
    ).select_related("campaign", "worker"):
        approve(assignment, actor=actor)
        approved += 1
    return approved
