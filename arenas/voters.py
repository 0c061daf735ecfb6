"""Who votes in an arena, and who they are.

An arena says who may vote (`Arena.voters`):

- ``signed_in``: anybody signed in who may see the arena;
- ``link``: anybody who opened the arena's invitation link in this browser (the session
  remembers it), signed in or not.

The arena's owner and staff may always vote (to try their arena). A voter's identity is
their account ("user:<id>") when signed in, otherwise a random id kept in their session
("visitor:<id>"); a battle is theirs alone: nobody else sees it before or after the vote.

A participant a crowd platform sent (arenas/crowd_slots.py) votes while their browser holds
a batch of one of the arena's crowd launches, whatever the arena's own rule, and is
identified by their platform id (`voter_platform` "prolific" or "mturk").
"""

import secrets
from dataclasses import dataclass

from . import crowd_slots
from .models import Arena, Battle

ADMITTED = "arena-admitted"  # session key: pks of the arenas whose link this browser opened
VISITOR = "arena-visitor"  # session key: the visitor's random id


@dataclass(frozen=True)
class Voter:
    user: object | None  # a User, or None for a visitor
    platform: str  # Battle.Platform
    ref: str
    assignment: object | None = None  # a crowd voter's batch (annotation's Assignment)


def admit(session, arena: Arena) -> None:
    """Remember that this browser opened the arena's invitation link."""
    admitted = set(session.get(ADMITTED, []))
    admitted.add(arena.pk)
    session[ADMITTED] = sorted(admitted)


def may_vote(user, session, arena: Arena) -> bool:
    if arena.is_managed_by(user):
        return True
    crowd = crowd_slots.crowd_assignment(session, arena)
    if crowd is not None:
        return crowd_slots.refusal(crowd) is None
    if arena.voters == Arena.Voters.LINK:
        return arena.pk in session.get(ADMITTED, [])
    return bool(user and user.is_authenticated and arena.is_visible_to(user))


def identify(user, session, arena: Arena | None = None) -> Voter:
    """The voter behind a request (a visitor gets a random id, kept in the session; a
    crowd voter of `arena` is their platform identity)."""
    crowd = crowd_slots.crowd_assignment(session, arena) if arena is not None else None
    if crowd is not None:
        worker = crowd.worker
        ref = crowd_slots.voter_ref(worker)
        return Voter(user=None, platform=worker.provider, ref=ref, assignment=crowd)
    if user is not None and user.is_authenticated:
        return Voter(user=user, platform=Battle.Platform.SITE, ref=f"user:{user.pk}")
    if VISITOR not in session:
        session[VISITOR] = secrets.token_hex(12)
    return Voter(user=None, platform=Battle.Platform.LINK, ref=f"visitor:{session[VISITOR]}")


def owns(user, session, battle: Battle) -> bool:
    """Whether the request's voter is the battle's: only they see it and act on it."""
    if battle.source not in (Battle.Source.LIVE, Battle.Source.GOLD):
        return False
    if battle.voter_platform in Battle.CROWD_PLATFORMS:
        return crowd_slots.is_crowd_voter_of(session, battle)
    if user is not None and user.is_authenticated:
        return battle.voter_ref == f"user:{user.pk}"
    visitor = session.get(VISITOR)
    return visitor is not None and battle.voter_ref == f"visitor:{visitor}"
