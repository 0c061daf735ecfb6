"""A system's owner never judges items that show their system.

The owner is known by their account: the logged-in user, and the user a worker record is
linked to (the identities they used). Allocation skips the batches holding such items;
when no other batch is left the worker is told why.
"""

from django.db.models import Q, QuerySet

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
    return Item.objects.filter(campaign=campaign).filter(
        Q(response_a__submission__system__owner__in=owners)
        | Q(response_b__submission__system__owner__in=owners)
        | Q(conversation__speakers__system__owner__in=owners)
        | Q(conversation_b__speakers__system__owner__in=owners)
    )
