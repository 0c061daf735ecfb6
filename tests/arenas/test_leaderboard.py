"""An arena's leaderboard from its battles: votes as Chatbot Arena counts them, flagged
battles left out by the arena's switch, provisional systems, and the debounced task."""

from datetime import timedelta

import pytest
from django.utils import timezone

from arenas import leaderboard
from arenas.models import Arena, Battle, Leaderboard
from arenas.tasks import compute_leaderboard, lost, requeue_lost_leaderboards
from tests import factories
from tests.arenas.builders import arena

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _few_rounds(settings):
    settings.EVALHUB_ARENA_BOOTSTRAP_ROUNDS = 20


def battles(made, one, two, votes, **fields):
    now = timezone.now()
    for n, vote in enumerate(votes):
        Battle.objects.create(
            arena=made,
            system_a=one,
            system_b=two,
            voter_platform="site",
            question_id=f"{one.slug}-{n}-{vote}-{fields.get('flags', '')}",
            vote=vote,
            voted_at=now if vote else None,
            **fields,
        )


@pytest.fixture
def setup():
    owner = factories.user()
    one = factories.system(owner, slug="one", name="One")
    two = factories.system(owner, slug="two", name="Two")
    # Ranked from the first battle: these tests are about the ratings.
    return arena(owner, provisional_battles=0, provisional_width=2000), one, two


def test_three_wins_to_one_give_the_hand_worked_ratings(setup):
    made, one, two = setup
    battles(made, one, two, ["a_better", "a_better", "a_better", "b_better", ""])
    result = leaderboard.compute(made)
    first, second = result["systems"]
    assert (first["system"], first["rank"]) == ("one", 1)
    assert first["rating"] == pytest.approx(1095.4, abs=0.05)  # 1000 + 200 log10(3)
    assert second["rating"] == pytest.approx(904.6, abs=0.05)
    assert result["battles"] == 4  # the unvoted battle is not counted
    assert result["pair_battles"] == {"systems": ["one", "two"], "matrix": [[0, 4], [4, 0]]}
    assert result["win_rate"]["matrix"] == [[None, 0.75], [0.25, None]]


def test_both_bad_counts_as_a_tie(setup):
    made, one, two = setup
    battles(made, one, two, ["a_better", "a_better", "b_better", "both_bad", "tie"])
    first, second = leaderboard.compute(made)["systems"]
    # 3 effective wins to 2: a gap of 400 log10(1.5).
    assert first["rating"] - second["rating"] == pytest.approx(70.4, abs=0.1)


def test_flagged_battles_are_left_out_unless_the_arena_counts_them(setup):
    made, one, two = setup
    battles(made, one, two, ["a_better"] * 2 + ["b_better"])
    battles(made, one, two, ["b_better"] * 3, flags=["name_in_answer"])
    left_out = leaderboard.compute(made)
    assert (left_out["battles"], left_out["flagged_left_out"]) == (3, 3)
    assert left_out["systems"][0]["system"] == "one"
    Arena.objects.filter(pk=made.pk).update(exclude_flagged=False)
    made.refresh_from_db()
    counted = leaderboard.compute(made)
    assert (counted["battles"], counted["flagged_left_out"]) == (6, 0)
    assert counted["systems"][0]["system"] == "two"


def test_systems_with_few_battles_are_provisional(setup):
    made, one, two = setup
    battles(made, one, two, ["a_better", "b_better", "tie"])
    made.provisional_width = 2000  # the interval does not matter here
    made.provisional_battles = 3
    assert [s["provisional"] for s in leaderboard.compute(made)["systems"]] == [False, False]
    made.provisional_battles = 4
    assert [s["provisional"] for s in leaderboard.compute(made)["systems"]] == [True, True]


def test_the_task_stores_the_result_and_clears_the_mark(setup):
    made, one, two = setup
    battles(made, one, two, ["a_better", "b_better"])
    Arena.objects.filter(pk=made.pk).update(leaderboard_queued_at=timezone.now())
    assert compute_leaderboard(made.pk) == 2
    stored = Leaderboard.objects.get(arena=made)
    assert stored.battles == 2 and len(stored.result["systems"]) == 2
    assert Arena.objects.get(pk=made.pk).leaderboard_queued_at is None
    assert leaderboard.stored_result(made)["pending"] is False


def test_an_older_computation_never_overwrites_a_newer_one(setup):
    made, one, two = setup
    battles(made, one, two, ["a_better"])
    later = timezone.now() + timedelta(minutes=5)
    Leaderboard.objects.create(arena=made, result={"newer": True}, battles=9, computed_at=later)
    compute_leaderboard(made.pk)
    assert Leaderboard.objects.get(arena=made).result == {"newer": True}


def test_a_lost_message_is_queued_again_by_the_sweep(setup, settings):
    made, one, two = setup
    battles(made, one, two, ["a_better"])
    settings.EVALHUB_ARENA_LEADERBOARD_DELAY_SECONDS = 10
    Arena.objects.filter(pk=made.pk).update(leaderboard_queued_at=timezone.now())
    assert lost() == []  # still within its delay
    Arena.objects.filter(pk=made.pk).update(
        leaderboard_queued_at=timezone.now() - timedelta(seconds=200)
    )
    assert lost() == [made.pk]
    assert requeue_lost_leaderboards() == 1  # eager Celery: computed at once
    assert Leaderboard.objects.get(arena=made).battles == 1
    assert lost() == []
