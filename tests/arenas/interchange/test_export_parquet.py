"""An arena's voted battles as a Hugging Face dataset: Chatbot Arena's columns, loadable
with `datasets`, for the arena's owner and staff only."""

import json

import pytest
from django.urls import reverse

from arenas.interchange.export import export_lines
from arenas.interchange.writing import import_battles
from tests import factories
from tests.arenas.builders import arena
from tests.arenas.clean_battles import conversation, line, stream
from tests.datasets_loading import download, front_matter, load_table, unzip

pytestmark = pytest.mark.django_db


def imported_arena(owner):
    made = arena(owner, slug="mine")
    rows = [
        line("q1", category_tag={"math": True}, **conversation(("Hi", "Hello", "Hey"))),
        line("q2", "claude-2", "gpt-4-0613", winner="tie", anony=False),
    ]
    import_battles(made, stream(*rows), create=True)
    return made


def url(**params) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return reverse("api-arena-export-dataset", args=["mine"]) + (f"?{query}" if query else "")


def test_the_battles_load_with_datasets_in_chatbot_arenas_columns(client, tmp_path):
    owner = factories.user()
    made = imported_arena(owner)
    client.force_login(owner)
    files = unzip(download(client.get(url(license="cc-by-4.0"))), tmp_path)
    loaded = load_table(tmp_path, "battles", tmp_path / "cache")
    lines = [json.loads(text) for text in export_lines(made)]
    assert loaded.num_rows == len(lines) == 2
    first = loaded[0]
    assert (first["question_id"], first["winner"], first["judge"]) == (
        lines[0]["question_id"],
        lines[0]["winner"],
        lines[0]["judge"],
    )
    assert first["conversation_a"] == lines[0]["conversation_a"]
    assert json.loads(first["extra"]) == {"category_tag": {"math": True}}
    assert json.loads(first["evalhub"]) == lines[0]["evalhub"]
    assert loaded[1]["conversation_a"] is None and loaded[1]["anony"] is False
    card = front_matter(files["README.md"])
    assert card["license"] == "cc-by-4.0" and card["pretty_name"] == made.name
    features = card["dataset_info"][0]["features"]
    assert {
        "name": "conversation_a",
        "list": [{"name": "role", "dtype": "string"}, {"name": "content", "dtype": "string"}],
    } in features


def test_an_arena_without_votes_has_nothing_to_export(client):
    owner = factories.user()
    arena(owner, slug="mine")
    client.force_login(owner)
    response = client.get(url())
    assert response.status_code == 409
    assert response.json()["errors"][0]["message"].startswith("There is nothing to export yet")


def test_only_the_owner_and_staff_export_the_dataset(client):
    imported_arena(factories.user())
    client.force_login(factories.user())
    assert client.get(url()).status_code == 403
    client.force_login(factories.user(staff=True))
    assert client.get(url()).status_code == 200
