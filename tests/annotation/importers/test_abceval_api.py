"""`POST /api/studies/abc-eval/`: staff import an ABC-Eval study; problems come back as
`{"errors": [...], "error_count": N}` with their file and line, and nothing is written."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.models import Judgment, Study
from evalhub.models import Conversation
from tests import factories

from . import abceval_files as f

pytestmark = pytest.mark.django_db

URL = "/api/studies/abc-eval/"


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        token = factories.api_token(user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return client


def form(**overrides) -> dict:
    rows = {
        "conversations": f.conversations(),
        "behaviours": f.behaviours(),
        "likert": f.likert(),
        "comparative": f.comparative(),
    }
    rows.update(overrides)
    data = {"name": "ABC small", "slug": "abc-small"}
    for name, content in rows.items():
        if content is not None:
            data[name] = SimpleUploadedFile(f"{name}.jsonl", f.jsonl(*content))
    return data


def test_staff_import_a_study(tmp_path):
    staff = factories.user("boss", staff=True)
    response = client_for(staff).post(URL, form(), format="multipart")
    assert response.status_code == 201
    body = response.json()
    assert body["study"] == "abc-small" and body["created"] is True
    assert (body["judgments_created"], body["dialogues_without_text"]) == (12, 1)
    assert body["campaigns"]["abc-small-comparative"] == {
        "kind": "comparative",
        "items_created": 1,
        "judgments_created": 1,
        "judgments_unchanged": 0,
    }
    assert Study.objects.get().owner == staff
    assert Judgment.objects.count() == 12
    again = client_for(staff).post(URL, form(), format="multipart").json()
    assert (again["created"], again["judgments_created"], again["judgments_unchanged"]) == (
        False,
        0,
        12,
    )
    assert Judgment.objects.count() == 12


def test_errors_have_the_json_shape_and_are_bounded():
    staff = factories.user("boss", staff=True)
    likert = [{**row, "score": 9} for row in f.likert() * 3]
    likert = [{**row, "worker": f"w{n}"} for n, row in enumerate(likert)]  # 12 bad lines
    behaviours = [{**row, "annotator": "has space"} for row in f.behaviours() * 4]  # 12 more
    response = client_for(staff).post(
        URL, form(likert=likert, behaviours=behaviours), format="multipart"
    )
    assert response.status_code == 400
    body = response.json()
    assert body["error_count"] == 24
    assert len(body["errors"]) == 20
    assert body["errors"][0] == {
        "file": "behaviours.jsonl",
        "line": 1,
        "message": "'annotator' must be an id without spaces of at most 119 characters.",
    }
    assert body["errors"][-1]["file"] == "likert.jsonl"
    assert body["errors"][-1]["line"] == 8
    assert not Study.objects.exists() and not Conversation.objects.exists()


def test_missing_fields_are_named():
    staff = factories.user("boss", staff=True)
    data = form(behaviours=None)
    data["slug"] = "no spaces allowed"
    response = client_for(staff).post(URL, data, format="multipart")
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"slug", "behaviours"}
    assert not Study.objects.exists()


def test_only_staff_import_studies():
    researcher = factories.user("researcher")
    assert client_for(researcher).post(URL, form(), format="multipart").status_code == 403
    assert client_for().post(URL, form(), format="multipart").status_code in (401, 403)
    assert not Study.objects.exists() and not Conversation.objects.exists()
