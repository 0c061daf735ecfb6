"""Through the real broker to a real worker process (CI starts both; see .ci/run): votes
ask for the leaderboard, and the worker computes it once for the votes of its delay."""

import pytest
from django.utils import timezone

from arenas import battles
from arenas.battles import Outcome
from arenas.models import Arena, Battle, BattleAnswer, Leaderboard
from arenas.voters import Voter
from tests import factories
from tests.arenas.builders import arena, bot_system
from tests.evalhub.test_integration import wait_for
from tests.services import require_celery_worker

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def real_worker():
    require_celery_worker()


def voted_battle(made, voter, vote, prompt):
    battle = battles.start_battle(made, voter, prompt)
    for answer in BattleAnswer.objects.filter(turn__battle=battle):
        battles.claim(answer.pk, 60)
        battles.settle(answer.pk, Outcome("done", "Everest.", 50, 250, None))
    return battles.cast_vote(battle, vote)


def test_votes_are_counted_by_one_debounced_computation_in_the_worker(settings):
    settings.EVALHUB_ARENA_LEADERBOARD_DELAY_SECONDS = 2
    owner = factories.user()
    made = arena(owner, systems=[bot_system(owner), bot_system(owner)])
    voter = Voter(user=owner, platform="site", ref=f"user:{owner.pk}")
    first = voted_battle(made, voter, "a_better", "Which is the tallest mountain?")
    marked = Arena.objects.get(pk=made.pk).leaderboard_queued_at
    assert marked is not None and not Leaderboard.objects.exists()  # not in the request
    # Another prompt: a voter repeating one is flagged and left out (arenas/flags.py).
    voted_battle(made, voter, "tie", "Which is the longest river?")  # within the delay
    assert Arena.objects.get(pk=made.pk).leaderboard_queued_at == marked
    computed = wait_for(lambda: Leaderboard.objects.filter(arena=made, battles=2).exists())
    assert computed, "the worker did not compute the leaderboard within 60 s"
    assert Arena.objects.get(pk=made.pk).leaderboard_queued_at is None
    board = Leaderboard.objects.get(arena=made)
    assert board.computed_at <= timezone.now()
    assert {row["system"] for row in board.result["systems"]} == {
        first.system_a.slug,
        first.system_b.slug,
    }
    # The language was detected by the worker too.
    assert wait_for(lambda: Battle.objects.filter(pk=first.pk, language="en").exists())
