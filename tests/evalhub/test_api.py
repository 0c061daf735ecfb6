"""The REST API: happy paths, validation errors as JSON with line numbers, schema and docs."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from evalhub import limits
from evalhub.models import ApiToken, PromptSet, Response, Submission, System
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return factories.user("owner")


@pytest.fixture
def api(owner):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {factories.api_token(owner)}")
    return client


def test_list_and_retrieve_prompt_sets():
    prompt_set = factories.prompt_set(2, slug="greetings")
    client = APIClient()
    listing = client.get("/api/prompt-sets/").json()
    assert [p["slug"] for p in listing["results"]] == ["greetings"]
    detail = client.get("/api/prompt-sets/greetings/").json()
    assert detail["prompt_count"] == 2
    assert detail["prompts"][0] == {
        "id": "1",
        "position": 0,
        "context": ["hello number 1 ?"],
        "references": ["hi there number 1 ."],
    }
    assert prompt_set.slug == detail["slug"]


def test_create_a_system_with_a_token(api, owner):
    response = api.post("/api/systems/", {"slug": "tok-bot", "name": "Tok"}, format="json")
    assert response.status_code == 201
    assert response.json()["owner"] == owner.username
    assert owner.systems.get().slug == "tok-bot"


def test_owner_and_baseline_flag_are_read_only(api, owner):
    other = factories.user("someone")
    response = api.post(
        "/api/systems/",
        {"slug": "x-bot", "name": "X", "owner": other.pk, "is_baseline": True},
        format="json",
    )
    system = owner.systems.get()
    assert response.status_code == 201 and not system.is_baseline


def test_submit_a_file_and_read_its_metrics(api, owner, django_capture_on_commit_callbacks):
    system = factories.system(owner)
    factories.prompt_set(2, slug="greetings")
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            f"/api/systems/{system.slug}/submissions/",
            {
                "prompt_set": "greetings",
                "file": SimpleUploadedFile(
                    "r.jsonl",
                    b'{"prompt": "1", "response": "a b a"}\n{"prompt": "2", "response": "b c"}\n',
                ),
            },
            format="multipart",
        )
    assert response.status_code == 201
    submission_id = response.json()["id"]
    detail = api.get(f"/api/submissions/{submission_id}/").json()
    assert detail["status"] == "scored"
    assert detail["metrics"]["distinct_1"] == pytest.approx(0.6)
    listing = api.get(f"/api/systems/{system.slug}/submissions/").json()
    assert [s["id"] for s in listing["results"]] == [submission_id]


def test_submission_errors_are_json_with_line_numbers(api, owner):
    system = factories.system(owner)
    factories.prompt_set(3, slug="greetings")
    response = api.post(
        f"/api/systems/{system.slug}/submissions/",
        {"prompt_set": "greetings", "file": SimpleUploadedFile("r.jsonl", b'{"prompt": "1"}\n')},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json() == {
        "errors": [
            {"line": 1, "message": "the response must be a string ('response')."},
            {"line": None, "message": "No response for 2 of 3 prompts: 2, 3."},
        ],
        "error_count": 2,
    }
    assert Submission.objects.count() == 0 and Response.objects.count() == 0


def test_empty_responses_are_accepted_with_warnings(api, owner):
    system = factories.system(owner)
    factories.prompt_set(3, slug="greetings")
    response = api.post(
        f"/api/systems/{system.slug}/submissions/",
        {"prompt_set": "greetings", "file": SimpleUploadedFile("r.txt", b"a\n\nc\n")},
        format="multipart",
    )
    assert response.status_code == 201
    assert response.json()["warnings"] == [
        {"line": 2, "message": "empty response (stored; counted as zero tokens)."}
    ]
    assert list(Response.objects.values_list("text", flat=True)) == ["a", "", "c"]


def test_submission_to_an_unknown_prompt_set(api, owner):
    system = factories.system(owner)
    response = api.post(
        f"/api/systems/{system.slug}/submissions/",
        {"prompt_set": "nope", "file": SimpleUploadedFile("r.txt", b"a\n")},
        format="multipart",
    )
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["prompt_set"]
    assert response.json()["error_count"] == 1


def test_staff_creates_a_prompt_set_by_upload():
    client = APIClient()
    client.force_authenticate(factories.user("boss", staff=True))
    data = b'{"id": "q1", "context": ["hi", "hello"], "references": ["hey"]}\n'
    response = client.post(
        "/api/prompt-sets/",
        {"slug": "multi", "name": "Multi", "file": SimpleUploadedFile("p.jsonl", data)},
        format="multipart",
    )
    assert response.status_code == 201
    prompt = PromptSet.objects.get(slug="multi").prompts.get()
    assert (prompt.external_id, prompt.context, prompt.references) == (
        "q1",
        ["hi", "hello"],
        ["hey"],
    )


def test_bad_prompt_file_is_refused_with_lines():
    client = APIClient()
    client.force_authenticate(factories.user("boss", staff=True))
    response = client.post(
        "/api/prompt-sets/",
        {"slug": "bad", "name": "Bad", "file": SimpleUploadedFile("p.jsonl", b'{"id": "1"}\n')},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["line"] == 1
    assert not PromptSet.objects.filter(slug="bad").exists()


def test_token_endpoint(owner):
    response = APIClient().post("/api/token/", {"username": "owner", "password": "pw-for-tests-1"})
    assert response.status_code == 200
    body = response.json()
    assert body["name"] == "API login" and body["token"].startswith("evh_")
    (made,) = ApiToken.objects.filter(user=owner)
    assert body["token"] not in (made.digest, made.token_key)  # only its digest is kept
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {body['token']}")
    assert client.get("/api/tokens/").json()["results"][0]["current"] is True


def test_schema_and_offline_docs(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    text = schema.content.decode()
    assert "/api/systems/{slug}/submissions/" in text
    docs = client.get("/api/docs/").content.decode()
    assert "swagger-ui" in docs
    assert "cdn" not in docs.lower()  # the sidecar serves Swagger UI from our static files


def test_the_api_docs_page_has_no_inline_style_the_policy_would_block(client):
    docs = client.get("/api/docs/").content.decode()

    assert "<style" not in docs and "css/swagger.css" in docs


def test_session_auth_needs_csrf(owner):
    client = APIClient(enforce_csrf_checks=True)
    client.login(username="owner", password="pw-for-tests-1")
    response = client.post("/api/systems/", {"slug": "c", "name": "C"}, format="json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["errors"][0]["message"]


def test_api_lists_search_filter_and_order():
    from rest_framework.test import APIClient

    from tests import factories

    factories.system(name="Zeta", slug="zeta", is_baseline=True)
    factories.system(name="Alpha", slug="alpha")
    client = APIClient()
    assert [r["slug"] for r in client.get("/api/systems/").json()["results"]] == ["alpha", "zeta"]
    rows = client.get("/api/systems/?ordering=-name").json()["results"]
    assert [r["slug"] for r in rows] == ["zeta", "alpha"]
    assert [r["slug"] for r in client.get("/api/systems/?search=zet").json()["results"]] == ["zeta"]
    rows = client.get("/api/systems/?is_baseline=true").json()["results"]
    assert [r["slug"] for r in rows] == ["zeta"]


# Issue 23, finding 11: JSON nested too deep is the caller's error, not a server error -----


def test_token_endpoint_answers_deeply_nested_json_with_a_400(owner):
    body = "[" * 3000 + "]" * 3000  # 6 KB: Python's json gives up with a RecursionError
    response = APIClient().post("/api/token/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "errors": [{"field": "non_field_errors", "message": "JSON nested too deeply."}],
        "error_count": 1,
    }
    assert not ApiToken.objects.exists()


def test_every_json_endpoint_answers_deeply_nested_json_with_a_400(api):
    body = "[" * 3000 + "]" * 3000
    response = api.post("/api/systems/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["message"] == "JSON nested too deeply."
    assert not System.objects.exists()


# Issue 23, finding 9: sizes ---------------------------------------------------------------


def test_a_description_over_its_limit_is_refused_and_nothing_is_stored(api):
    long = "x" * (limits.DESCRIPTION_CHARS + 1)
    response = api.post(
        "/api/systems/", {"slug": "big-bot", "name": "Big", "description": long}, format="json"
    )
    assert response.status_code == 400
    assert response.json() == {
        "errors": [
            {
                "field": "description",
                "message": f"Ensure this field has no more than {limits.DESCRIPTION_CHARS} "
                "characters.",
            }
        ],
        "error_count": 1,
    }
    assert not System.objects.exists()


def test_an_edit_cannot_grow_a_description_past_its_limit(api, owner):
    factories.system(owner, slug="own-bot", description="short")
    long = "x" * (limits.DESCRIPTION_CHARS + 1)
    response = api.patch("/api/systems/own-bot/", {"description": long}, format="json")
    assert response.status_code == 400
    assert System.objects.get(slug="own-bot").description == "short"


def test_a_json_body_over_the_limit_is_refused_with_a_413_before_it_is_parsed(api, settings):
    settings.EVALHUB_MAX_JSON_BODY_BYTES = 2048
    body = json.dumps({"slug": "big-bot", "name": "Big", "description": "x" * 3000})
    response = api.post("/api/systems/", body, content_type="application/json")
    assert response.status_code == 413
    assert response.json() == {
        "errors": [{"line": None, "message": "The JSON body is larger than 2,048 bytes."}],
        "error_count": 1,
    }
    assert not System.objects.exists()


def test_a_json_body_within_the_limit_is_read(api, settings):
    settings.EVALHUB_MAX_JSON_BODY_BYTES = 2048
    body = json.dumps({"slug": "small-bot", "name": "Small", "description": "x" * 1500})
    response = api.post("/api/systems/", body, content_type="application/json")
    assert response.status_code == 201
    assert System.objects.get().description == "x" * 1500
