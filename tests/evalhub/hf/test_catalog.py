"""Prompt sets and submissions as Hugging Face datasets, downloaded from their pages, and
uploads in the Hugging Face layout through the submit page and the API."""

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from evalhub.models import PromptSet, Submission, System
from tests import factories
from tests.datasets_loading import download, front_matter, load_table, unzip

pytestmark = pytest.mark.django_db


def parquet(rows: list[dict]) -> bytes:
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), sink)
    return sink.getvalue()


def test_a_prompt_set_loads_with_datasets(client, tmp_path):
    prompt_set = factories.prompt_set(3, slug="greetings")
    url = reverse("promptset-dataset", args=["greetings"]) + "?license=cc0-1.0"
    files = unzip(download(client.get(url)), tmp_path)
    loaded = load_table(tmp_path, "prompts", tmp_path / "cache")
    assert loaded.column_names == ["id", "context", "references"]
    assert loaded[0] == {
        "id": "1",
        "context": ["hello number 1 ?"],
        "references": ["hi there number 1 ."],
    }
    assert loaded.num_rows == prompt_set.prompts.count()
    assert front_matter(files["README.md"])["license"] == "cc0-1.0"
    page = client.get(prompt_set.get_absolute_url()).content.decode()
    assert reverse("promptset-dataset", args=["greetings"]) in page


def test_a_submissions_responses_load_with_datasets(client, tmp_path):
    owner = factories.user()
    system = factories.system(owner, slug="chatty")
    submission = factories.submission(system, factories.prompt_set(2), ["yes", "no"])
    client.force_login(owner)
    url = reverse("submission-dataset", args=[submission.public_id])
    unzip(download(client.get(url)), tmp_path)
    loaded = load_table(tmp_path, "responses", tmp_path / "cache")
    assert loaded["response"] == ["yes", "no"] and set(loaded["system"]) == {"chatty"}
    assert loaded.column_names == ["id", "context", "references", "response", "system"]


def test_a_private_systems_responses_are_not_a_strangers(client):
    owner = factories.user()
    system = factories.system(owner, visibility=System.Visibility.PRIVATE)
    submission = factories.submission(system, factories.prompt_set(2), ["yes", "no"])
    client.force_login(factories.user())
    assert client.get(reverse("submission-dataset", args=[submission.public_id])).status_code == 404


def test_the_submit_page_takes_a_parquet_file_and_a_column_mapping(client):
    owner = factories.user()
    system = factories.system(owner)
    factories.prompt_set(2, slug="greetings")
    client.force_login(owner)
    data = parquet([{"qid": "1", "output": "hi"}, {"qid": "2", "output": "bye"}])
    response = client.post(
        reverse("system-submit", args=[system.slug]),
        {
            "prompt_set": "greetings",
            "file": SimpleUploadedFile("r.parquet", data),
            "columns": "id=qid, response=output",
        },
    )
    assert response.status_code == 302
    submission = Submission.objects.get(system=system)
    assert submission.format == "hf"
    assert sorted(submission.responses.values_list("text", flat=True)) == ["bye", "hi"]


def test_the_api_refuses_a_bad_mapping_on_its_field():
    owner = factories.user()
    system = factories.system(owner)
    factories.prompt_set(2, slug="greetings")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {factories.api_token(owner)}")
    response = api.post(
        f"/api/systems/{system.slug}/submissions/",
        {
            "prompt_set": "greetings",
            "file": SimpleUploadedFile("r.parquet", parquet([{"id": "1", "response": "a"}])),
            "columns": "answer=response",
        },
        format="multipart",
    )
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == "columns" and error["message"].startswith("'answer' is none of")
    assert not Submission.objects.exists()


def test_the_api_creates_a_prompt_set_from_parquet_with_row_numbered_errors():
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {factories.api_token(factories.user(staff=True))}")
    rows = [{"instruction": "Hi"}, {"instruction": ""}]
    response = api.post(
        "/api/prompt-sets/",
        {
            "slug": "hub-set",
            "name": "Hub set",
            "file": SimpleUploadedFile("train.parquet", parquet(rows)),
            "columns": "prompt=instruction",
        },
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"line": 2, "message": "'context' must be a list of one or more non-empty utterances."}
    ]
    assert not PromptSet.objects.filter(slug="hub-set").exists()
