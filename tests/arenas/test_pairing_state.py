"""The arena's pairing state: each counted vote moves it, the leaderboard task rebuilds it,
the adaptive rule draws from it, and the stopping rule it carries is shown and can pause
the arena."""

import random
import uuid

import numpy as np
import pytest
from django.urls import reverse

from arenas import battles, pairing_state
from arenas.battles import BattleRefused
from arenas.models import Arena, ArenaSystem, Battle, PairingState
from arenas.tasks import compute_leaderboard
from arenas.voters import Voter
from evalstats import pairing
from tests import factories
from tests.arenas.builders import arena, bot_system

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _many_votes_a_minute(settings):
    # These tests cast dozens of votes as one voter in a moment; the per-voter rate is
    # tested in test_voter_limits.py.
    settings.EVALHUB_ARENA_ACTIONS_PER_MINUTE = 10_000


@pytest.fixture
def owner():
    return factories.user()


def voted(made, a, b, vote, flags=()):
    battle = Battle.objects.create(
        arena=made,
        system_a=a,
        system_b=b,
        question_id=uuid.uuid4().hex,
        voter_platform="site",
        flags=list(flags),
    )
    return battles.cast_vote(battle, vote)


def test_a_vote_moves_the_state_by_the_incremental_update(owner):
    one, two = bot_system(owner), bot_system(owner)
    made = arena(owner, systems=[one, two])
    voted(made, one, two, "a_better")
    voted(made, two, one, "tie")
    row = PairingState.objects.get(arena=made)
    assert row.systems == [one.pk, two.pk] and row.votes == 2
    # Twice the effective wins: one win and half a tie for `one`, half a tie for `two`.
    assert pairing_state.stored_wins(row).tolist() == [[0, 3], [1, 0]]
    expected = pairing.state_from_counts([[0, 1.5], [0.5, 0]])
    assert row.strengths == pytest.approx(expected.strengths, abs=1e-8)


def test_a_flagged_battle_is_left_out_of_the_state_when_the_arena_leaves_it_out(owner):
    one, two = bot_system(owner), bot_system(owner)
    made = arena(owner, systems=[one, two])
    voted(made, one, two, "a_better")
    voted(made, one, two, "a_better", flags=[Battle.FLAG_NAME_IN_ANSWER])
    assert PairingState.objects.get(arena=made).votes == 1


def test_the_leaderboard_task_rebuilds_the_state_the_votes_built(owner):
    systems = [bot_system(owner) for _ in range(3)]
    made = arena(owner, systems=systems)
    rng = random.Random(1)
    for _ in range(25):
        a, b = rng.sample(systems, 2)
        voted(made, a, b, rng.choice(["a_better", "b_better", "tie", "both_bad"]))
    before = PairingState.objects.get(arena=made)
    compute_leaderboard(made.pk)
    after = PairingState.objects.get(arena=made)
    order = [before.systems.index(pk) for pk in after.systems]
    assert after.votes == before.votes == 25
    assert after.strengths == pytest.approx(np.array(before.strengths)[order], abs=1e-7)


def test_an_adaptive_arena_draws_from_the_state_and_the_battle_keeps_its_record(owner):
    systems = [bot_system(owner, slug=f"s{i}") for i in range(3)]
    made = arena(owner, systems=systems, pairing_rule=Arena.Pairing.ADAPTIVE)
    voted(made, systems[0], systems[1], "a_better")
    voter = Voter(user=owner, platform="site", ref=f"user:{owner.pk}")
    battle = battles.start_battle(made, voter, "hello", rng=random.Random(3))
    record = Battle.objects.get(pk=battle.pk).pairing
    assert record["rule"] == "adaptive" and record["votes"] == 1
    assert 0 < record["probability"] <= 1 and record["score"] >= 0
    assert set(record["strengths"]) == {"s0", "s1", "s2"}
    assert record["level"] == 0.95


def test_an_adaptive_arena_never_draws_a_system_of_weight_zero(owner):
    systems = [bot_system(owner) for _ in range(3)]
    made = arena(owner, systems=systems, pairing_rule=Arena.Pairing.ADAPTIVE)
    ArenaSystem.objects.filter(arena=made, system=systems[2]).update(weight=0)
    voter = Voter(user=owner, platform="site", ref=f"user:{owner.pk}")
    rng = random.Random(5)
    drawn = {
        pk
        for _ in range(8)
        for pk in Battle.objects.filter(
            pk=battles.start_battle(made, voter, "hi", rng=rng).pk
        ).values_list("system_a_id", "system_b_id")[0]
    }
    assert drawn == {systems[0].pk, systems[1].pk}


def test_an_answered_ranking_pauses_an_arena_that_asks_for_it(owner):
    one, two = bot_system(owner), bot_system(owner)
    made = arena(owner, systems=[one, two], pause_when_answered=True)
    for _ in range(30):
        voted(made, one, two, "a_better")
    voted(made, one, two, "b_better")
    made.refresh_from_db()
    row = PairingState.objects.get(arena=made)
    assert row.answered and (row.separated_pairs, row.adjacent_pairs) == (1, 1)
    assert made.paused
    voter = Voter(user=owner, platform="site", ref=f"user:{owner.pk}")
    with pytest.raises(BattleRefused, match="paused"):
        battles.start_battle(made, voter, "hello")
    assert Battle.objects.filter(arena=made).count() == 31


def test_an_answered_ranking_leaves_an_arena_open_unless_it_asks(owner):
    one, two = bot_system(owner), bot_system(owner)
    made = arena(owner, systems=[one, two])
    for _ in range(30):
        voted(made, one, two, "a_better")
    voted(made, one, two, "b_better")
    made.refresh_from_db()
    assert PairingState.objects.get(arena=made).answered and not made.paused


def test_the_arena_page_shows_how_far_the_ranking_is_settled(client, owner):
    systems = [bot_system(owner) for _ in range(3)]
    made = arena(owner, systems=systems)
    voted(made, systems[0], systems[1], "a_better")
    response = client.get(made.get_absolute_url())
    assert response.status_code == 200
    assert b'id="stopping-open"' in response.content
    assert b"0 of 2 adjacent pairs separated at the 95% level after 1 vote" in response.content
    assert pairing_state.stopping_status(made)["answered"] is False


def test_the_owner_turns_on_adaptive_pairing_and_self_pausing(client, owner):
    made = arena(owner, slug="settings-arena")
    client.force_login(owner)
    response = client.post(
        reverse("arenas:edit", args=[made.slug]),
        {
            "name": made.name,
            "visibility": "public",
            "voters": "signed_in",
            "max_turns": "3",
            "pairing_rule": "adaptive",
            "separation_level": "0.99",
            "pause_when_answered": "on",
        },
    )
    assert response.status_code == 302
    made.refresh_from_db()
    assert (made.pairing_rule, made.separation_level, made.pause_when_answered) == (
        "adaptive",
        0.99,
        True,
    )


def test_a_level_out_of_range_is_refused_and_nothing_changes(client, owner):
    made = arena(owner, slug="level-arena")
    client.force_login(owner)
    response = client.post(
        reverse("arenas:edit", args=[made.slug]),
        {
            "name": made.name,
            "visibility": "public",
            "voters": "signed_in",
            "max_turns": "3",
            "pairing_rule": "adaptive",
            "separation_level": "1.5",
        },
    )
    assert response.status_code == 400
    assert "separation_level" in response.context["form"].errors
    made.refresh_from_db()
    assert (made.pairing_rule, made.separation_level) == ("uniform", 0.95)
