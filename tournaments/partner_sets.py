"""Partner sets are frozen once a tournament used them: a change makes a new version.

Bipartite-play compares targets across studies only through a fixed, shared set of
partners (Sato, Kishinami et al., 2022); a set that changed after a tournament used it would
make that tournament's results refer to partners it never met. So a used set (referenced by any
tournament) is never changed in place: `revise` stores the change as version n + 1 under
the same slug and leaves version n to the tournaments that used it, and the model's
signals refuse any direct change to a used set's rows or systems. New tournaments pick a
slug's latest version (the API's partner_set field, the forms' list).
"""

from django.db import transaction
from django.db.models import Max

from evalhub.errors import UserInputError

from .models import PartnerSet


class PartnerSetFrozen(UserInputError):
    """A tournament used this partner set, so it is not changed: revise it instead."""


def is_used(partner_set: PartnerSet) -> bool:
    return partner_set.pk is not None and partner_set.tournaments.exists()


def next_version(slug: str) -> int:
    return (PartnerSet.objects.filter(slug=slug).aggregate(v=Max("version"))["v"] or 0) + 1


@transaction.atomic
def revise(partner_set: PartnerSet, *, systems=None, **fields) -> PartnerSet:
    """Apply `fields` (name, description) and `systems` to the set: in place while no
    tournament used it, else as a new version (returned; the used one stays as it was)."""
    if is_used(partner_set):
        old_systems = list(partner_set.systems.all())
        partner_set = PartnerSet(
            slug=partner_set.slug,
            version=next_version(partner_set.slug),
            name=partner_set.name,
            description=partner_set.description,
        )
        systems = old_systems if systems is None else systems
    for name, value in fields.items():
        setattr(partner_set, name, value)
    partner_set.save()
    if systems is not None:
        partner_set.systems.set(systems)
    return partner_set


def refuse_change_when_used(partner_set: PartnerSet) -> None:
    if is_used(partner_set):
        raise PartnerSetFrozen(
            f"{partner_set} is used by a tournament, so it cannot change; save the change "
            "as a new version instead."
        )
