"""Who votes in an arena, and who they are.

An arena says who may vote (`Arena.voters`):

- ``signed_in``: anybody signed in who may see the arena;
- ``link``: anybody who opened the arena's invitation link in this browser (the session
  remembers it), signed in or not.

The arena's owner and staff may always vote (to try their arena). A voter's identity is
their account ("user:<id>") when signed in, otherwise a random id kept in their session
("visitor:<id>"); a battle is theirs alone: nobody else sees it before or after the vote.
"""

import secrets
from dataclasses import dataclass

from .models import Arena, Battle

ADMITTED = "arena-admitted"  # session key: pks of the arenas whose link this browser opened
VISITOR = "arena-visitor"  # session key: the visitor's random id


@dataclass(frozen=True)
class Voter:
    user: object | None  # a User, or None for a visitor
    platform: str  # Battle.Platform
    ref: str


def admit(session, arena: Arena) -> None:
    """Remember that this browser opened the arena's invitation link."""
    admitted = set(session.get(ADMITTED, []))
    admitted.add(arena.pk)
    session[ADMITTED] = sorted(admitted)


def may_vote(user, session, arena: Arena) -> bool:
    if arena.is_managed_by(user):
        return True
    if arena.voters == Arena.Voters.LINK:
        return arena.pk in session.get(ADMITTED, [])
    return bool(user and user.is_authenticated and arena.is_visible_to(user))


def identify(user, session) -> Voter:
    """The voter behind a request (a visitor gets a random id, kept in the session)."""
    if user is not None and user.is_authenticated:
        return Voter(user=user, platform=Battle.Platform.SITE, ref=f"user:{user.pk}")
    if VISITOR not in session:
        session[VISITOR] = secrets.token_hex(12)
    return Voter(user=None, platform=Battle.Platform.LINK, ref=f"visitor:{session[VISITOR]}")


def owns(user, session, battle: Battle) -> bool:
    """Whether the request's voter is the battle's: only they see it and act on it."""
    if battle.source != Battle.Source.LIVE:
        return False
    if user is not None and user.is_authenticated:
        return battle.voter_ref == f"user:{user.pk}"
    visitor = session.get(VISITOR)
    return visitor is not None and battle.voter_ref == f"visitor:{visitor}"
