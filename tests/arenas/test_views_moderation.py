"""The owner's moderation: the flagged battles page (why each flag was raised, confirm or
clear), only for the arena's owner and staff, and the moderation settings on the form."""

import pytest
from django.urls import reverse

from arenas.models import Arena, Battle, BattleTurn
from tests import factories
from tests.arenas.builders import arena

pytestmark = pytest.mark.django_db


@pytest.fixture
def flagged():
    owner = factories.user()
    made = arena(owner, slug="mod")
    one, two = factories.system(owner, slug="one"), factories.system(owner, slug="two")
    battle = Battle.objects.create(
        arena=made,
        system_a=one,
        system_b=two,
        voter_platform="site",
        voter_ref="user:99",
        question_id="q1",
        flags=["fast_vote"],
        flag_notes={"fast_vote": "Voted 1.0 s after the first answer appeared."},
    )
    BattleTurn.objects.create(battle=battle, number=1, prompt="What rhymes with orange?")
    Battle.objects.create(
        arena=made, system_a=one, system_b=two, voter_platform="site", question_id="clean"
    )
    return owner, made, battle


def review(client, made, battle, code, decision):
    url = reverse("arenas:flag-review", args=[made.slug, battle.public_id, code])
    return client.post(url, {"decision": decision}, follow=True)


def test_the_owner_sees_each_flagged_battle_with_its_reason_and_prompt(client, flagged):
    owner, made, battle = flagged
    client.force_login(owner)
    response = client.get(reverse("arenas:flags", args=[made.slug]))
    page = response.content.decode()
    assert response.status_code == 200
    assert [row["battle"].pk for row in response.context["rows"]] == [battle.pk]
    assert "Voted 1.0 s after the first answer appeared." in page
    assert "What rhymes with orange?" in page and "user:99" in page
    assert "<code>repeated_prompt</code>" in page  # every code is explained


def test_others_may_not_see_the_flagged_battles(client, flagged):
    owner, made, battle = flagged
    url = reverse("arenas:flags", args=[made.slug])
    assert client.get(url).status_code == 302  # to the login page
    client.force_login(factories.user())
    assert client.get(url).status_code == 403
    response = review(client, made, battle, "fast_vote", "cleared")
    assert response.status_code == 403
    assert Battle.objects.get(pk=battle.pk).flags == ["fast_vote"]


def test_the_owner_clears_a_flag_and_the_battle_leaves_the_list(client, flagged):
    owner, made, battle = flagged
    client.force_login(owner)
    response = review(client, made, battle, "fast_vote", "cleared")
    assert "Cleared the flag fast_vote." in response.content.decode()
    assert response.context["rows"] == []
    battle.refresh_from_db()
    assert battle.flags == [] and battle.flag_reviews["fast_vote"]["decision"] == "cleared"


def test_the_owner_confirms_a_flag_and_it_stays(client, flagged):
    owner, made, battle = flagged
    client.force_login(owner)
    response = review(client, made, battle, "fast_vote", "confirmed")
    assert "(confirmed by" in response.content.decode()
    battle.refresh_from_db()
    assert battle.flags == ["fast_vote"]
    assert battle.flag_reviews["fast_vote"]["by"] == owner.username


def test_a_review_without_a_decision_is_refused_and_changes_nothing(client, flagged):
    owner, made, battle = flagged
    client.force_login(owner)
    response = review(client, made, battle, "fast_vote", "maybe")
    assert "Confirm the flag or clear it." in response.content.decode()
    battle.refresh_from_db()
    assert (battle.flags, battle.flag_reviews) == (["fast_vote"], {})


def test_the_form_sets_the_moderation_settings(client, flagged):
    owner, made, _ = flagged
    client.force_login(owner)
    form = client.get(reverse("arenas:edit", args=[made.slug])).content.decode()
    assert reverse("arenas:flags", args=[made.slug]) in form
    for name in ("exclude_flagged", "battles_per_day", "max_prompt_repeats", "fast_vote_fraction"):
        assert f'name="{name}"' in form
    data = {
        "name": made.name,
        "visibility": "public",
        "voters": "signed_in",
        "max_turns": "3",
        "battles_per_day": "50",
        "repeat_window_hours": "6",
        "max_prompt_repeats": "2",
        "fast_vote_fraction": "0.5",
    }  # exclude_flagged unticked: flagged battles count
    response = client.post(reverse("arenas:edit", args=[made.slug]), data)
    assert response.status_code == 302
    made.refresh_from_db()
    assert (made.exclude_flagged, made.battles_per_day, made.repeat_window_hours) == (
        False,
        50,
        6,
    )
    assert (made.max_prompt_repeats, made.fast_vote_fraction) == (2, 0.5)


@pytest.mark.parametrize(
    ("field", "value"),
    [("battles_per_day", "0"), ("repeat_window_hours", "721"), ("fast_vote_fraction", "1.5")],
)
def test_a_setting_out_of_its_range_is_refused_and_nothing_is_stored(client, flagged, field, value):
    owner, made, _ = flagged
    client.force_login(owner)
    data = {"name": "Renamed", "visibility": "public", "voters": "signed_in", "max_turns": "3"}
    response = client.post(reverse("arenas:edit", args=[made.slug]), {**data, field: value})
    assert response.status_code == 400 and set(response.context["form"].errors) == {field}
    assert Arena.objects.get(pk=made.pk).name == "Test arena"
