"""A system's owner never judges items that show their system.

The owner is known by their account: the logged-in user, and the user a worker record is
linked to (the identities they used). Allocation skips the batches holding such items;
when no other batch is left the worker is told why.
"""

from django.db.models import Q, QuerySet

from evalhub.models import System

from .models import Item, Worker


def owners_behind(worker: Worker, user=None) -> set[int]:
    """The accounts whose systems this worker may not judge."""
    owners = {worker.user_id} if worker.user_id else set()
    if user is not None and user.is_authenticated:
        owners.add(user.pk)
    return owners


def items_showing_systems_of(campaign, owners: set[int]) -> QuerySet:
    """The campaign's items that show (a response or a conversation of) a system owned by
    one of `owners`."""
    # Their systems first (the catalog's, a small table): most workers own none, and then
    # no item is read. Filtering the items by owner read every item of the campaign on
    # each allocation (70 ms at 50,000 items).
    systems = list(System.objects.filter(owner__in=owners).values_list("pk", flat=True))
    if not systems:
        return Item.objects.none()
    return Item.objects.filter(campaign=campaign).filter(
        Q(response_a__submission__system__in=systems)
        | Q(response_b__submission__system__in=systems)
        | Q(shown_responses__submission__system__in=systems)
        | Q(conversation__speakers__system__in=systems)
        | Q(conversation_b__speakers__system__in=systems)
        | Q(shown_conversations__speakers__system__in=systems)
    )
