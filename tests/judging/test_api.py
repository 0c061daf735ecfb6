"""The judges API: judges, rubrics and their versions, runs (start, progress, pause,
resume, judgments); owners alone see and drive their judges."""

import pytest
from rest_framework.test import APIClient

from endpoints.models import BotEndpoint
from evalhub.models import System
from judging.models import AutomaticJudgment, Judge, JudgeRun, Rubric
from tests import factories
from tests.judging import builders, fake_judges

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    return APIClient()


SECRET = "sk-judge-secret-4242"
ENDPOINT = {
    "url": "https://llm.example.org/v1",
    "model_name": "qwen2.5-7b-instruct",
    "auth_token": SECRET,
    "temperature": 0.0,
    "max_concurrency": 4,
    "daily_budget": 300,
}


def register(api, **fields):
    body = {"slug": "my-judge", "name": "My judge", "endpoint": ENDPOINT, **fields}
    return api.post("/api/judges/", body, format="json")


def test_registering_a_judge_gives_it_its_own_endpoint_and_no_system(api):
    user = factories.user()
    api.force_authenticate(user)
    response = register(api)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["owner"], body["model_name"]) == (user.username, "qwen2.5-7b-instruct")
    assert body["endpoint"]["has_token"] is True and body["endpoint"]["protocol"] == "openai"
    endpoint = Judge.objects.get(slug="my-judge").endpoint
    assert (endpoint.system, endpoint.owner, endpoint.name) == (None, user, "My judge")
    assert (endpoint.auth_token, endpoint.daily_budget, endpoint.max_concurrency) == (
        SECRET,
        300,
        4,
    )
    assert not System.objects.exists()


def test_the_judges_api_key_is_in_no_response(api):
    user = factories.user()
    api.force_authenticate(user)
    responses = [register(api), api.get("/api/judges/"), api.get("/api/judges/my-judge/")]
    endpoint = Judge.objects.get().endpoint
    responses += [
        api.get(f"/api/endpoints/{endpoint.pk}/"),
        api.patch(f"/api/endpoints/{endpoint.pk}/", {"daily_budget": 20}, format="json"),
    ]
    for response in responses:
        assert response.status_code in (200, 201)
        assert SECRET not in response.content.decode()
        assert "auth_token" not in response.content.decode()


def test_a_judge_needs_the_model_name_of_its_endpoint(api):
    api.force_authenticate(factories.user())
    response = register(api, endpoint={k: v for k, v in ENDPOINT.items() if k != "model_name"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "endpoint.model_name"
    assert not Judge.objects.exists() and not BotEndpoint.objects.exists()


def test_a_judge_is_no_longer_registered_on_a_system(api):
    user = factories.user()
    system_endpoint = builders.endpoint(None, owner=user)
    api.force_authenticate(user)
    body = {"slug": "my-judge", "name": "My judge", "system": system_endpoint.system.slug}
    response = api.post("/api/judges/", body, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "endpoint"
    assert not Judge.objects.exists()


def test_a_judges_endpoint_counts_against_the_endpoint_quota(api, settings):
    settings.EVALHUB_QUOTA_ENDPOINTS = 1
    user = factories.user()
    builders.endpoint(None, owner=user)
    api.force_authenticate(user)
    response = register(api)
    assert response.status_code == 400
    assert "EVALHUB_QUOTA_ENDPOINTS=1" in response.json()["errors"][0]["message"]
    assert not Judge.objects.exists() and BotEndpoint.objects.count() == 1


def test_a_judge_never_appears_among_the_systems(api):
    api.force_authenticate(factories.user())
    register(api)
    listed = api.get("/api/systems/").json()
    assert "qwen2.5-7b-instruct" not in str(listed) and "My judge" not in str(listed)
    assert listed["count"] == 0


def test_judges_are_listed_to_their_owner_only(api):
    mine, theirs = builders.judge(None), builders.judge(None)
    api.force_authenticate(mine.owner)
    slugs = [j["slug"] for j in api.get("/api/judges/").json()["results"]]
    assert slugs == [mine.slug]
    assert api.get(f"/api/judges/{theirs.slug}/").status_code == 404
    api.force_authenticate(None)
    assert api.get("/api/judges/").status_code == 401


def test_a_rubric_is_created_and_its_name_gets_versions(api):
    user = factories.user()
    api.force_authenticate(user)
    body = {
        "task_kind": "comparative",
        "name": "short",
        "instructions": "$conversation_1\n$conversation_2\n$dimensions\n$answer_format",
    }
    first = api.post("/api/judge-rubrics/", body, format="json")
    second = api.post("/api/judge-rubrics/", body, format="json")
    assert (first.status_code, second.status_code) == (201, 201)
    assert [first.json()["version"], second.json()["version"]] == [1, 2]
    assert Rubric.objects.filter(name="short", owner=user).count() == 2


def test_a_rubric_missing_the_answer_format_is_refused(api):
    api.force_authenticate(factories.user())
    body = {"task_kind": "ab", "name": "x", "instructions": "$context $response_1 $response_2"}
    response = api.post("/api/judge-rubrics/", body, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {
            "field": "instructions",
            "message": "The rubric must show the judge $answer_format (what to judge and how "
            "to answer).",
        }
    ]


def test_revising_a_used_rubric_answers_the_new_version(api):
    user = factories.user()
    api.force_authenticate(user)
    text = "$context $response_1 $response_2 $answer_format"
    rubric = api.post(
        "/api/judge-rubrics/", {"task_kind": "ab", "name": "r", "instructions": text}, format="json"
    ).json()
    in_place = api.post(
        f"/api/judge-rubrics/{rubric['id']}/revise/", {"instructions": text + " v1"}, format="json"
    )
    assert in_place.status_code == 200 and in_place.json()["id"] == rubric["id"]
    judge = builders.judge(None, owner=user)
    JudgeRun.objects.create(judge=judge, rubric_id=rubric["id"], campaign=builders.ab(1))
    revised = api.post(
        f"/api/judge-rubrics/{rubric['id']}/revise/", {"instructions": text + " v2"}, format="json"
    )
    assert revised.status_code == 201 and revised.json()["version"] == 2
    assert Rubric.objects.get(pk=rubric["id"]).instructions == text + " v1"


def test_a_stranger_may_not_revise_a_rubric(api):
    api.force_authenticate(factories.user())
    rubric = builders.default_rubric("ab")
    response = api.post(
        f"/api/judge-rubrics/{rubric.pk}/revise/", {"instructions": "x"}, format="json"
    )
    assert response.status_code == 403
    assert Rubric.objects.filter(task_kind="ab").count() == 1


def test_a_run_is_started_judged_and_its_judgments_listed(
    api, fake, django_capture_on_commit_callbacks
):
    server = fake(fake_judges.answers("not json", {"better": "2"}, "nope"))
    judge = builders.judge(server)
    campaign = builders.ab(2, owner=judge.owner)
    api.force_authenticate(judge.owner)
    body = {
        "judge": judge.slug,
        "rubric": builders.default_rubric("ab").pk,
        "campaign": campaign.slug,
        "concurrency": 1,
        "max_attempts": 2,
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/judge-runs/", body, format="json")
    assert response.status_code == 201, response.json()
    run = JudgeRun.objects.get()
    assert response.json()["id"] == run.pk and response.json()["status"] == "queued"
    run.refresh_from_db()
    assert (run.status, run.items_done, run.items_failed) == ("done", 1, 1)
    progress = api.get(f"/api/judge-runs/{run.pk}/progress/").json()
    assert (progress["percent"], progress["requests_today"]) == (100, 4)
    listed = api.get(f"/api/judge-runs/{run.pk}/judgments/").json()["results"]
    assert [j["status"] for j in listed] == ["ok", "failed"]
    assert listed[0]["automatic"] is True and listed[1]["raw_text"] == "nope"
    failed = api.get(f"/api/judge-runs/{run.pk}/judgments/?status=failed").json()
    assert failed["count"] == 1


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"concurrency": 0}, "concurrency", "concurrency must be from 1 to 16."),
        ({"max_attempts": 6}, "max_attempts", "max_attempts must be from 1 to 5."),
        (
            {"rubric": "likert"},
            "rubric",
            "The rubric is for Likert ratings (dialogue or turn) tasks",
        ),
    ],
)
def test_a_run_with_a_wrong_setting_is_refused_naming_the_field(api, change, field, message):
    judge = builders.judge(None)
    campaign = builders.ab(1, owner=judge.owner)
    api.force_authenticate(judge.owner)
    body = {
        "judge": judge.slug,
        "rubric": builders.default_rubric("ab").pk,
        "campaign": campaign.slug,
    }
    body.update(change)
    if change.get("rubric") == "likert":
        body["rubric"] = builders.default_rubric("likert").pk
    response = api.post("/api/judge-runs/", body, format="json")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == field and error["message"].startswith(message)
    assert not JudgeRun.objects.exists()


def test_only_the_owner_of_the_judge_starts_runs_with_it(api):
    judge = builders.judge(None)
    other = factories.user()
    campaign = builders.ab(1, owner=other)
    api.force_authenticate(other)
    body = {
        "judge": judge.slug,
        "rubric": builders.default_rubric("ab").pk,
        "campaign": campaign.slug,
    }
    response = api.post("/api/judge-runs/", body, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "judge"
    assert not JudgeRun.objects.exists()


def test_pause_and_resume_through_the_api(api, django_capture_on_commit_callbacks):
    judge = builders.judge(None)
    run = JudgeRun.objects.create(
        judge=judge, rubric=builders.default_rubric("ab"), campaign=builders.ab(1), status="running"
    )
    api.force_authenticate(judge.owner)
    assert api.post(f"/api/judge-runs/{run.pk}/pause/").json()["status"] == "paused"
    with django_capture_on_commit_callbacks() as sent:
        resumed = api.post(f"/api/judge-runs/{run.pk}/resume/")
    assert resumed.json()["status"] == "queued" and len(sent) == 1
    again = api.post(f"/api/judge-runs/{run.pk}/resume/")
    assert again.status_code == 400 and "cannot be resumed" in again.json()["errors"][0]["message"]
    run.refresh_from_db()
    assert run.status == "queued"


def test_another_users_run_is_not_found(api):
    judge = builders.judge(None)
    run = JudgeRun.objects.create(
        judge=judge, rubric=builders.default_rubric("ab"), campaign=builders.ab(1)
    )
    AutomaticJudgment.objects.create(run=run, item=run.campaign.items.first(), status="ok")
    api.force_authenticate(factories.user())
    assert api.get(f"/api/judge-runs/{run.pk}/").status_code == 404
    assert api.get(f"/api/judge-runs/{run.pk}/judgments/").status_code == 404
    assert api.post(f"/api/judge-runs/{run.pk}/pause/").status_code == 404


def test_the_shipped_rubrics_are_listed_without_an_owner_as_the_schema_allows(api):
    from drf_spectacular.generators import SchemaGenerator

    api.force_authenticate(factories.user())
    rubrics = api.get("/api/judge-rubrics/").json()["results"]
    shipped = [r for r in rubrics if r["name"] == "default"]
    assert shipped and all(r["owner"] is None for r in shipped)
    schema = SchemaGenerator().get_schema(request=None, public=True)
    assert schema["components"]["schemas"]["Rubric"]["properties"]["owner"]["nullable"] is True


def test_a_judge_slug_with_a_nul_character_is_refused_naming_the_field(api):
    judge = builders.judge(None)
    campaign = builders.ab(1, owner=judge.owner)
    api.force_authenticate(judge.owner)
    body = {
        "judge": "my\x00judge",
        "rubric": builders.default_rubric("ab").pk,
        "campaign": campaign.slug,
    }
    response = api.post("/api/judge-runs/", body, format="json")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == "judge" and "holds a NUL character" in error["message"]
    assert not JudgeRun.objects.exists()


def test_a_rubric_past_the_quota_is_refused_by_the_api_and_the_page(settings, api, client):
    settings.EVALHUB_QUOTA_RUBRICS = 1
    user = factories.user()
    api.force_authenticate(user)
    body = {
        "task_kind": "comparative",
        "name": "short",
        "instructions": "$conversation_1\n$conversation_2\n$dimensions\n$answer_format",
    }
    assert api.post("/api/judge-rubrics/", body, format="json").status_code == 201
    refused = api.post("/api/judge-rubrics/", body, format="json")
    assert refused.status_code == 400
    assert "(EVALHUB_QUOTA_RUBRICS=1)" in refused.json()["errors"][0]["message"]
    client.force_login(user)
    page = client.post("/judges/rubrics/new/", body)
    assert page.status_code == 400
    assert "(EVALHUB_QUOTA_RUBRICS=1)" in page.content.decode()
    assert Rubric.objects.filter(owner=user).count() == 1
