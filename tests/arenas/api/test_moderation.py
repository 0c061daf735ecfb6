"""The owner's moderation in the API: the settings (`exclude_flagged` among them), the
flagged battles, a flag's review; nobody else sees or changes them."""

import pytest
from django.urls import reverse

from arenas.models import Arena, Battle
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
        flags=["repeated_prompt"],
        flag_notes={"repeated_prompt": "The voter's battle number 2 with this first prompt."},
    )
    return owner, made, battle


def test_the_owner_reads_and_changes_the_moderation_settings(client, flagged):
    owner, made, _ = flagged
    client.force_login(owner)
    url = reverse("api-arena-moderation", args=[made.slug])
    assert client.get(url).json() == {
        "exclude_flagged": True,
        "block_list": [],
        "battles_per_day": 200,
        "repeat_window_hours": 24,
        "max_prompt_repeats": 0,
        "fast_vote_fraction": 0.0,  # the tests' arenas (tests/arenas/builders.py)
    }
    changed = client.patch(
        url, {"exclude_flagged": False, "block_list": ["spam"]}, content_type="application/json"
    )
    assert changed.status_code == 200 and changed.json()["exclude_flagged"] is False
    made.refresh_from_db()
    assert (made.exclude_flagged, made.block_list) == (False, ["spam"])


def test_a_setting_out_of_range_is_refused_in_the_error_shape_and_not_stored(client, flagged):
    owner, made, _ = flagged
    client.force_login(owner)
    response = client.patch(
        reverse("api-arena-moderation", args=[made.slug]),
        {"battles_per_day": 0, "exclude_flagged": False},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["battles_per_day"]
    made.refresh_from_db()
    assert (made.battles_per_day, made.exclude_flagged) == (200, True)


def test_the_owner_lists_flagged_battles_and_clears_one(client, flagged):
    owner, made, battle = flagged
    client.force_login(owner)
    listed = client.get(reverse("api-arena-flags", args=[made.slug])).json()
    assert listed["count"] == 1
    [row] = listed["results"]
    assert (row["battle"], row["voter_ref"], row["system_a"]) == (
        str(battle.public_id),
        "user:99",
        "one",
    )
    assert row["flags"] == [
        {
            "code": "repeated_prompt",
            "note": "The voter's battle number 2 with this first prompt.",
            "review": None,
        }
    ]
    url = reverse("api-arena-flag-review", args=[made.slug, battle.public_id])
    cleared = client.post(
        url, {"code": "repeated_prompt", "decision": "cleared"}, content_type="application/json"
    )
    assert cleared.status_code == 200 and cleared.json()["flags"] == []
    assert Battle.objects.get(pk=battle.pk).flags == []
    assert client.get(reverse("api-arena-flags", args=[made.slug])).json()["count"] == 0


def test_a_review_of_a_flag_the_battle_lacks_is_a_400(client, flagged):
    owner, made, battle = flagged
    client.force_login(owner)
    url = reverse("api-arena-flag-review", args=[made.slug, battle.public_id])
    response = client.post(
        url, {"code": "fast_vote", "decision": "cleared"}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "code"
    assert Battle.objects.get(pk=battle.pk).flags == ["repeated_prompt"]


def test_others_may_not_read_or_change_moderation(client, flagged):
    owner, made, battle = flagged
    client.force_login(factories.user())
    assert client.get(reverse("api-arena-moderation", args=[made.slug])).status_code == 403
    assert client.get(reverse("api-arena-flags", args=[made.slug])).status_code == 403
    url = reverse("api-arena-flag-review", args=[made.slug, battle.public_id])
    response = client.post(
        url, {"code": "repeated_prompt", "decision": "cleared"}, content_type="application/json"
    )
    assert response.status_code == 403
    Arena.objects.filter(pk=made.pk).update(visibility=Arena.Visibility.PRIVATE)
    assert client.get(reverse("api-arena-flags", args=[made.slug])).status_code == 404
    assert Battle.objects.get(pk=battle.pk).flags == ["repeated_prompt"]
