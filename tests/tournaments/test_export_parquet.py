"""A tournament as a Hugging Face dataset: its conversations (the catalog's layout, with
`messages`) and its judgments load with `datasets`; its owner and staff download it."""

import json

import pytest
from django.urls import reverse

from tests import factories
from tests.datasets_loading import download, front_matter, load_table, unzip
from tests.tournaments import test_export
from tournaments import exporters

pytestmark = pytest.mark.django_db
judged_tournament = test_export.judged_tournament  # the fixture


def url(tournament) -> str:
    return reverse("tournaments:export-dataset", args=[tournament.slug])


def test_conversations_and_judgments_load_with_datasets(client, judged_tournament, tmp_path):
    client.force_login(factories.user(staff=True))
    files = unzip(download(client.get(url(judged_tournament))), tmp_path)
    card = front_matter(files["README.md"])
    assert [c["config_name"] for c in card["configs"]] == ["conversations", "judgments"]
    conversations = load_table(tmp_path, "conversations", tmp_path / "cache")
    judgments = load_table(tmp_path, "judgments", tmp_path / "cache")
    ids = exporters.conversation_ids(judged_tournament)
    assert conversations.num_rows == len(ids)
    assert (
        judgments.num_rows == judged_tournament.campaign.judgments.filter(item__role="task").count()
    )
    first = next(row for row in conversations if row["id"] == "b-0")
    assert first["speakers"] == ["weedbot", "sprout"] and first["domain"] == "garden"
    assert first["messages"][:2] == [
        {"role": "assistant", "content": "b-0 line 0", "speaker": 0},
        {"role": "assistant", "content": "b-0 line 1", "speaker": 1},
    ]
    human = next(row for row in conversations if row["id"].startswith("h-"))
    assert {m["role"] for m in human["messages"]} == {"user"}
    row = judgments[0]
    assert row["conversation"] in set(conversations["id"])
    assert isinstance(json.loads(row["labels"]), list)


def test_another_researcher_is_refused(client, judged_tournament):
    judged_tournament.published = True
    judged_tournament.save()
    client.force_login(factories.user())
    assert client.get(url(judged_tournament)).status_code == 403


def test_the_page_offers_the_download_to_its_managers(client, judged_tournament):
    client.force_login(factories.user(staff=True))
    page = client.get(judged_tournament.get_absolute_url()).content.decode()
    assert url(judged_tournament) in page


def test_the_api_download_is_for_the_owner_and_staff(client, judged_tournament, tmp_path):
    api_url = f"/api/tournaments/{judged_tournament.slug}/dataset/"
    judged_tournament.published = True
    judged_tournament.save()
    client.force_login(factories.user())
    assert client.get(api_url).status_code == 403
    client.force_login(factories.user(staff=True))
    files = unzip(download(client.get(api_url, HTTP_ACCEPT="application/zip")), tmp_path)
    assert {"data/conversations.parquet", "data/judgments.parquet"} <= set(files)
