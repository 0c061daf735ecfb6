"""A crowd voter in an arena: who they are (the campaign worker their browser session
holds), the batch they are doing, and a battle tied to the slot it was fought for, whose
vote becomes that slot's judgment.

A participant arrives by their platform's link at the launch's campaign start page
(annotation: identity, screening, allocation, the platform session); the campaign's
assignment page hands each battle slot to the arena (annotation/kinds/arena.py). From then
on the arena knows them by the worker in their session: while it holds a started
assignment of one of the arena's launches, they vote here as that worker, identified by
their platform id, whoever is signed in. A blocked worker or a batch whose time ran out
takes no more battles.

This module imports neither arenas/voters.py nor arenas/battles.py (both call it).
"""

from __future__ import annotations

import logging

from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext

from annotation.entry import SESSION_KEY
from annotation.models import Assignment, Item, Worker
from annotation.services import batch_items, record_judgment, submit_if_complete
from evalhub.errors import UserInputError

from .crowd_models import CrowdBattle

logger = logging.getLogger(__name__)


class SlotRefused(UserInputError):
    """The crowd voter's batch does not take this battle now (nothing was written)."""


def session_worker(session) -> Worker | None:
    public_id = session.get(SESSION_KEY)
    if not public_id:
        return None
    return Worker.objects.filter(public_id=public_id).first()


def crowd_assignment(session, arena) -> Assignment | None:
    """The batch of one of the arena's launches that this browser's worker holds: the
    latest started one, else the latest they submitted (they may still see its battles and
    come back to its completion code), or None. Blocked workers and overdue batches are
    included: `refusal` says why they may not go on."""
    worker = session_worker(session)
    if worker is None:
        return None
    held = (
        Assignment.objects.filter(
            worker=worker,
            status__in=(Assignment.Status.STARTED, *Assignment.DONE),
            campaign__arena_crowd__arena=arena,
        )
        .select_related("campaign", "worker", "batch")
        .order_by("-started_at", "-pk")
    )
    return held.filter(status=Assignment.Status.STARTED).first() or held.first()


def refusal(assignment: Assignment) -> str | None:
    """Why this crowd voter may take no battle now, or None."""
    if assignment.worker.blocked:
        return gettext("You can no longer take battles in this study.")
    overdue = assignment.expires_at and assignment.expires_at < timezone.now()
    if overdue and assignment.status == Assignment.Status.STARTED:
        return gettext("The time for your battles ran out. Start again from your study's link.")
    return None


def voter_ref(worker: Worker) -> str:
    """A crowd voter's `Battle.voter_ref`: their platform id (PROLIFIC_PID, workerId)."""
    return worker.external_id


def is_crowd_voter_of(session, battle) -> bool:
    """Whether the battle's crowd voter is this browser's worker."""
    worker = session_worker(session)
    return (
        worker is not None
        and not worker.blocked
        and battle.voter_platform == worker.provider
        and battle.voter_ref == voter_ref(worker)
    )


def next_slot(assignment: Assignment):
    """The first item of the batch not yet judged (None when the batch is done), and the
    battle already fought or being fought for it (None if none)."""
    for entry in batch_items(assignment):
        if not entry.judged:
            crowd = (
                CrowdBattle.objects.filter(assignment=assignment, item_id=entry.pk)
                .select_related("battle__arena")
                .first()
            )
            return entry.item, crowd
    return None, None


def attach(battle, assignment: Assignment, item: Item, first_side: str = "") -> CrowdBattle:
    """Tie a new battle to the batch's slot; SlotRefused when the slot has one already
    (two tabs at once). Called inside the battle's transaction: a refusal undoes it."""
    try:
        with transaction.atomic():
            return CrowdBattle.objects.create(
                battle=battle, assignment=assignment, item=item, first_side=first_side
            )
    except IntegrityError:
        raise SlotRefused(gettext("Finish the battle you started first.")) from None


def attach_live(battle, assignment: Assignment) -> CrowdBattle:
    """A battle the crowd voter started: for the next slot of their batch, which must be a
    battle slot with no battle yet."""
    reason = refusal(assignment)
    if reason:
        raise SlotRefused(reason)
    if assignment.status != Assignment.Status.STARTED:
        raise SlotRefused(gettext("Your battles are done: your completion code is waiting."))
    item, crowd = next_slot(assignment)
    if item is None:
        raise SlotRefused(gettext("Your battles are done: your completion code is waiting."))
    if crowd is not None or item.role != Item.Role.TASK:
        raise SlotRefused(gettext("Finish the battle you started first."))
    return attach(battle, assignment, item)


def record_vote(battle) -> bool:
    """The vote of a crowd battle stored as its slot's judgment (gold scored there), and
    the batch submitted with a completion code once every slot has one. False when the
    battle is no crowd voter's, or their batch no longer takes answers (overdue, expired,
    or its worker blocked: the vote stays on the battle, the slot gets no judgment)."""
    crowd = (
        CrowdBattle.objects.filter(battle=battle)
        .select_related("assignment__campaign", "assignment__worker", "item")
        .first()
    )
    if crowd is None:
        return False
    assignment = crowd.assignment
    if assignment.status != Assignment.Status.STARTED or refusal(assignment):
        # As annotation's item pages refuse an answer to a closed or overdue batch.
        logger.info("Vote on battle %s after its assignment closed", battle.pk)
        return False
    payload = {"battle": str(battle.public_id), "vote": battle.vote}
    if crowd.first_side:
        payload["first"] = crowd.first_side
    record_judgment(
        assignment,
        crowd.item,
        payload,
        started_at=battle.started_at,
        client_duration_ms=None,
    )
    submit_if_complete(assignment, len(batch_items(assignment)))
    return True


def battle_page_of(assignment: Assignment, item: Item) -> str:
    """Where annotation sends a crowd voter for a slot of their batch: the arena's battle
    page, which shows their next battle (arenas/crowd.py, `next_step`)."""
    arena = assignment.campaign.arena_crowd.arena
    return reverse("arenas:battle-new", args=[arena.slug])
