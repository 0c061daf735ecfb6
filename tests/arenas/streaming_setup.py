"""A battle between two fake OpenAI-compatible models streaming on 127.0.0.1
(tests/endpoints/sse_fake.py), and a way to read one side's answer to its end."""

import asyncio
import random
from contextlib import aclosing

from arenas import battles
from arenas.answering import answer_events
from arenas.models import BattleAnswer
from arenas.voters import Voter
from tests import factories
from tests.arenas.builders import arena, bot_system


def battle_between(server_a, server_b, *, owner=None, timeout=5.0, **arena_fields):
    """A battle whose side A is `server_a`'s model and side B `server_b`'s, first turn
    asked; the voter is the arena's owner."""
    owner = owner or factories.user()
    first = bot_system(owner, url=server_a.base_url, timeout=timeout, slug="model-one")
    second = bot_system(owner, url=server_b.base_url, timeout=timeout, slug="model-two")
    made = arena(owner, systems=[first, second], **arena_fields)
    voter = Voter(user=owner, platform="site", ref=f"user:{owner.pk}")
    rng = _SidesInOrder()
    return battles.start_battle(made, voter, "Tell me about the sea.", rng=rng)


class _SidesInOrder(random.Random):
    """Draws the only pair and keeps model-one on side A."""

    def random(self):
        return 0.0


def answer(battle, side, number=1) -> BattleAnswer:
    return BattleAnswer.objects.get(turn__battle=battle, turn__number=number, side=side)


async def read_all(answer_id):
    items = []
    async with aclosing(answer_events(answer_id)) as events:
        async for item in events:
            items.append(item)
    return items


def read(answer_id):
    return asyncio.run(read_all(answer_id))
