"""Admin: staff upload prompt sets; every catalog model has a searchable, filterable list
whose cost does not grow with its size."""

import pytest
from django.apps import apps
from django.contrib import admin
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evalhub import leases
from evalhub.models import (
    ApiToken,
    Conversation,
    Lease,
    Notice,
    NoticeKind,
    NoticePreference,
    Prompt,
    PromptSet,
    Response,
    Speaker,
    Submission,
    System,
    Turn,
)
from evalhub.notifications import notify, set_preferences
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


CATALOG = [
    PromptSet,
    Prompt,
    System,
    Submission,
    Response,
    Conversation,
    Speaker,
    Turn,
    Notice,
    NoticePreference,
    Lease,
    ApiToken,
]


def catalog(n: int, prefix: str):
    """`n` systems with a submission each, and `n` conversations between them; their owners
    have a notice and a notice choice each."""
    prompts = factories.prompt_set(3, slug=f"{prefix}-set")
    systems = [factories.system(factories.user(), slug=f"{prefix}-bot-{i}") for i in range(n)]
    for i, system in enumerate(systems):
        factories.submission(system, prompts)
        factories.conversation(f"{prefix}-c{i}", [system, None], ["hi", "hello", "bye"])
        notify(system.owner, NoticeKind.SUBMISSION_SCORED, f"{system.name} was scored.")
        set_preferences(system.owner, {NoticeKind.SUBMISSION_FAILED: (True, False)})
        leases.acquire(leases.key_for(f"{prefix}-work", i))
        factories.api_token(system.owner)


def test_every_catalog_model_has_an_admin():
    models = set(apps.get_app_config("evalhub").get_models())
    assert models == set(CATALOG)
    assert all(model in admin.site._registry for model in models)


@pytest.mark.parametrize("model", CATALOG, ids=lambda m: m.__name__)
def test_change_pages_answer(staff_client, model):
    catalog(2, "p")
    obj = model.objects.first()
    response = staff_client.get(f"/admin/evalhub/{model._meta.model_name}/{obj.pk}/change/")
    assert response.status_code == 200


@pytest.mark.parametrize("model", CATALOG, ids=lambda m: m.__name__)
def test_change_lists_cost_the_same_queries_with_more_rows(
    staff_client, model, django_assert_max_num_queries
):
    changelist = f"/admin/evalhub/{model._meta.model_name}/"
    catalog(1, "a")
    with CaptureQueriesContext(connection) as small:
        rows = staff_client.get(changelist).context["cl"].result_count
    catalog(6, "b")
    with django_assert_max_num_queries(len(small.captured_queries)):
        bigger = staff_client.get(changelist).context["cl"].result_count
    assert bigger > rows
