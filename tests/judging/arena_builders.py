"""Arenas with voted battles for the judging and analysis tests, and a fake judge that
answers from the conversations it is shown (so its verdict does not depend on the order)."""

import itertools
import uuid

from django.utils import timezone

from arenas.models import Arena, Battle, BattleAnswer, BattleTurn
from judging.models import JudgeRun
from tests import factories
from tests.arenas import builders as arena_builders
from tests.judging import builders, fake_judges

# The word a fake judge looks for: the conversation whose answers hold it is the better one.
BEST = "EXCELLENT"
_n = itertools.count(1)


def arena(owner, n_systems=3, **fields) -> Arena:
    systems = [factories.system(owner, slug=f"arena-bot-{next(_n)}") for _ in range(n_systems)]
    return arena_builders.arena(owner, systems=systems, **fields)


def systems_of(arena: Arena) -> list:
    return [entry.system for entry in arena.entries.select_related("system").order_by("pk")]


def battle(arena, system_a, system_b, vote="a_better", *, turns=2, best=None) -> Battle:
    """A battle of `turns` turns (0: imported without text); `best` ("a", "b" or None) is
    the side whose answers hold the word the fake judge prefers."""
    made = Battle.objects.create(
        arena=arena,
        system_a=system_a,
        system_b=system_b,
        question_id=uuid.uuid4().hex,
        voter_platform=Battle.Platform.SITE if turns else Battle.Platform.IMPORTED,
        vote=vote,
        voted_at=timezone.now() if vote else None,
        turns=turns,
        source=Battle.Source.LIVE if turns else Battle.Source.IMPORTED,
    )
    for number in range(1, turns + 1):
        turn = BattleTurn.objects.create(battle=made, number=number, prompt=f"Question {number}?")
        for side in ("a", "b"):
            word = BEST if side == best else "plain"
            BattleAnswer.objects.create(
                turn=turn,
                side=side,
                status=BattleAnswer.Status.DONE,
                text=f"Answer {number} of {side}: {word}.",
            )
    return made


def marked_judge():
    """Answers "1" or "2" for the conversation holding BEST, "tie" when neither does."""

    def run(payload):
        prompt = fake_judges.prompt_of(payload)
        first, _, rest = prompt.partition("Conversation 2:")
        second = rest.split("Which assistant", 1)[0]
        better = "1" if BEST in first else "2" if BEST in second else "tie"
        return fake_judges.with_usage(f'{{"better": "{better}"}}', (200, 6))

    return run


def arena_run(server, arena, **settings) -> JudgeRun:
    """A queued run of a judge of the arena's owner over its battles (default rubric)."""
    judge = builders.judge(server, owner=arena.owner)
    return JudgeRun.objects.create(
        judge=judge,
        rubric=builders.default_rubric("arena"),
        arena=arena,
        items_total=Battle.objects.filter(arena=arena).exclude(vote="").count(),
        **settings,
    )
