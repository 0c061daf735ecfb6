"""The API's parsers (evalhub/api/parsers.py) refuse a request body holding a NUL anywhere,
nested JSON and keys included, naming where; PostgreSQL stores no NUL in text or jsonb, and
a JSONField's or a DictField's contents pass no field's check. Every API view uses them."""

import ast
import json
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from annotation.models import Campaign
from evalhub.models import ApiToken, System
from tests import factories
from tests.annotation.test_api_campaigns import ab_body
from tests.annotation.test_manage import ab_setup  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
REFUSED = (
    "holds a NUL character (\\0 or \\u0000), which cannot be stored; remove it and send it again."
)


@pytest.fixture
def api():
    client = APIClient()
    client.force_authenticate(factories.user("owner"))
    return client


@pytest.fixture
def staff_api():
    client = APIClient()
    client.force_authenticate(factories.user("boss", staff=True))
    return client


def test_a_nul_nested_in_a_json_body_is_refused_naming_where(api):
    body = {"name": "Bot", "slug": "bot", "metadata": {"turns": [{"text": "a\u0000b"}]}}
    response = api.post("/api/systems/", body, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "errors": [
            {"field": "metadata.turns.0.text", "message": f"'metadata.turns.0.text' {REFUSED}"}
        ],
        "error_count": 1,
    }
    assert not System.objects.exists()


def test_a_nul_in_a_json_key_is_refused(api):
    response = api.post(
        "/api/systems/", {"name": "Bot", "slug": "bot", "x\u0000": 1}, format="json"
    )
    assert response.status_code == 400 and REFUSED in response.json()["errors"][0]["message"]
    assert not System.objects.exists()


def test_a_body_that_is_one_string_with_a_nul_is_refused(api):
    response = api.post("/api/systems/", json.dumps("\u0000"), content_type="application/json")
    assert response.status_code == 400
    assert response.json()["errors"][0] == {
        "field": "non_field_errors",
        "message": f"The value {REFUSED}",
    }


@pytest.mark.parametrize("format", ["multipart", None])
def test_a_nul_in_a_form_body_is_refused(api, format):
    """Form-encoded and multipart bodies: every value of every field, not only the last."""
    data = {"name": ["Bot", "B\u0000t"], "slug": "bot"}
    response = (
        api.post("/api/systems/", data, format=format)
        if format
        else api.post(
            "/api/systems/",
            "name=Bot&name=B%00t&slug=bot",
            content_type="application/x-www-form-urlencoded",
        )
    )
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "name"
    assert not System.objects.exists()


def test_a_nul_in_a_task_config_sent_as_json_text_is_refused(staff_api, ab_setup):  # noqa: F811
    """A multipart form carries the config as JSON text: its "\\u0000" is no NUL to the
    parser, so the field checks what it decodes."""
    body = ab_body(task_config=json.dumps({"behaviour_task": "x\u0000"}))
    response = staff_api.post("/api/campaigns/", body, format="multipart")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == "task_config" and error["message"] == f"'behaviour_task' {REFUSED}"
    assert not Campaign.objects.exists()


def test_the_token_endpoint_refuses_a_nul_too():
    factories.user("owner")
    response = APIClient().post("/api/token/", {"username": "own\u0000er", "password": "x"})
    assert response.status_code == 400 and REFUSED in response.json()["errors"][0]["message"]
    assert not ApiToken.objects.exists()


def test_no_view_parses_with_drf_s_own_parsers():
    """Only evalhub/api/parsers.py imports DRF's parsers; every other module uses its own."""
    offenders = []
    for path in ROOT.glob("*/**/*.py"):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith((".venv/", "tests/")) or relative == "evalhub/api/parsers.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), relative)):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(n.startswith("rest_framework.parsers") for n in names):
                offenders.append(relative)
    assert offenders == []
