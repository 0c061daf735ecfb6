"""A battle's steps on the database: start, turns, stop, vote, and settling an answer."""

import random

import pytest
from django.utils import timezone

from arenas import battles
from arenas.battles import BattleRefused, Outcome
from arenas.models import Arena, Battle, BattleAnswer, BattleTurn, Leaderboard
from arenas.voters import Voter
from tests import factories
from tests.arenas.builders import arena, bot_system

pytestmark = pytest.mark.django_db


def voter_of(user):
    return Voter(user=user, platform="site", ref=f"user:{user.pk}")


@pytest.fixture
def owner():
    return factories.user()


@pytest.fixture
def two_model_arena(owner):
    return arena(owner, systems=[bot_system(owner, slug="one"), bot_system(owner, slug="two")])


def settle_both(battle, number=1, status="done", text="An answer."):
    for answer in BattleAnswer.objects.filter(turn__battle=battle, turn__number=number):
        assert battles.claim(answer.pk, 60)
        battles.settle(answer.pk, Outcome(status, text, 100, 600, None))


def test_a_battle_starts_with_a_drawn_pair_and_its_first_turn(
    owner, two_model_arena, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        battle = battles.start_battle(
            two_model_arena, voter_of(owner), "  Quelle est la capitale de la France ?  "
        )
    battle.refresh_from_db()
    assert {battle.system_a.slug, battle.system_b.slug} == {"one", "two"}
    assert (battle.voter, battle.voter_platform, battle.voter_ref) == (
        owner,
        "site",
        f"user:{owner.pk}",
    )
    assert battle.language == "fr"
    assert battle.pairing["rule"] == "uniform" and battle.pairing["probability"] == 1.0
    assert battle.turns == 1 and battle.source == "live" and len(battle.question_id) == 32
    turn = BattleTurn.objects.get(battle=battle)
    assert turn.prompt == "Quelle est la capitale de la France ?" and turn.asked_at
    assert sorted(turn.answers.values_list("side", "status")) == [
        ("a", "pending"),
        ("b", "pending"),
    ]


def test_a_blocked_prompt_is_refused_and_nothing_is_stored(owner):
    made = arena(owner, systems=[bot_system(owner), bot_system(owner)], block_list=["secret plan"])
    with pytest.raises(BattleRefused, match="does not accept"):
        battles.start_battle(made, voter_of(owner), "Tell me the SECRET PLAN now")
    assert not Battle.objects.exists()


def test_an_empty_or_too_long_prompt_is_refused(owner, two_model_arena):
    with pytest.raises(BattleRefused, match="Write a message"):
        battles.start_battle(two_model_arena, voter_of(owner), "   ")
    with pytest.raises(BattleRefused, match="at most"):
        battles.start_battle(two_model_arena, voter_of(owner), "x" * 8001)
    assert not Battle.objects.exists()


def test_an_arena_needs_two_drawable_systems(owner):
    made = arena(owner, systems=[bot_system(owner), bot_system(owner)])
    made.entries.filter(pk=made.entries.first().pk).update(weight=0)
    with pytest.raises(BattleRefused, match="fewer than two"):
        battles.start_battle(made, voter_of(owner), "hello")
    assert not Battle.objects.exists()


def test_a_zero_weight_system_is_never_drawn(owner):
    systems = [bot_system(owner, slug=s) for s in ("p", "q", "r")]
    made = arena(owner, systems=systems)
    made.entries.filter(system__slug="r").update(weight=0)
    rng = random.Random(4)
    drawn = {
        frozenset((b.system_a.slug, b.system_b.slug))
        for b in (battles.start_battle(made, voter_of(owner), "hi", rng=rng) for _ in range(10))
    }
    assert drawn == {frozenset("pq")}


def test_the_next_turn_waits_for_both_answers(owner, two_model_arena):
    battle = battles.start_battle(two_model_arena, voter_of(owner), "hello")
    with pytest.raises(BattleRefused, match="Wait until both"):
        battles.add_turn(battle, "and then?")
    settle_both(battle)
    turn = battles.add_turn(battle, "and then?")
    battle.refresh_from_db()
    assert (turn.number, battle.turns) == (2, 2)
    assert turn.answers.count() == 2


def test_turns_stop_at_the_arenas_limit(owner):
    made = arena(owner, systems=[bot_system(owner), bot_system(owner)], max_turns=2)
    battle = battles.start_battle(made, voter_of(owner), "one")
    settle_both(battle)
    battles.add_turn(battle, "two")
    settle_both(battle, 2)
    with pytest.raises(BattleRefused, match="allows 2 turns"):
        battles.add_turn(battle, "three")
    assert BattleTurn.objects.filter(battle=battle).count() == 2


def test_a_stopped_answer_lets_the_battle_go_on(owner, two_model_arena):
    battle = battles.start_battle(two_model_arena, voter_of(owner), "hello")
    settle_both(battle, status="stopped", text="Partial")
    assert battles.add_turn(battle, "go on").number == 2


def test_a_vote_waits_for_the_answers_and_is_stored_once(owner, two_model_arena):
    battle = battles.start_battle(two_model_arena, voter_of(owner), "hello")
    with pytest.raises(BattleRefused, match="Wait until both"):
        battles.cast_vote(battle, "tie")
    settle_both(battle)
    voted = battles.cast_vote(battle, "both_bad")
    assert voted.vote == "both_bad" and voted.voted_at <= timezone.now()
    again = battles.cast_vote(battle, "both_bad")  # a double click
    assert again.voted_at == voted.voted_at
    with pytest.raises(BattleRefused, match="already been voted"):
        battles.cast_vote(battle, "a_better")
    with pytest.raises(BattleRefused, match="start a new round"):
        battles.add_turn(battle, "more?")
    assert Battle.objects.get().vote == "both_bad"


def test_an_unknown_vote_is_refused(owner, two_model_arena):
    battle = battles.start_battle(two_model_arena, voter_of(owner), "hello")
    settle_both(battle)
    with pytest.raises(BattleRefused):
        battles.cast_vote(battle, "model_a")
    assert Battle.objects.get().vote == ""


@pytest.mark.django_db(transaction=True)
def test_a_vote_marks_the_arena_and_queues_the_leaderboard_once(owner, settings):
    settings.EVALHUB_ARENA_BOOTSTRAP_ROUNDS = 10
    made = arena(owner, systems=[bot_system(owner), bot_system(owner)])
    first = battles.start_battle(made, voter_of(owner), "hello")
    settle_both(first)
    battles.cast_vote(first, "a_better")
    # Eager Celery ran the queued task after the commit: the mark is cleared again.
    board = Leaderboard.objects.get(arena=made)
    assert board.battles == 1 and len(board.result["systems"]) == 2
    assert Arena.objects.get(pk=made.pk).leaderboard_queued_at is None


def test_a_vote_inside_a_pending_mark_queues_nothing_more(
    owner, two_model_arena, django_capture_on_commit_callbacks
):
    marked = timezone.now()
    Arena.objects.filter(pk=two_model_arena.pk).update(leaderboard_queued_at=marked)
    battle = battles.start_battle(two_model_arena, voter_of(owner), "hello")
    settle_both(battle)
    with django_capture_on_commit_callbacks() as callbacks:
        battles.cast_vote(battle, "tie")
    assert callbacks == []
    assert Arena.objects.get(pk=two_model_arena.pk).leaderboard_queued_at == marked


def test_settling_counts_tokens_speed_and_style(owner, two_model_arena):
    battle = battles.start_battle(two_model_arena, voter_of(owner), "hello")
    answer = BattleAnswer.objects.get(turn__battle=battle, side="a")
    battles.claim(answer.pk, 60)
    battles.settle(answer.pk, Outcome("done", "# Title\n1. **one**", 200, 1200, None))
    answer.refresh_from_db()
    # Counted (no usage reported): "#", "Title", "1", ".", "*", "*", "one", "*", "*" = 9.
    assert (answer.tokens, answer.tokens_reported) == (9, False)
    assert answer.tokens_per_second == pytest.approx(9.0)  # 9 tokens in 1000 ms
    battle.refresh_from_db()
    assert battle.tokens_a == 9 and battle.style_a["list_count"]["ordered"] == 1
    assert battle.style_a["header_count"]["h1"] == 1 and battle.style_a["bold_count"]["**"] == 1


def test_reported_tokens_win_over_counted_ones(owner, two_model_arena):
    battle = battles.start_battle(two_model_arena, voter_of(owner), "hello")
    answer = BattleAnswer.objects.get(turn__battle=battle, side="b")
    battles.claim(answer.pk, 60)
    battles.settle(answer.pk, Outcome("done", "two words", 10, 510, reported_tokens=40))
    answer.refresh_from_db()
    assert (answer.tokens, answer.tokens_reported, answer.tokens_per_second) == (40, True, 80.0)


def test_an_answer_is_claimed_once_unless_its_claim_is_stale(owner, two_model_arena):
    battle = battles.start_battle(two_model_arena, voter_of(owner), "hello")
    answer = BattleAnswer.objects.get(turn__battle=battle, side="a")
    assert battles.claim(answer.pk, 60)
    assert not battles.claim(answer.pk, 60)
    BattleAnswer.objects.filter(pk=answer.pk).update(
        started_at=timezone.now() - timezone.timedelta(seconds=120)
    )
    assert battles.claim(answer.pk, 60)  # the stream that claimed it died


def test_stop_before_streaming_settles_at_once(owner, two_model_arena):
    battle = battles.start_battle(two_model_arena, voter_of(owner), "hello")
    answer = BattleAnswer.objects.get(turn__battle=battle, side="a")
    battles.request_stop(answer)
    answer.refresh_from_db()
    assert answer.status == "stopped" and not battles.claim(answer.pk, 60)


def test_the_language_is_detected_after_the_commit_not_in_the_request(
    owner, two_model_arena, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        battle = battles.start_battle(two_model_arena, voter_of(owner), "Wie spät ist es bitte?")
    assert Battle.objects.get(pk=battle.pk).language == ""
    assert len(callbacks) == 1
    callbacks[0]()  # eager Celery: the task runs here
    assert Battle.objects.get(pk=battle.pk).language == "de"


def test_regenerate_asks_the_last_turn_again_and_keeps_the_earlier_answers(owner, two_model_arena):
    battle = battles.start_battle(two_model_arena, voter_of(owner), "hello")
    with pytest.raises(BattleRefused, match="Wait until both"):
        battles.regenerate(battle)
    settle_both(battle, text="First try.")
    turn = battles.regenerate(battle)
    assert turn.number == 1
    assert [(r["a"], r["b"], r["status_a"]) for r in turn.regenerated] == [
        ("First try.", "First try.", "done")
    ]
    answers = BattleAnswer.objects.filter(turn=turn)
    assert set(answers.values_list("status", "text", "tokens")) == {("pending", "", None)}
    battle.refresh_from_db()
    assert (battle.tokens_a, battle.tokens_b) == (0, 0)


def test_a_failed_side_can_be_regenerated_and_the_battle_then_voted(owner, two_model_arena):
    battle = battles.start_battle(two_model_arena, voter_of(owner), "hello")
    settle_both(battle, status="failed", text="")
    with pytest.raises(BattleRefused, match="no usable answer"):
        battles.cast_vote(battle, "tie")
    battles.regenerate(battle)
    settle_both(battle)
    assert battles.cast_vote(battle, "tie").vote == "tie"


def test_a_voted_battle_is_not_regenerated(owner, two_model_arena):
    battle = battles.start_battle(two_model_arena, voter_of(owner), "hello")
    settle_both(battle)
    battles.cast_vote(battle, "a_better")
    with pytest.raises(BattleRefused, match="has been voted"):
        battles.regenerate(battle)
    assert BattleAnswer.objects.filter(status="done").count() == 2
