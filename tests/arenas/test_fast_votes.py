"""Votes cast faster than the answers could be read (arenas/fast_votes.py): the reading
time at 238 words a minute (Brysbaert 2019), the arena's share of it, the floor."""

from datetime import timedelta

import pytest
from django.utils import timezone

from arenas import battles, fast_votes
from arenas.battles import Outcome
from arenas.models import Battle, BattleAnswer
from arenas.voters import Voter
from tests import factories
from tests.arenas.builders import arena, bot_system

LONG = " ".join(["word"] * 238)  # a minute's reading


def test_238_words_take_a_minute_to_read():
    assert fast_votes.reading_seconds([LONG]) == pytest.approx(60.0)
    assert fast_votes.reading_seconds([LONG, LONG]) == pytest.approx(120.0)


def test_text_without_spaces_is_counted_by_its_characters():
    # 600 characters of Chinese: 600 / 6 = 100 words, 100 / 238 minutes.
    assert fast_votes.reading_seconds(["字" * 600]) == pytest.approx(100 * 60 / 238)


def test_the_threshold_is_the_share_of_the_reading_time_with_a_floor():
    assert fast_votes.threshold_seconds(120.0, 0.25) == pytest.approx(30.0)
    assert fast_votes.threshold_seconds(1.0, 0.25) == fast_votes.FLOOR_SECONDS
    assert fast_votes.threshold_seconds(120.0, 0.0) == 0.0


@pytest.fixture
def answered(db):
    """A battle in an arena that flags fast votes, both answers a minute's reading each,
    their first tokens just now."""
    owner = factories.user()
    made = arena(owner, systems=[bot_system(owner), bot_system(owner)], fast_vote_fraction=0.25)
    battle = battles.start_battle(
        made, Voter(user=owner, platform="site", ref=f"user:{owner.pk}"), "Tell me a story."
    )
    for answer in BattleAnswer.objects.filter(turn__battle=battle):
        assert battles.claim(answer.pk, 60)
        battles.settle(answer.pk, Outcome("done", LONG, 0, 500, None))
    return battle


def test_a_vote_sooner_than_the_arenas_share_of_the_reading_time_is_flagged(answered):
    battles.cast_vote(answered, "a_better")
    battle = Battle.objects.get()
    assert battle.vote == "a_better" and battle.flags == ["fast_vote"]
    note = battle.flag_notes["fast_vote"]
    assert "reading both answers takes about 120 s" in note and "sooner than 30.0 s" in note


def test_a_vote_after_reading_is_not_flagged(answered):
    # The answers appeared 40 s ago: more than a quarter of the two minutes' reading.
    earlier = timezone.now() - timedelta(seconds=40)
    BattleAnswer.objects.filter(turn__battle=answered).update(started_at=earlier)
    battles.cast_vote(answered, "a_better")
    battle = Battle.objects.get()
    assert battle.vote == "a_better" and battle.flags == [] and battle.flag_notes == {}


def test_an_arena_with_the_check_off_never_flags_a_vote(answered):
    answered.arena.fast_vote_fraction = 0.0
    answered.arena.save()
    battles.cast_vote(answered, "tie")
    assert Battle.objects.get().flags == []


def test_the_voter_is_not_told_their_vote_was_flagged_as_fast(answered):
    from arenas.presenting import battle_view

    battles.cast_vote(answered, "a_better")
    battle = Battle.objects.select_related("arena", "system_a", "system_b").get()
    assert battle.flags == ["fast_vote"]
    assert battle_view(battle)["flags"] == []
