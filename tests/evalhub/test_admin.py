"""Admin: staff upload prompt sets; catalog models have searchable, filterable lists."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evalhub.models import PromptSet
from tests import factories

pytestmark = pytest.mark.django_db

UPLOAD = "/admin/evalhub/promptset/upload/"


@pytest.fixture
def staff_client(client):
    client.force_login(factories.user("boss", staff=True))
    return client


def test_upload_a_prompt_set(staff_client):
    response = staff_client.post(
        UPLOAD,
        {
            "slug": "new",
            "name": "New",
            "version": "2",
            "file": SimpleUploadedFile("p.txt", b"hi\nhow are you ?\n"),
        },
    )
    prompt_set = PromptSet.objects.get(slug="new")
    assert response.status_code == 302
    assert (prompt_set.version, prompt_set.prompts.count()) == ("2", 2)


def test_upload_errors_are_listed_and_nothing_is_stored(staff_client):
    response = staff_client.post(
        UPLOAD,
        {
            "slug": "new",
            "name": "New",
            "version": "1",
            "file": SimpleUploadedFile("p.txt", b"hi\n\n"),
        },
    )
    assert "line 2: empty prompt." in response.content.decode()
    assert not PromptSet.objects.exists()


def test_researchers_cannot_reach_the_upload(client):
    client.force_login(factories.user("researcher"))
    response = client.get(UPLOAD)
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


@pytest.mark.parametrize(
    "model", ["system", "promptset", "prompt", "submission", "response", "conversation", "turn"]
)
def test_changelists_with_search(staff_client, model):
    system = factories.system(None)
    factories.submission(system, factories.prompt_set(2))
    assert staff_client.get(f"/admin/evalhub/{model}/?q=a").status_code == 200


@pytest.mark.parametrize(
    ("model", "title"),
    [("promptset", "Upload a prompt set"), ("conversation", "Upload conversations")],
)
def test_change_lists_link_their_upload_page(staff_client, model, title):
    upload = f"/admin/evalhub/{model}/upload/"
    assert upload in staff_client.get(f"/admin/evalhub/{model}/").content.decode()
    assert f"<h1>{title}</h1>" in staff_client.get(upload).content.decode()
