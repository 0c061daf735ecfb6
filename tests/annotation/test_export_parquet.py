"""The campaign export as a Hugging Face dataset: judgments of every kind load with
`datasets`, carry what the JSONL export carries, and only for those who may download it."""

import json

import pytest
from django.urls import reverse

from annotation import export
from annotation.kinds import KIND_KEYS
from annotation.models import Campaign
from tests import datasets_loading, factories
from tests.datasets_loading import download, front_matter, load_table, unzip

pytestmark = pytest.mark.django_db
demo = datasets_loading.demo  # the module-scoped fixture

# The demo judges these kinds: simulated workers (ABC-Eval, Likert, comparative, the two
# rankings) and the simulated tournaments (Spot The Bot, A/B).
JUDGED_KINDS = [
    "abc_eval",
    "likert",
    "comparative",
    "ranking",
    "conversation_ranking",
    "spot_the_bot",
    "ab",
]


def judged(kind: str) -> Campaign:
    return next(c for c in Campaign.objects.filter(task_kind=kind) if c.judgments.exists())


def export_url(campaign, **params) -> str:
    url = reverse("annotation:manage-campaign-export-dataset", args=[campaign.slug])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


@pytest.mark.parametrize("kind", JUDGED_KINDS)
def test_every_kinds_judgments_load_with_datasets(client, demo, kind, tmp_path):
    campaign = judged(kind)
    client.force_login(factories.user(staff=True))
    files = unzip(download(client.get(export_url(campaign, license="cc-by-4.0"))), tmp_path)
    assert sorted(files) == ["README.md", "data/judgments.parquet"]
    loaded = load_table(tmp_path, "judgments", tmp_path / "cache")
    rows = list(export.export_rows(campaign, platform_ids=True))
    assert loaded.num_rows == len(rows) == campaign.judgments.count()
    assert loaded.column_names == list(rows[0])
    # Nested values come back as their JSON text; scalars as they were.
    first = loaded[0]
    for key, value in rows[0].items():
        got = first[key]
        assert (json.loads(got) if isinstance(value, dict | list) else got) == value


def small_campaign():
    from tests.annotation.test_export import judged_campaign

    return judged_campaign(3)


def test_the_card_has_the_licence_citation_schema_and_configs(client, tmp_path):
    campaign = small_campaign()
    client.force_login(factories.user(staff=True))
    citation = "@inproceedings{x, title={Y}}"
    response = client.get(export_url(campaign, license="cc-by-sa-4.0", citation=citation))
    assert response["Content-Disposition"] == (
        f'attachment; filename="{campaign.slug}-judgments.zip"'
    )
    files = unzip(download(response), tmp_path)
    card = front_matter(files["README.md"])
    assert card["license"] == "cc-by-sa-4.0" and card["pretty_name"] == campaign.title
    assert card["configs"] == [
        {
            "config_name": "judgments",
            "data_files": [{"split": "train", "path": "data/judgments.parquet"}],
            "default": True,
        }
    ]
    info = card["dataset_info"][0]
    assert info["splits"] == [{"name": "train", "num_examples": 3}]
    assert {"name": "choice", "dtype": "string"} in info["features"]
    text = files["README.md"].decode()
    assert citation in text and campaign.title in text and "| `choice` | string |" in text


def test_the_card_lets_datasets_find_the_table_by_its_config(client, tmp_path):
    import datasets

    campaign = small_campaign()
    client.force_login(factories.user(staff=True))
    unzip(download(client.get(export_url(campaign))), tmp_path)
    loaded = datasets.load_dataset(str(tmp_path), "judgments", cache_dir=str(tmp_path / "c"))
    assert loaded["train"].num_rows == 3


def test_the_owners_dataset_has_no_platform_ids(client, tmp_path):
    campaign = small_campaign()
    owner = factories.user()
    Campaign.objects.filter(pk=campaign.pk).update(owner=owner)
    client.force_login(owner)
    unzip(download(client.get(export_url(campaign))), tmp_path)
    columns = load_table(tmp_path, "judgments", tmp_path / "cache").column_names
    assert "role" in columns and "platform_worker_id" not in columns


def test_a_stranger_gets_403_and_an_anonymous_visitor_the_login_page(client):
    campaign = small_campaign()
    assert client.get(export_url(campaign)).status_code == 302
    client.force_login(factories.user())
    assert client.get(export_url(campaign)).status_code == 403


def test_an_unknown_licence_is_refused_with_the_field_named(client):
    campaign = small_campaign()
    client.force_login(factories.user(staff=True))
    response = client.get(export_url(campaign, license="wtfpl"))
    assert response.status_code == 400
    assert response.content.decode().startswith("license: 'wtfpl' is not one of")


def test_a_campaign_without_judgments_is_refused_with_409(client):
    from tests.annotation.builders import ab_campaign

    campaign = ab_campaign(2)
    client.force_login(factories.user(staff=True))
    response = client.get(export_url(campaign))
    assert response.status_code == 409
    assert response.content.decode() == "There is nothing to export yet: the tables have no rows."


def test_the_api_download_is_the_same_dataset(client, tmp_path):
    campaign = small_campaign()
    client.force_login(factories.user(staff=True))
    url = f"/api/campaigns/{campaign.slug}/export/dataset/?license=mit"
    files = unzip(download(client.get(url, HTTP_ACCEPT="application/zip")), tmp_path)
    assert front_matter(files["README.md"])["license"] == "mit"
    # The API's researchers and staff alike get no platform ids, as in its JSONL export.
    loaded = load_table(tmp_path, "judgments", tmp_path / "cache")
    assert loaded.num_rows == 3 and "platform_worker_id" not in loaded.column_names


def test_the_api_refuses_a_bad_licence_in_its_error_shape(client):
    campaign = small_campaign()
    client.force_login(factories.user(staff=True))
    response = client.get(f"/api/campaigns/{campaign.slug}/export/dataset/?license=x")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "license"


def test_the_api_hides_another_researchers_campaign(client):
    campaign = small_campaign()
    client.force_login(factories.user())
    response = client.get(f"/api/campaigns/{campaign.slug}/export/dataset/")
    assert response.status_code == 404


def test_a_chat_campaigns_judgments_load_with_datasets(client, tmp_path):
    from tests.annotation.chat_setup import bot_system, chat_campaign, items, start
    from tests.annotation.kinds.test_chat import chat_through, ratings, submit
    from tests.endpoints import openai_fake
    from tests.endpoints.openai_fake import FakePool

    with FakePool() as fakes:
        server = fakes.start(openai_fake.counting)
        campaign = chat_campaign([bot_system(server, slug=s) for s in ("a-bot", "b-bot")])
        assignment = start(client, campaign)
        first, second = items(assignment)
        for item, extra in ((first, {}), (second, ratings("left", "compare_"))):
            chat_through(client, assignment, item)
            assert submit(client, assignment, item, ratings("4") | extra).status_code == 302
    client.force_login(factories.user(staff=True))
    unzip(download(client.get(export_url(campaign))), tmp_path)
    loaded = load_table(tmp_path, "judgments", tmp_path / "cache")
    rows = list(export.export_rows(campaign, platform_ids=True))
    assert loaded.num_rows == len(rows) == 2 and loaded.column_names == list(rows[0])
    assert [json.loads(r) for r in loaded["ratings"]] == [row["ratings"] for row in rows]
    assert json.loads(loaded[1]["comparison"]) == rows[1]["comparison"]


def test_a_campaign_is_written_a_row_group_at_a_time(client, tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from evalhub.hf import parquet

    monkeypatch.setattr(parquet, "ROW_GROUP", 2)
    from tests.annotation.test_export import judged_campaign

    campaign = judged_campaign(5)
    client.force_login(factories.user(staff=True))
    unzip(download(client.get(export_url(campaign))), tmp_path)
    metadata = pq.ParquetFile(tmp_path / "data" / "judgments.parquet").metadata
    sizes = [metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)]
    assert sizes == [2, 2, 1]


def test_the_campaign_page_offers_the_download_with_its_licences(client):
    campaign = small_campaign()
    client.force_login(factories.user(staff=True))
    page = client.get(campaign.get_absolute_url()).content.decode()
    assert f'action="{export_url(campaign)}"' in page
    assert '<option value="cc-by-4.0">cc-by-4.0</option>' in page


def test_an_arena_crowds_votes_load_with_datasets_and_its_owner_gets_no_gold_answer(
    client, settings, monkeypatch, tmp_path
):
    from decimal import Decimal

    from annotation.models import Judgment
    from arenas.crowd import launch
    from tests.arenas.crowd_setup import GOLD, crowd_arena, prolific_fake, setup
    from tests.arenas.test_crowd_slots import arrive, fight
    from tests.endpoints import sse_fake

    with prolific_fake(settings, monkeypatch), sse_fake.StreamingPool() as pool:
        urls = [pool.start(sse_fake.words(*words)).base_url for words in (["Hi."], ["Yo."])]
        arena = crowd_arena(urls=urls)
        plan = setup(participants=1, battles_per_participant=3, budget=Decimal("5.00"))
        campaign = launch(arena, plan, factories.user("boss", staff=True), confirm=True).campaign
        arrive(client, campaign)
        for _ in range(3):
            fight(client, arena)
    judgments = Judgment.objects.filter(campaign=campaign)
    assert sorted(judgments.values_list("item__role", flat=True)) == ["gold", "task", "task"]

    client.force_login(arena.owner)
    files = unzip(download(client.get(export_url(campaign))), tmp_path)
    loaded = load_table(tmp_path, "judgments", tmp_path / "cache")
    assert loaded.num_rows == 3
    assert loaded.column_names == [
        "campaign",
        "item",
        "role",
        "worker",
        "batch",
        "battle",
        "vote",
        "gold_correct",
        "started_at_ms",
        "duration_ms",
    ]
    # Battle pages measure no duration: a column of nulls, which the card calls JSON text.
    assert loaded["duration_ms"] == [None] * 3
    assert "| `duration_ms` | JSON text |" in files["README.md"].decode()
    by_role = {row["role"]: row for row in loaded}
    assert by_role["gold"]["gold_correct"] is True and by_role["task"]["gold_correct"] is None
    assert {row["battle"] for row in loaded} == set(
        judgments.values_list("payload__battle", flat=True)
    )
    # The gold battles' prompts, answers and better side are nowhere in the owner's download.
    cells = [str(value) for row in loaded for value in row.values()]
    texts = {text for prompt, first, second, _ in GOLD for text in (prompt, first, second)}
    card = files["README.md"].decode()
    assert not [text for text in texts if text in card or any(text in c for c in cells)]
    assert not {"first", "second"} & set(cells)


def test_a_ranking_campaigns_ranks_and_rankings_load_with_datasets(client, tmp_path):
    from annotation.kinds.ranking import ranking_tiers
    from annotation.models import Assignment
    from tests.annotation.kinds.test_ranking import THREE, ranking_campaign, start

    campaign = ranking_campaign(THREE, {"allow_ties": True}, batch_size=2, redundancy=1)
    start(client, campaign)
    assignment = Assignment.objects.get(campaign=campaign)
    given = {}
    for item, ranks in zip(
        assignment.batch.items.order_by("order_in_batch"), ([2, 1, 3], [1, 1, 3]), strict=True
    ):
        url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
        answer = {f"rank_{n}": str(rank) for n, rank in enumerate(ranks, 1)}
        assert client.post(url, answer).status_code == 302
        given[item.position] = (ranks, item.content["meta"]["systems"])

    owner = factories.user()
    Campaign.objects.filter(pk=campaign.pk).update(owner=owner)
    client.force_login(owner)
    unzip(download(client.get(export_url(campaign))), tmp_path)
    loaded = load_table(tmp_path, "judgments", tmp_path / "cache")
    rows = list(export.export_rows(campaign))
    assert loaded.num_rows == len(rows) == 2 and loaded.column_names == list(rows[0])
    for row in loaded:
        ranks, systems = given[row["item"]]
        assert json.loads(row["ranks"]) == ranks
        assert json.loads(row["systems"]) == systems
        # The tie (1, 1, 3) is one tier of two systems.
        assert json.loads(row["ranking"]) == ranking_tiers(systems, ranks)
        assert row["prompt"] and row["role"] == "task"


# The test that exports each kind's judgments and loads them with `datasets`.
EXPORT_TESTS = {
    **dict.fromkeys(JUDGED_KINDS, test_every_kinds_judgments_load_with_datasets),
    "chat": test_a_chat_campaigns_judgments_load_with_datasets,
    "arena": test_an_arena_crowds_votes_load_with_datasets_and_its_owner_gets_no_gold_answer,
    "ranking": test_a_ranking_campaigns_ranks_and_rankings_load_with_datasets,
}


@pytest.mark.parametrize("kind", KIND_KEYS)
def test_every_registered_kind_has_a_parquet_export_test(kind):
    # A new kind in the registry fails here until a test above exports its judgments
    # (issue 28: every study loads with `datasets`).
    assert kind in EXPORT_TESTS, f"No Parquet export test for the {kind!r} task kind."


def test_the_export_tests_name_only_registered_kinds():
    assert set(EXPORT_TESTS) <= set(KIND_KEYS)
