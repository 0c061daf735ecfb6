"""The campaign API: list, create (from responses and from conversations), state changes,
progress, items and preview, judgments, exports and the worker quality table."""

import json

import pytest
from rest_framework.test import APIClient

from annotation.models import Campaign, Judgment
from tests import factories
from tests.annotation.builders import ab_campaign
from tests.annotation.test_manage import ab_setup, jsonl_file, talks  # noqa: F401
from tests.annotation.test_progress import NOW, judge, shown

pytestmark = pytest.mark.django_db


@pytest.fixture
def boss():
    return factories.user("boss", staff=True)


@pytest.fixture
def api(boss):
    client = APIClient()
    client.force_authenticate(boss)
    return client


def researcher_api(user=None):
    client = APIClient()
    client.force_authenticate(user or factories.user())
    return client


def ab_body(**fields) -> dict:
    body = {
        "task_kind": "ab",
        "title": "Greeting test",
        "slug": "greeting-test",
        "prompt_set": "greetings",
        "system": "new-bot",
        "baselines": ["baseline-1", "baseline-2"],
        "redundancy": 3,
        "batch_size": 2,
    }
    body.update(fields)
    return body


def test_staff_create_an_ab_campaign_from_a_prompt_set_and_systems(api, boss, ab_setup):  # noqa: F811
    response = api.post("/api/campaigns/", ab_body(), format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["campaign"]["slug"] == "greeting-test" and body["campaign"]["status"] == "draft"
    # baseline-1 repeats one response: that pair is judged automatically (a tie).
    assert (body["shown"], body["automatic"], body["batches"]) == (5, 1, 3)
    c = Campaign.objects.get()
    assert c.owner == boss and c.items.filter(role="task").count() == 6


def test_a_campaign_s_worker_language_is_chosen_through_the_api(api, ab_setup):  # noqa: F811
    body = ab_body(language="de", follow_browser=True)
    response = api.post("/api/campaigns/", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["campaign"]["language"] == "de"
    c = Campaign.objects.get()
    assert (c.language, c.follow_browser) == ("de", True)


def test_a_campaign_without_a_language_is_english(api, ab_setup):  # noqa: F811
    assert api.post("/api/campaigns/", ab_body(), format="json").status_code == 201
    c = Campaign.objects.get()
    assert (c.language, c.follow_browser) == ("en", False)


def test_staff_create_a_campaign_from_uploaded_conversations(api):
    data = {
        "task_kind": "spot_the_bot",
        "title": "Spot them",
        "slug": "spot-them",
        "conversations": jsonl_file("talks.jsonl", *talks()),
    }
    response = api.post("/api/campaigns/", data, format="multipart")
    assert response.status_code == 201, response.json()
    c = Campaign.objects.get(slug="spot-them")
    assert response.json()["shown"] == c.items.filter(role="task", batch__isnull=False).count() > 0


@pytest.mark.parametrize(
    "fields,field",
    [
        ({"redundancy": 0}, "redundancy"),
        ({"slug": "Mixed_Case"}, "slug"),
        ({"system": "no-such-bot"}, "system"),
        ({"task_config": {"unknown": 1}}, "task_config"),
        ({"language": "fr"}, "language"),
    ],
)
def test_a_bad_campaign_is_refused_per_field_and_nothing_stored(api, ab_setup, fields, field):  # noqa: F811
    response = api.post("/api/campaigns/", ab_body(**fields), format="json")
    assert response.status_code == 400
    assert field in {e.get("field") for e in response.json()["errors"]}, response.json()
    assert not Campaign.objects.exists()


def test_a_researcher_creates_a_campaign_and_owns_it(ab_setup):  # noqa: F811
    from django.contrib.auth.models import User

    response = researcher_api().post("/api/campaigns/", ab_body(), format="json")

    assert response.status_code == 201, response.json()
    campaign = Campaign.objects.get()
    assert campaign.owner == User.objects.get(is_staff=False) and campaign.status == "draft"


def test_anonymous_callers_may_not_create_campaigns(ab_setup):  # noqa: F811
    from rest_framework.test import APIClient

    response = APIClient().post("/api/campaigns/", ab_body(), format="json")

    assert response.status_code == 401
    assert not Campaign.objects.exists()


def test_the_list_has_progress_search_filter_and_ordering(api):
    a = ab_campaign(4, slug="alpha", title="Alpha", status="live", redundancy=1, batch_size=2)
    ab_campaign(2, slug="beta", title="Beta", status="draft")
    judge(shown(a)[0], "w1", at=NOW)
    rows = api.get("/api/campaigns/").json()["results"]
    assert {r["slug"]: r["judgments"] for r in rows} == {"alpha": 1, "beta": 0}
    assert [r["slug"] for r in api.get("/api/campaigns/?search=alp").json()["results"]] == ["alpha"]
    assert [r["slug"] for r in api.get("/api/campaigns/?status=draft").json()["results"]] == [
        "beta"
    ]
    ordered = api.get("/api/campaigns/?ordering=-n_judgments").json()["results"]
    assert [r["slug"] for r in ordered] == ["alpha", "beta"]


def test_researchers_see_only_their_own_campaigns():
    owner = factories.user()
    ab_campaign(2, slug="mine", owner=owner)
    ab_campaign(2, slug="theirs")
    rows = researcher_api(owner).get("/api/campaigns/").json()["results"]
    assert [r["slug"] for r in rows] == ["mine"]
    assert researcher_api(owner).get("/api/campaigns/theirs/").status_code == 404


def test_launch_pause_finish_through_the_api(api):
    c = ab_campaign(2, status="draft")
    assert api.post(f"/api/campaigns/{c.slug}/launch/").json()["status"] == "live"
    assert api.post(f"/api/campaigns/{c.slug}/pause/").json()["status"] == "paused"
    assert api.post(f"/api/campaigns/{c.slug}/finish/").json()["status"] == "finished"
    c.refresh_from_db()
    assert c.status == "finished" and c.finished_at is not None


def test_a_refused_transition_is_a_400_in_the_error_shape(api):
    c = ab_campaign(2, status="draft")
    response = api.post(f"/api/campaigns/{c.slug}/pause/")
    assert response.status_code == 400
    assert "cannot pause" in response.json()["errors"][0]["message"]
    c.refresh_from_db()
    assert c.status == "draft"


def test_only_staff_change_a_campaigns_state():
    owner = factories.user()
    c = ab_campaign(2, status="draft", owner=owner)
    assert researcher_api(owner).post(f"/api/campaigns/{c.slug}/launch/").status_code == 403
    c.refresh_from_db()
    assert c.status == "draft"


def test_progress_counts_judgments_and_items(api):
    c = ab_campaign(4, redundancy=1, batch_size=2, launched_at=NOW)
    for item in shown(c)[:2]:
        judge(item, "w1", at=NOW)
    body = api.get(f"/api/campaigns/{c.slug}/progress/").json()
    assert (body["items_done"], body["items_needed"], body["judgments"]) == (2, 4, 2)
    assert body["percent_done"] == 50.0 and body["batches"] == 2


def test_items_list_filter_and_preview_stores_nothing(api):
    c = ab_campaign(4, gold=1, batch_size=2)
    rows = api.get(f"/api/campaigns/{c.slug}/items/").json()["results"]
    assert [r["position"] for r in rows] == sorted(r["position"] for r in rows)
    gold = api.get(f"/api/campaigns/{c.slug}/items/?role=gold").json()["results"]
    assert gold and all(r["gold"]["choice"] == "a" for r in gold)
    position = gold[0]["position"]
    response = api.post(f"/api/campaigns/{c.slug}/items/{position}/preview/", {"choice": "tie"})
    assert response.status_code == 200, response.json()
    assert response.json()["payload"]["choice"] == "tie"
    assert response.json()["gold"]["correct"] is False
    assert not Judgment.objects.exists()


def test_a_bad_preview_answer_names_its_field(api):
    c = ab_campaign(2)
    position = shown(c)[0].position
    response = api.post(f"/api/campaigns/{c.slug}/items/{position}/preview/", {"choice": "zz"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "choice"


def test_judgments_are_paginated_and_filtered_by_campaign(api):
    a, b = ab_campaign(3, slug="a-one"), ab_campaign(3, slug="b-two")
    for item in shown(a):
        judge(item, "w1", at=NOW)
    judge(shown(b)[0], "w2", at=NOW)
    body = api.get("/api/judgments/?campaign=a-one").json()
    assert body["count"] == 3 and {r["campaign"] for r in body["results"]} == {"a-one"}
    assert api.get("/api/judgments/").json()["count"] == 4


def test_researchers_see_no_judgments_of_others_campaigns():
    c = ab_campaign(2)
    judge(shown(c)[0], "w1", at=NOW)
    assert researcher_api().get(f"/api/judgments/?campaign={c.slug}").json()["count"] == 0


def test_exports_stream_csv_and_jsonl(api):
    c = ab_campaign(2)
    judge(shown(c)[0], "w1", at=NOW)
    csv_response = api.get(f"/api/campaigns/{c.slug}/export/csv/")
    assert csv_response.status_code == 200 and csv_response.streaming
    lines = b"".join(csv_response.streaming_content).decode().splitlines()
    assert len(lines) == 2 and lines[0].startswith("campaign")
    jsonl = api.get(f"/api/campaigns/{c.slug}/export/jsonl/", HTTP_ACCEPT="application/x-ndjson")
    rows = [json.loads(line) for line in b"".join(jsonl.streaming_content).splitlines()]
    assert rows[0]["campaign"] == c.slug


def test_worker_quality_table(api):
    c = ab_campaign(2, redundancy=2)
    judge(shown(c)[0], "w1", at=NOW)
    judge(shown(c)[0], "w2", at=NOW)
    judge(shown(c)[1], "w2", at=NOW)
    rows = api.get(f"/api/campaigns/{c.slug}/workers/?sort=-judgments").json()["results"]
    assert [(r["external_id"], r["judgments"]) for r in rows] == [("w2", 2), ("w1", 1)]


def test_every_campaign_endpoint_is_in_the_schema(api):
    paths = api.get("/api/schema/?format=json").json()["paths"]
    for path in [
        "/api/campaigns/",
        "/api/campaigns/{slug}/progress/",
        "/api/campaigns/{slug}/launch/",
        "/api/campaigns/{slug}/items/",
        "/api/campaigns/{slug}/items/{position}/preview/",
        "/api/campaigns/{slug}/export/csv/",
        "/api/campaigns/{slug}/workers/",
        "/api/judgments/",
    ]:
        assert path in paths, path


def test_staff_create_a_chat_campaign_naming_systems_with_endpoints(api):
    from tests.annotation.chat_setup import bot_system
    from tests.endpoints.openai_fake import FakePool, counting

    with FakePool() as pool:
        server = pool.start(counting)
        systems = [bot_system(server, slug=s).slug for s in ("a-bot", "b-bot")]
    body = {
        "task_kind": "chat",
        "title": "Talks",
        "slug": "talks",
        "chat_systems": systems,
        "task_config": {"conversations_per_system": 2},
        "redundancy": 1,
        "batch_size": 2,
    }
    response = api.post("/api/campaigns/", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["batches"] == 2
    assert Campaign.objects.get(slug="talks").items.count() == 4
