"""What one voter may do (arenas/voter_limits.py): battle actions a minute, battles a day,
the same prompt again. Each refusal is checked as the page's script gets it (the one error
shape, 429 and Retry-After for the rate and the day), as the page without JavaScript gets
it, and in the database: nothing written."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from arenas import battles, voter_limits
from arenas.battles import Outcome
from arenas.models import Battle, BattleAnswer, BattleTurn
from arenas.voters import Voter
from evalhub.outages import ServiceUnavailable
from tests import factories
from tests.arenas.builders import arena, bot_system

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}


def voter_of(user):
    return Voter(user=user, platform="site", ref=f"user:{user.pk}")


@pytest.fixture
def owner():
    return factories.user()


@pytest.fixture
def made(owner):
    return arena(owner, systems=[bot_system(owner), bot_system(owner)])


def start(client, made, prompt="Why is the sky blue?", **headers):
    return client.post(
        reverse("arenas:battle-start", args=[made.slug]), {"prompt": prompt}, **headers
    )


def settle_both(battle, number=1):
    for answer in BattleAnswer.objects.filter(turn__battle=battle, turn__number=number):
        assert battles.claim(answer.pk, 60)
        battles.settle(answer.pk, Outcome("done", "An answer.", 100, 600, None))


def one_error(response) -> str:
    body = response.json()
    assert set(body) == {"errors", "error_count"} and body["error_count"] == 1
    return body["errors"][0]["message"]


# Battle actions a minute ------------------------------------------------------------------


def test_a_start_past_the_minutes_limit_is_refused_with_429_and_no_battle(
    client, owner, made, settings
):
    settings.EVALHUB_ARENA_ACTIONS_PER_MINUTE = 2
    client.force_login(owner)
    assert [start(client, made, **JSON).status_code for _ in range(2)] == [200, 200]
    refused = start(client, made, **JSON)
    assert refused.status_code == 429 and refused["Retry-After"] == "60"
    assert "at most 2 battle actions a minute" in one_error(refused)
    assert Battle.objects.count() == 2


def test_without_javascript_the_refusal_is_a_message_on_the_arenas_page(
    client, owner, made, settings
):
    settings.EVALHUB_ARENA_ACTIONS_PER_MINUTE = 1
    client.force_login(owner)
    assert start(client, made, **JSON).status_code == 200
    refused = start(client, made, follow=True)
    assert refused.redirect_chain[-1][0] == made.get_absolute_url()
    assert "You are going too fast" in refused.content.decode()
    assert Battle.objects.count() == 1


@pytest.fixture
def limited_battle(client, owner, made, settings):
    """A battle whose answers are in, its voter signed in, and their minute's actions used
    up: the next action is one too many."""
    battle = battles.start_battle(made, voter_of(owner), "Why is the sky blue?")
    settle_both(battle)
    client.force_login(owner)
    settings.EVALHUB_ARENA_ACTIONS_PER_MINUTE = 1  # the start above was the one
    return battle


def test_a_turn_past_the_limit_is_refused_and_no_turn_is_asked(client, made, limited_battle):
    url = reverse("arenas:turn", args=[made.slug, limited_battle.public_id])
    refused = client.post(url, {"prompt": "And at sunset?"}, **JSON)
    assert refused.status_code == 429 and "at most 1 battle action a minute" in one_error(refused)
    assert BattleTurn.objects.filter(battle=limited_battle).count() == 1
    assert Battle.objects.get().turns == 1


def test_a_regeneration_past_the_limit_is_refused_and_the_answers_stay(
    client, made, limited_battle
):
    url = reverse("arenas:regenerate", args=[made.slug, limited_battle.public_id])
    refused = client.post(url, **JSON)
    assert refused.status_code == 429
    turn = BattleTurn.objects.get(battle=limited_battle)
    assert turn.regenerated == []
    assert set(turn.answers.values_list("status", flat=True)) == {"done"}


def test_a_vote_past_the_limit_is_refused_and_not_stored(client, made, limited_battle):
    url = reverse("arenas:vote", args=[made.slug, limited_battle.public_id])
    refused = client.post(url, {"vote": "a_better"}, **JSON)
    assert refused.status_code == 429 and refused["Retry-After"] == "60"
    battle = Battle.objects.get()
    assert (battle.vote, battle.voted_at) == ("", None)


def test_the_limit_is_per_voter(client, owner, made, settings):
    settings.EVALHUB_ARENA_ACTIONS_PER_MINUTE = 1
    client.force_login(owner)
    assert start(client, made, **JSON).status_code == 200
    other = factories.user()
    client.force_login(other)
    assert start(client, made, **JSON).status_code == 200
    assert sorted(Battle.objects.values_list("voter_ref", flat=True)) == sorted(
        [f"user:{owner.pk}", f"user:{other.pk}"]
    )


def test_while_the_cache_is_down_a_visitor_is_refused_and_an_account_goes_on(
    redis_cache, owner, made
):
    redis_cache.stop()
    visitor = Voter(user=None, platform=Battle.Platform.LINK, ref="visitor:abc")
    with pytest.raises(ServiceUnavailable, match="paused for visitors"):
        battles.start_battle(made, visitor, "Hello there")
    assert Battle.objects.count() == 0
    battles.start_battle(made, voter_of(owner), "Hello there")
    assert Battle.objects.get().voter_ref == f"user:{owner.pk}"


# Battles a day --------------------------------------------------------------------------------


def test_past_the_days_cap_a_start_is_refused_until_midnight_utc(client, owner, made):
    made.battles_per_day = 2
    made.save()
    client.force_login(owner)
    assert [start(client, made, f"Question {n}", **JSON).status_code for n in (1, 2)] == [
        200,
        200,
    ]
    refused = start(client, made, "Question 3", **JSON)
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 86_400
    message = one_error(refused)
    assert "started 2 battles in this arena today" in message and "midnight UTC" in message
    assert Battle.objects.count() == 2


def test_yesterdays_battles_and_other_voters_do_not_count_towards_the_cap(owner, made):
    made.battles_per_day = 1
    made.save()
    first = battles.start_battle(made, voter_of(owner), "Question 1")
    Battle.objects.filter(pk=first.pk).update(started_at=timezone.now() - timedelta(days=1))
    battles.start_battle(made, voter_of(owner), "Question 2")
    battles.start_battle(made, voter_of(factories.user()), "Question 3")
    with pytest.raises(voter_limits.LimitReached, match="1 a day"):
        battles.start_battle(made, voter_of(owner), "Question 4")
    assert Battle.objects.count() == 3


# The same prompt again ----------------------------------------------------------------------


def test_the_digest_ignores_case_spacing_and_punctuation():
    digest = voter_limits.prompt_digest
    assert digest("Hello, world!") == digest("  hello   WORLD ") == digest("ｈｅｌｌｏ world")
    assert digest("Hello, world!") != digest("Hello, moon!")


def test_the_same_prompt_again_flags_the_repeat_not_the_first(owner, made):
    first = battles.start_battle(made, voter_of(owner), "Hello, world!")
    again = battles.start_battle(made, voter_of(owner), "hello   WORLD")
    first.refresh_from_db()
    again.refresh_from_db()
    assert first.flags == [] and again.flags == ["repeated_prompt"]
    assert (
        "battle number 2 with this first prompt within 24 hours"
        in (again.flag_notes["repeated_prompt"])
    )


def test_a_repeat_outside_the_window_or_by_another_voter_is_not_flagged(owner, made):
    first = battles.start_battle(made, voter_of(owner), "Hello, world!")
    Battle.objects.filter(pk=first.pk).update(started_at=timezone.now() - timedelta(hours=25))
    later = battles.start_battle(made, voter_of(owner), "Hello, world!")
    other = battles.start_battle(made, voter_of(factories.user()), "Hello, world!")
    assert Battle.objects.get(pk=later.pk).flags == []
    assert Battle.objects.get(pk=other.pk).flags == []


def test_past_the_repeats_allowed_the_prompt_is_refused(client, owner, made):
    made.max_prompt_repeats = 1
    made.save()
    client.force_login(owner)
    assert [start(client, made, "Same again", **JSON).status_code for _ in range(2)] == [
        200,
        200,
    ]
    refused = start(client, made, "same AGAIN!", **JSON)
    assert refused.status_code == 400
    assert refused.json()["errors"] == [
        {
            "field": "prompt",
            "message": "You have already sent this prompt 2 times in the last 24 hours, the "
            "most this arena allows: please write another one.",
        }
    ]
    assert Battle.objects.count() == 2
    assert start(client, made, "Something new", **JSON).status_code == 200
