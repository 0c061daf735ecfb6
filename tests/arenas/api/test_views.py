"""The arenas' REST API: the leaderboard (stored, never computed in the request), the
import (lines refused with their numbers, nothing stored) and the export."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from arenas.models import Arena, Battle, Leaderboard
from tests import factories
from tests.arenas.builders import arena
from tests.arenas.clean_battles import jsonl, line

pytestmark = pytest.mark.django_db


def upload(*rows, name="battles.jsonl"):
    return SimpleUploadedFile(name, jsonl(*rows), content_type="application/x-ndjson")


def test_the_leaderboard_is_the_stored_one(client, django_assert_max_num_queries):
    made = arena(factories.user(), slug="open")
    result = {"systems": [{"system": "x", "rating": 1000.0}], "battles": 1}
    Leaderboard.objects.create(arena=made, result=result, battles=1)
    with django_assert_max_num_queries(3):
        response = client.get(reverse("api-arena-leaderboard", args=["open"]))
    assert response.status_code == 200
    assert response.json() == {**result, "pending": False}


def test_before_any_vote_the_leaderboard_is_empty_and_pending_says_when_one_is_coming(client):
    from django.utils import timezone

    made = arena(factories.user(), slug="open")
    body = client.get(reverse("api-arena-leaderboard", args=["open"])).json()
    assert body["systems"] == [] and body["battles"] == 0 and body["pending"] is False
    Arena.objects.filter(pk=made.pk).update(leaderboard_queued_at=timezone.now())
    assert client.get(reverse("api-arena-leaderboard", args=["open"])).json()["pending"] is True


def test_a_private_arenas_leaderboard_is_404_to_others(client):
    owner = factories.user()
    arena(owner, slug="closed", visibility=Arena.Visibility.PRIVATE)
    assert client.get(reverse("api-arena-leaderboard", args=["closed"])).status_code == 404
    client.force_login(owner)
    assert client.get(reverse("api-arena-leaderboard", args=["closed"])).status_code == 200


def test_the_owner_imports_battles(client):
    owner = factories.user()
    made = arena(owner, slug="mine")
    client.force_login(owner)
    response = client.post(
        reverse("api-arena-import", args=["mine"]),
        {"file": upload(line("q1"), line("q2", winner="model_b")), "create": "true"},
    )
    assert response.status_code == 201
    assert response.json()["created"] == 2
    assert sorted(response.json()["systems_created"]) == ["gpt-4-0613", "vicuna-13b"]
    assert made.battles.count() == 2


def test_import_errors_come_with_their_lines_and_nothing_is_stored(client):
    owner = factories.user()
    made = arena(owner, slug="mine")
    client.force_login(owner)
    response = client.post(
        reverse("api-arena-import", args=["mine"]),
        {
            "file": upload(line("q1"), "{oops", line("q1"), line("q3", winner="nobody")),
            "create": "true",
        },
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert [e["line"] for e in errors] == [2, 3, 4]
    assert "the same battle as line 1" in errors[1]["message"]
    assert '"winner" must be one of' in errors[2]["message"]
    assert not made.battles.exists() and not Battle.objects.exists()


def test_an_upload_over_the_limit_is_refused_before_reading(client, settings):
    settings.EVALHUB_MAX_UPLOAD_BYTES = 100
    owner = factories.user()
    arena(owner, slug="mine")
    client.force_login(owner)
    response = client.post(
        reverse("api-arena-import", args=["mine"]),
        {"file": upload(*[line(f"q{i}") for i in range(5)])},
    )
    assert (
        response.status_code == 400
        and "the limit is 100 bytes" in response.json()["errors"][0]["message"]
    )
    assert not Battle.objects.exists()


def test_only_the_owner_and_staff_import_and_export(client):
    owner = factories.user()
    arena(owner, slug="mine")
    client.force_login(factories.user())
    refused = client.post(reverse("api-arena-import", args=["mine"]), {"file": upload(line())})
    assert refused.status_code == 403
    assert client.get(reverse("api-arena-export", args=["mine"])).status_code == 403
    assert not Battle.objects.exists()


def test_the_export_streams_json_lines(client):
    owner = factories.user()
    arena(owner, slug="mine")
    client.force_login(owner)
    client.post(
        reverse("api-arena-import", args=["mine"]),
        {"file": upload(line("q1"), line("q2", winner="tie")), "create": "true"},
    )
    response = client.get(reverse("api-arena-export", args=["mine"]))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-ndjson")
    rows = [json.loads(text) for text in b"".join(response.streaming_content).decode().splitlines()]
    assert [(r["question_id"], r["winner"]) for r in rows] == [("q1", "model_a"), ("q2", "tie")]


# Variants: ?style_control=1 and ?category=<name> --------------------------------------------


def leaderboard_url(slug, **query):
    from urllib.parse import urlencode

    return reverse("api-arena-leaderboard", args=[slug]) + ("?" + urlencode(query) if query else "")


def test_the_style_controlled_leaderboard_is_the_stored_variant(client):
    from arenas.models import LeaderboardVariant

    made = arena(factories.user(), slug="open")
    Leaderboard.objects.create(arena=made, result={"systems": []}, battles=0)
    result = {"systems": [{"system": "x"}], "style_coefficients": [{"feature": "length"}]}
    LeaderboardVariant.objects.create(arena=made, key="style", result=result, battles=9)
    response = client.get(leaderboard_url("open", style_control="1"))
    assert response.status_code == 200
    assert response.json() == {**result, "pending": False}
    both = LeaderboardVariant.objects.create(
        arena=made, key="style,category:english", result={"systems": []}, battles=0
    )
    response = client.get(leaderboard_url("open", style_control="true", category="english"))
    assert response.status_code == 200 and response.json() == {**both.result, "pending": False}


def test_an_unknown_category_is_404_and_a_bad_switch_400(client):
    arena(factories.user(), slug="open")
    response = client.get(leaderboard_url("open", category="nonsense"))
    assert response.status_code == 404 and "nonsense" in response.json()["errors"][0]["message"]
    assert client.get(leaderboard_url("open", style_control="maybe")).status_code == 400
    assert client.get(leaderboard_url("open", category="Bad Name!")).status_code == 400


def test_a_category_not_computed_yet_is_202_and_queued(client):
    from arenas.models import ArenaCategory

    made = arena(factories.user(), slug="open")
    Leaderboard.objects.create(arena=made, result={"systems": []}, battles=0)
    ArenaCategory.objects.create(arena=made, name="maths", prompt_pattern="integral")
    response = client.get(leaderboard_url("open", category="maths"))
    assert response.status_code == 202
    body = response.json()
    assert body["pending"] is True and body["systems"] == [] and body["category"] == "maths"
    assert Arena.objects.get(pk=made.pk).leaderboard_queued_at is not None  # asked for
    from arenas.tasks import compute_leaderboard

    compute_leaderboard(made.pk)
    again = client.get(leaderboard_url("open", category="maths"))
    assert again.status_code == 200 and again.json()["battles"] == 0


def test_a_language_nobody_wrote_in_is_an_empty_leaderboard(client):
    made = arena(factories.user(), slug="open")
    Leaderboard.objects.create(arena=made, result={"systems": []}, battles=0)
    response = client.get(leaderboard_url("open", category="french"))
    assert response.status_code == 200
    assert response.json()["systems"] == [] and response.json()["pending"] is False
    assert not Arena.objects.get(pk=made.pk).leaderboard_queued_at
