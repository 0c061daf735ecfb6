"""Arenas for the tests: systems whose endpoints point at local fake servers on 127.0.0.1
(or at a closed port when no call is made), and arenas with those systems entered."""

import itertools

from arenas.models import Arena, ArenaSystem
from endpoints.models import BotEndpoint
from tests import factories

_n = itertools.count(1)
NOWHERE = "http://127.0.0.1:9/v1"  # the discard port: nothing listens


def bot_system(owner=None, *, url=NOWHERE, slug=None, shared=False, timeout=5.0, **fields):
    """A system of `owner` with an OpenAI-compatible endpoint at `url`; `shared`: other
    owners may call it."""
    system = factories.system(owner, slug=slug or f"bot-{next(_n)}", **fields)
    BotEndpoint.objects.create(
        system=system,
        protocol="openai",
        url=url,
        model_name=system.slug,
        timeout_seconds=timeout,
        allow_other_owners=shared,
    )
    return system


def arena(owner=None, *, systems=(), slug=None, **fields) -> Arena:
    """An arena of `owner` with `systems` entered (weight 1, through their endpoints)."""
    fields.setdefault("visibility", Arena.Visibility.PUBLIC)
    fields.setdefault("name", "Test arena")
    # Tests vote as soon as the fake models have answered: only the moderation tests
    # (tests/arenas/test_moderation.py) ask for fast votes to be flagged.
    fields.setdefault("fast_vote_fraction", 0.0)
    made = Arena.objects.create(owner=owner, slug=slug or f"arena-{next(_n)}", **fields)
    for system in systems:
        ArenaSystem.objects.create(
            arena=made, system=system, endpoint=getattr(system, "endpoint", None)
        )
    return made
