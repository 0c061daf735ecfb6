"""The owner's pages: creating and editing an arena, entering systems, their weights;
403 for those who see the arena but do not own it, 404 for those who do not see it."""

import pytest
from django.urls import reverse

from arenas.models import Arena, ArenaSystem
from evalhub.models import System
from tests import factories
from tests.arenas.builders import arena, bot_system

pytestmark = pytest.mark.django_db


def form_data(**overrides):
    data = {
        "name": "Chat arena",
        "slug": "chat-arena",
        "description": "Which model chats better?",
        "visibility": "public",
        "voters": "signed_in",
        "max_turns": "3",
        "system_prompt": "Be brief.",
        "block_list": "bomb\n  Forbidden Topic \n\nBOMB\n",
        "exclude_flagged": "on",
        "pairing_rule": "uniform",
        "separation_level": "0.95",
    }
    return {**data, **overrides}


def test_a_signed_in_user_creates_an_arena_and_owns_it(client):
    owner = factories.user()
    client.force_login(owner)
    response = client.post(reverse("arenas:create"), form_data())
    arena_ = Arena.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("arenas:systems", args=["chat-arena"])
    assert (arena_.owner, arena_.max_turns, arena_.system_prompt) == (owner, 3, "Be brief.")
    # One phrase a line, blank lines and repeats (case ignored) dropped.
    assert arena_.block_list == ["bomb", "Forbidden Topic"]


def test_a_bad_form_is_shown_again_and_nothing_is_stored(client):
    client.force_login(factories.user())
    response = client.post(reverse("arenas:create"), form_data(max_turns="0", slug="Bad Slug"))
    assert response.status_code == 400
    assert set(response.context["form"].errors) == {"max_turns", "slug"}
    assert not Arena.objects.exists()


def test_a_taken_slug_is_a_field_error(client):
    arena(factories.user(), slug="chat-arena")
    client.force_login(factories.user())
    response = client.post(reverse("arenas:create"), form_data())
    assert response.status_code == 400
    assert "slug" in response.context["form"].errors
    assert Arena.objects.count() == 1


def test_visitors_are_sent_to_log_in_to_create(client):
    response = client.get(reverse("arenas:create"))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_owner_edits_but_the_slug_stays(client):
    owner = factories.user()
    made = arena(owner, slug="kept")
    client.force_login(owner)
    response = client.post(
        reverse("arenas:edit", args=["kept"]), form_data(slug="changed", name="Renamed")
    )
    made.refresh_from_db()
    assert response.status_code == 302
    assert (made.slug, made.name) == ("kept", "Renamed")


@pytest.mark.parametrize("name", ["arenas:edit", "arenas:systems"])
def test_others_get_403_on_a_public_arena_and_404_on_a_private_one(client, name):
    owner = factories.user()
    public = arena(owner, slug="open")
    private = arena(owner, slug="closed", visibility=Arena.Visibility.PRIVATE)
    client.force_login(factories.user())
    assert client.get(reverse(name, args=[public.slug])).status_code == 403
    assert client.get(reverse(name, args=[private.slug])).status_code == 404


def test_staff_manage_any_arena(client):
    made = arena(factories.user(), visibility=Arena.Visibility.PRIVATE)
    client.force_login(factories.user(staff=True))
    assert client.get(reverse("arenas:systems", args=[made.slug])).status_code == 200


def test_the_owner_enters_a_system_and_sets_its_weight(client):
    owner = factories.user()
    system = bot_system(owner, slug="my-bot")
    made = arena(owner)
    client.force_login(owner)
    response = client.post(
        reverse("arenas:systems", args=[made.slug]), {"system": "my-bot", "weight": "2"}
    )
    assert response.status_code == 302
    entry = ArenaSystem.objects.get(arena=made)
    assert (entry.system, entry.endpoint, entry.weight) == (system, system.endpoint, 2.0)
    client.post(reverse("arenas:entry-weight", args=[made.slug, "my-bot"]), {"weight": "0.5"})
    entry.refresh_from_db()
    assert entry.weight == 0.5


def test_a_weight_out_of_range_changes_nothing(client):
    owner = factories.user()
    made = arena(owner, systems=[bot_system(owner, slug="my-bot")])
    client.force_login(owner)
    client.post(reverse("arenas:entry-weight", args=[made.slug, "my-bot"]), {"weight": "101"})
    assert ArenaSystem.objects.get().weight == 1.0


def test_the_system_choice_offers_only_what_may_be_entered(client):
    owner, other = factories.user(), factories.user()
    bot_system(owner, slug="mine")
    bot_system(other, slug="theirs-shared", shared=True)
    bot_system(other, slug="theirs-closed")
    bot_system(other, slug="theirs-private", shared=True, visibility=System.Visibility.PRIVATE)
    factories.system(owner, slug="mine-no-endpoint")
    made = arena(owner)
    client.force_login(owner)
    response = client.get(reverse("arenas:systems", args=[made.slug]))
    offered = {s.slug for s in response.context["form"].fields["system"].queryset}
    assert offered == {"mine", "theirs-shared"}
    refused = client.post(
        reverse("arenas:systems", args=[made.slug]), {"system": "theirs-closed", "weight": "1"}
    )
    assert refused.status_code == 400 and not ArenaSystem.objects.exists()


def test_taking_a_system_out_keeps_nothing_but_its_battles(client):
    owner = factories.user()
    made = arena(owner, systems=[bot_system(owner, slug="my-bot")])
    client.force_login(owner)
    response = client.post(reverse("arenas:entry-remove", args=[made.slug, "my-bot"]))
    assert response.status_code == 302 and not ArenaSystem.objects.exists()


def test_the_arena_page_and_list_follow_visibility(client):
    owner = factories.user()
    public = arena(owner, slug="open", name="Open arena")
    arena(owner, slug="closed", visibility=Arena.Visibility.PRIVATE)
    listing = client.get(reverse("arenas:list"))
    assert [a.slug for a in listing.context["page"]] == ["open"]
    assert client.get(public.get_absolute_url()).status_code == 200
    assert client.get(reverse("arenas:detail", args=["closed"])).status_code == 404


def test_the_invitation_link_is_shown_to_the_owner_only(client):
    owner = factories.user()
    made = arena(owner, voters=Arena.Voters.LINK)
    client.force_login(factories.user())
    assert made.invitation_token not in client.get(made.get_absolute_url()).content.decode()
    client.force_login(owner)
    assert made.invitation_token in client.get(made.get_absolute_url()).content.decode()


def test_the_arena_page_shows_the_stored_leaderboard(client):
    from arenas.models import Leaderboard

    made = arena(factories.user(), slug="open")
    result = {
        "systems": [
            {
                "system": "one",
                "name": "One",
                "rating": 1095.4,
                "lower": 1050.2,
                "upper": 1130.0,
                "rank": 1,
                "battles": 4,
                "provisional": True,
            },
            {
                "system": "two",
                "name": "Two",
                "rating": 904.6,
                "lower": 870.0,
                "upper": 949.8,
                "rank": 2,
                "battles": 4,
                "provisional": True,
            },
        ],
        "win_rate": {"systems": ["one", "two"], "matrix": [[None, 0.75], [0.25, None]]},
        "pair_battles": {"systems": ["one", "two"], "matrix": [[0, 4], [4, 0]]},
        "battles": 4,
        "flagged_left_out": 1,
        "confidence": 0.95,
        "bootstrap_rounds": 200,
        "scale": "Elo-like",
        "warnings": [],
        "computed_at": "2026-11-27T10:00:00+00:00",
    }
    Leaderboard.objects.create(arena=made, result=result, battles=4)
    page = client.get(made.get_absolute_url()).content.decode()
    assert "1095" in page and "1050 – 1130" in page and "provisional" in page
    assert "75%" in page and "25%" in page and "1 flagged left out" in page


def test_the_battle_button_needs_two_live_systems(client):
    owner = factories.user()
    made = arena(owner, systems=[bot_system(owner)])
    client.force_login(owner)
    battle_url = reverse("arenas:battle-new", args=[made.slug])
    assert battle_url not in client.get(made.get_absolute_url()).content.decode()
    arena_system = bot_system(owner)
    ArenaSystem.objects.create(arena=made, system=arena_system, endpoint=arena_system.endpoint)
    assert battle_url in client.get(made.get_absolute_url()).content.decode()
