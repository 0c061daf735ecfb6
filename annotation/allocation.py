"""Handing out work: the next batch for a worker, atomically, under the campaign's rules.

Rules: a worker never gets two slots of one batch (so never judges an item twice), never
gets a batch holding an item whose group (e.g. a conversation) they have met before, nor
one holding an item that shows a system its owner(s) own (annotation/conflicts.py), never
holds more than `max_batches_per_worker` batches, and resumes a started batch instead of
opening another. Assignments past their time limit expire and a fresh open slot takes
their place, so their items go back to the pool.

Concurrency: on PostgreSQL the open slot is taken with SELECT ... FOR UPDATE SKIP LOCKED, so
concurrent workers never wait on each other's rows; the worker's own row is locked first,
so two requests of one worker are serialised. On SQLite the first statement writes, which
takes the database's write lock: allocation is serialised there, and correct. In both,
the claim is a conditional UPDATE whose row count is checked.

The number of queries does not depend on the size of the campaign.
"""

import random
from dataclasses import dataclass
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone
from django.utils.translation import gettext

from . import pairing, webhook_events
from .conflicts import items_showing_systems_of
from .hot_queries import started_and_held
from .models import Assignment, Campaign, Item, Worker


@dataclass(frozen=True)
class NoWork(Exception):
    reason: str

    def __str__(self):
        return self.reason


def expire_overdue(campaign: Campaign, now) -> int:
    """Expire overdue assignments and open one fresh slot for each. Returns how many."""
    # No ordering: the model's default one joins the campaign and the batch, whose rows
    # FOR UPDATE would then lock as well.
    overdue = Assignment.objects.filter(
        campaign=campaign, status=Assignment.Status.STARTED, expires_at__lt=now
    ).order_by()
    if connection.vendor == "postgresql":
        # Locked rows cannot be submitted meanwhile; rows another allocator is expiring
        # right now are skipped, not expired twice.
        overdue = overdue.select_for_update(skip_locked=True)
    rows = list(overdue.values_list("pk", "batch_id"))
    if not rows:
        return 0
    Assignment.objects.filter(pk__in=[pk for pk, _ in rows]).update(
        status=Assignment.Status.EXPIRED
    )
    Assignment.objects.bulk_create(
        Assignment(campaign=campaign, batch_id=batch_id) for _, batch_id in rows
    )
    return len(rows)


def _lock_worker(worker: Worker, now) -> None:
    # An UPDATE holds the worker's row lock until commit (PostgreSQL) and takes the write
    # lock of the whole database (SQLite): either way, what follows is serialised.
    Worker.objects.filter(pk=worker.pk).update(last_seen=now)


def _open_slot(campaign: Campaign, worker: Worker, batch=None, owners=frozenset(), rng=None):
    """A batch without a check the worker has answered if there is one; else one that
    repeats such a gold check: a campaign with one gold spec copied into every batch would
    otherwise hold each worker to one batch, whatever its cap."""
    slot = _open_slot_among(campaign, worker, batch, owners, rng, repeat_gold=False)
    if slot is None:
        slot = _open_slot_among(campaign, worker, batch, owners, rng, repeat_gold=True)
    return slot


def _open_slot_among(campaign, worker, batch, owners, rng, *, repeat_gold: bool):
    seen_batches = Assignment.objects.filter(campaign=campaign, worker=worker).values("batch_id")
    seen_groups = Item.objects.filter(
        batch__assignments__worker=worker, batch__campaign=campaign
    ).exclude(group_key="")
    if repeat_gold:
        seen_groups = seen_groups.exclude(role=Item.Role.GOLD)
    seen_groups = seen_groups.values("group_key")
    conflicting_batches = Item.objects.filter(
        campaign=campaign, group_key__in=seen_groups, batch__isnull=False
    ).values("batch_id")
    candidates = Assignment.objects.filter(campaign=campaign, status=Assignment.Status.OPEN)
    if batch is not None:  # a platform that sells one batch per task (an MTurk HIT)
        candidates = candidates.filter(batch=batch)
    if owners:
        own_systems = items_showing_systems_of(campaign, owners).filter(batch__isnull=False)
        candidates = candidates.exclude(batch_id__in=own_systems.values("batch_id"))
    candidates = (
        candidates.exclude(batch_id__in=seen_batches)
        .exclude(batch_id__in=conflicting_batches)
        # Batches are created in the order of their positions (add_items and the
        # importers), so batch_id order is position order, and it is the open-slot index's.
        .order_by("batch_id", "pk")
    )
    if campaign.allocation == Campaign.Allocation.ADAPTIVE and pairing.supported(campaign):
        # Pairing (issue 27): the slot the adaptive rule draws; if another allocator took
        # it meanwhile, the first free one in order.
        chosen = pairing.choose_slot(campaign, candidates, rng or _RANDOM)
        if chosen is not None:
            picked = candidates.filter(pk=chosen)
            if connection.vendor == "postgresql":
                picked = picked.select_for_update(skip_locked=True, of=("self",))
            slot = picked.first()
            if slot is not None:
                return slot
    if connection.vendor == "postgresql":
        candidates = candidates.select_for_update(skip_locked=True, of=("self",))
    return candidates.first()


def next_assignment(
    campaign: Campaign, worker: Worker, now=None, *, batch=None, owners=frozenset(), rng=None
) -> Assignment:
    """The worker's started assignment, or a newly claimed one; raises NoWork with a reason.
    With `batch`, only a slot of that batch will do (an MTurk HIT is one batch). `owners`
    are the accounts behind the worker (conflicts.owners_behind): no batch showing one of
    their systems is handed out."""
    now = now or timezone.now()
    if worker.blocked:
        raise NoWork(blocked_message(worker))
    if not campaign.is_live:
        raise NoWork(gettext("This campaign is not accepting work right now."))
    for _ in range(5):
        with transaction.atomic():
            _lock_worker(worker, now)
            expire_overdue(campaign, now)
            current, held = started_and_held(campaign, worker)
            if current and batch is not None and current.batch_id != batch.pk:
                raise NoWork(
                    gettext(
                        "You have another batch of this campaign open: finish it first, "
                        "or return this task."
                    )
                )
            if current:
                return current
            if budget_reached(campaign):
                break  # told outside the transaction, whose rollback would take the notice
            if held >= campaign.max_batches_per_worker:
                raise NoWork(
                    gettext(
                        "You have done the most batches one person may do here (%(held)s). "
                        "Thank you!"
                    )
                    % {"held": held}
                )
            slot = _open_slot(campaign, worker, batch, owners, rng)
            if slot is None and owners and items_showing_systems_of(campaign, owners).exists():
                raise NoWork(
                    gettext(
                        "This campaign shows a system you own, and its owner may not judge it: "
                        "there is no work without it left for you."
                    )
                )
            if slot is None:
                raise NoWork(gettext("There is no more work for you in this campaign. Thank you!"))
            claim = {
                "worker": worker,
                "status": Assignment.Status.STARTED,
                "started_at": now,
                "expires_at": now + timedelta(minutes=campaign.time_limit_minutes),
            }
            claimed = Assignment.objects.filter(pk=slot.pk, status=Assignment.Status.OPEN).update(
                **claim
            )
            if claimed:
                # The row is as read plus this claim (it was locked, or the database was,
                # and the UPDATE matched it still open): no need to read it back.
                for name, value in claim.items():
                    setattr(slot, name, value)
                slot.campaign = campaign
                return slot
    else:
        raise NoWork(
            gettext("Too many people are asking for work at once; please reload in a moment.")
        )
    tell_budget_reached(campaign)
    raise NoWork(
        gettext("This campaign has spent its budget, so it hands out no new work. Thank you!")
    )


def budget_reached(campaign: Campaign) -> bool:
    """Whether one more batch could take the campaign over its budget: what it paid (rewards
    and bonuses, as its page counts them) plus the rewards of the batches in progress, which
    are finished and paid, plus the next one's."""
    if campaign.budget is None or not campaign.reward_per_batch:
        return False
    from .costs import amount_paid

    started = Assignment.objects.filter(campaign=campaign, status=Assignment.Status.STARTED)
    committed = amount_paid(campaign) + started.count() * campaign.reward_per_batch
    return committed + campaign.reward_per_batch > campaign.budget


def tell_budget_reached(campaign: Campaign) -> None:
    """Its owner and staff hear it once."""
    from evalhub.models import NoticeKind
    from evalhub.notifications import notify, notify_staff

    text = (
        f'The campaign "{campaign.title}" reached its budget of {campaign.budget:.2f}: it '
        "hands out no new batches (those in progress finish). Raise the budget to go on."
    )
    key = f"budget_reached:{campaign.pk}:{campaign.budget}"
    url = campaign.get_absolute_url()
    notify(campaign.owner, NoticeKind.BUDGET_REACHED, text, url, once_key=key)
    notify_staff(NoticeKind.BUDGET_REACHED, text, url, once_key=key)
    webhook_events.over_budget(campaign)


_RANDOM = random.SystemRandom()


def blocked_message(worker: Worker) -> str:
    """What a blocked worker is told: that they cannot take work here, and why, in the
    reason staff gave (workers see only their own)."""
    if worker.blocked_reason:
        return gettext(
            "Your account cannot take new work in this campaign: %(reason)s "
            "If you think this is a mistake, reply to the study's message on your platform."
        ) % {"reason": worker.blocked_reason}
    return gettext("Your account cannot take new work in this campaign.")
