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
        "provisional_battles": "300",
        "provisional_width": "40",
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


def test_the_owner_is_linked_to_the_judges_comparison_and_others_are_not(client):
    owner = factories.user()
    made = arena(owner)
    link = reverse("results:arena-versus", args=[made.slug])
    client.force_login(factories.user())
    assert link not in client.get(made.get_absolute_url()).content.decode()

    client.force_login(owner)

    assert link in client.get(made.get_absolute_url()).content.decode()


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


# Leaderboard categories and the provisional rule ----------------------------------------------


def category_data(**overrides):
    data = {
        "name": "maths",
        "language": "",
        "min_turns": "1",
        "max_turns": "20",
        "min_user_tokens": "0",
        "max_user_tokens": "1000000",
        "prompt_pattern": r"(?i)\bintegral",
    }
    return {**data, **overrides}


def test_the_owner_adds_a_category_and_the_leaderboard_is_asked_for(client):
    from arenas.models import ArenaCategory

    owner = factories.user()
    made = arena(owner, slug="mine")
    client.force_login(owner)
    response = client.post(reverse("arenas:categories", args=["mine"]), category_data())
    assert response.status_code == 302
    category = ArenaCategory.objects.get(arena=made)
    assert (category.name, category.prompt_pattern) == ("maths", r"(?i)\bintegral")
    assert Arena.objects.get(pk=made.pk).leaderboard_queued_at is not None
    page = client.get(reverse("arenas:categories", args=["mine"])).content.decode()
    assert "maths" in page


@pytest.mark.parametrize(
    ("overrides", "field_message"),
    [
        ({"prompt_pattern": "(a+)+"}, "Nested repetition"),
        ({"prompt_pattern": "["}, "Not a regular expression"),
        ({"name": "coding"}, "built-in category"),
        ({"min_turns": "3", "max_turns": "2"}, "At least the minimum"),
        ({"max_turns": "21"}, "20"),
    ],
)
def test_a_bad_category_is_refused_and_nothing_is_stored(client, overrides, field_message):
    from arenas.models import ArenaCategory

    owner = factories.user()
    arena(owner, slug="mine")
    client.force_login(owner)
    response = client.post(reverse("arenas:categories", args=["mine"]), category_data(**overrides))
    assert response.status_code == 400
    assert field_message in response.content.decode()
    assert not ArenaCategory.objects.exists()


def test_the_owner_removes_a_category(client):
    from arenas.models import ArenaCategory

    owner = factories.user()
    made = arena(owner, slug="mine")
    ArenaCategory.objects.create(arena=made, name="maths")
    client.force_login(owner)
    response = client.post(reverse("arenas:category-remove", args=["mine", "maths"]))
    assert response.status_code == 302 and not ArenaCategory.objects.exists()


def test_others_may_not_touch_the_categories(client):
    from arenas.models import ArenaCategory

    made = arena(factories.user(), slug="theirs")
    ArenaCategory.objects.create(arena=made, name="maths")
    client.force_login(factories.user())
    assert client.get(reverse("arenas:categories", args=["theirs"])).status_code == 403
    response = client.post(reverse("arenas:category-remove", args=["theirs", "maths"]))
    assert response.status_code == 403 and ArenaCategory.objects.count() == 1


def test_the_provisional_rule_is_the_owners_within_its_range(client):
    owner = factories.user()
    made = arena(owner, slug="chat-arena")
    client.force_login(owner)
    url = reverse("arenas:edit", args=["chat-arena"])
    response = client.post(url, form_data(provisional_battles="50", provisional_width="60"))
    assert response.status_code == 302
    made.refresh_from_db()
    assert (made.provisional_battles, made.provisional_width) == (50, 60.0)
    assert made.leaderboard_queued_at is not None
    response = client.post(url, form_data(provisional_width="0"))
    assert response.status_code == 400
    made.refresh_from_db()
    assert made.provisional_width == 60.0


def test_the_arena_page_shows_categories_with_rank_moves_and_provisional_apart(client):
    from arenas.models import Leaderboard, LeaderboardVariant

    made = arena(factories.user(), slug="open")

    def row(slug, rank, provisional=False):
        return {"system": slug, "name": slug.title(), "rating": 1000.0, "lower": 990.0,
                "upper": 1010.0, "rank": rank, "battles": 500, "provisional": provisional}  # fmt: skip

    base = {
        "win_rate": {"systems": [], "matrix": []},
        "pair_battles": {"systems": [], "matrix": []},
        "battles": 900, "flagged_left_out": 0, "confidence": 0.95, "bootstrap_rounds": 200,
        "scale": "Elo-like", "warnings": [], "computed_at": "2026-11-27T10:00:00+00:00",
    }  # fmt: skip
    overall = {
        **base,
        "systems": [row("one", 1), row("two", 2), row("newbie", 2, provisional=True)],
        "categories": [{"name": "coding", "battles": 40, "builtin": True}],
    }
    Leaderboard.objects.create(arena=made, result=overall, battles=900)
    coding = {**base, "systems": [row("two", 1), row("one", 2)], "battles": 40}
    LeaderboardVariant.objects.create(arena=made, key="category:coding", result=coding)
    styled = {
        **base,
        "systems": [row("one", 1), row("two", 1)],
        "style_coefficients": [
            {"feature": "length", "coefficient": 0.25, "lower": 0.2, "upper": 0.3}
        ],
    }
    LeaderboardVariant.objects.create(arena=made, key="style", result=styled)
    page = client.get(made.get_absolute_url()).content.decode()
    assert 'id="provisional-table"' in page and "Newbie" in page
    assert 'id="board-category-coding"' in page and "▲ 1" in page and "▼ 1" in page
    assert 'id="board-style"' in page and "length 0.250 (0.200 – 0.300)" in page
