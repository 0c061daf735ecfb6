"""Entering systems in an arena, changing their weights, taking them out.

The rule of who may be entered is `models.entry_problem`'s; this module applies it and
keeps each change in one statement or transaction.
"""

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from endpoints.models import BotEndpoint
from evalhub.errors import UserInputError
from evalhub.models import System

from .models import Arena, ArenaSystem, entry_problem


def enter(arena: Arena, system: System, weight: float = 1.0) -> ArenaSystem:
    """Enter `system` with its endpoint (UserInputError when it may not be entered)."""
    endpoint = BotEndpoint.objects.filter(system=system).first()
    if endpoint is None:
        raise UserInputError(f"{system.slug} has no bot endpoint: register one first.")
    problem = entry_problem(arena, system, endpoint)
    if problem:
        raise UserInputError(problem)
    named = ArenaSystem.objects.filter(arena=arena, system=system, endpoint__isnull=True).first()
    if named is not None:
        # Entered by imported battles only: now with its endpoint, for live battles too.
        named.endpoint, named.weight = endpoint, weight
        named.save(update_fields=["endpoint", "weight"])
        return named
    entry = ArenaSystem(arena=arena, system=system, endpoint=endpoint, weight=weight)
    try:
        entry.full_clean(validate_unique=False, validate_constraints=False)
    except ValidationError as invalid:
        raise UserInputError(" ".join(invalid.messages)) from None
    try:
        with transaction.atomic():
            entry.save()
    except IntegrityError:
        raise UserInputError(f"{system.slug} is already in {arena.slug}.") from None
    return entry


def set_weight(entry: ArenaSystem, weight: float) -> None:
    if not 0.0 <= weight <= 100.0:
        raise UserInputError("A weight is from 0 to 100.")
    ArenaSystem.objects.filter(pk=entry.pk).update(weight=weight)
    entry.weight = weight


def remove(entry: ArenaSystem) -> None:
    """Take the system out of new battles; its past battles stay, and so do their votes."""
    entry.delete()
