"""People's NULs refused where they enter (evalhub/nul_refusal.py): a NUL in the URL of any
request or in a page's posted form is a 400 before any view (in the API's error shape under
/api/ and to scripts asking for JSON), and a form's value decoded from text (JSON) holding
one is its field's error. These requests were 500s on PostgreSQL, which stores and looks up
no NUL; CI's second stage runs them there."""

import html
import importlib
import pkgutil

import pytest
from django import forms
from django.contrib import admin
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Campaign, Item
from evalhub.models import Submission
from evalhub.nul_refusal import RefusesNul
from tests import factories
from tests.annotation.builders import ab_campaign

APPS = ("evalhub", "endpoints", "annotation", "tournaments", "judging", "analysis", "portability")
MESSAGE = "holds a NUL character"


def page_of(response) -> str:
    return html.unescape(response.content.decode())


def error_of(response) -> dict:
    body = response.json()
    assert body["error_count"] == 1, body
    return body["errors"][0]


# The URL, pages and API alike ------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "/api/systems/par%00rot/",
        "/api/systems/par%00rot/submissions/",
        "/api/campaigns/a%00b/progress/",
        "/api/tournaments/a%00b/",
        "/api/judges/a%00b/",
        "/api/prompt-sets/a%00b/",
    ],
)
def test_a_nul_in_an_api_path_is_a_400_in_the_error_shape(client, path):
    factories.system(slug="parrot")
    response = client.get(path)
    assert response.status_code == 400
    error = error_of(response)
    assert error["line"] is None and error["message"].startswith("The address " + MESSAGE)


@pytest.mark.django_db
def test_a_nul_in_an_api_query_parameter_names_the_parameter(client):
    client.force_login(factories.user("researcher"))
    response = client.get("/api/systems/", {"search": "par\x00rot"})
    assert response.status_code == 400
    assert error_of(response) == {
        "field": "search",
        "message": "'search' holds a NUL character (\\0 or \\u0000), which cannot be stored; "
        "remove it and send it again.",
    }


@pytest.mark.django_db
def test_a_nul_in_a_page_query_is_a_400_page_that_says_why(client):
    response = client.get(reverse("system-list"), {"q": "a\x00b"})
    assert response.status_code == 400
    page = page_of(response)
    assert "'q' " + MESSAGE in page and "Request refused" in page
    assert response.has_header("Content-Security-Policy")


@pytest.mark.django_db
def test_a_nul_in_a_page_path_is_a_400_page(client):
    response = client.get("/leaderboards/dialogues/demo/len%00gth/")
    assert response.status_code == 400
    assert "The address " + MESSAGE in page_of(response)


@pytest.mark.django_db
def test_a_nul_in_an_admin_search_is_a_400(client):
    client.force_login(factories.user("boss", staff=True))
    response = client.get(reverse("admin:evalhub_system_changelist"), {"q": "a\x00"})
    assert response.status_code == 400


# A page's posted form --------------------------------------------------------------------


@pytest.mark.django_db
def test_a_nul_in_a_looked_up_form_value_is_refused_before_the_lookup(client):
    """A ModelChoiceField looks its slug up before any validator runs: the middleware
    refuses the post first."""
    owner = factories.user("owner")
    system = factories.system(owner, slug="my-bot")
    factories.prompt_set(2, slug="greetings")
    client.force_login(owner)
    payload = {
        "prompt_set": "greet\x00ings",
        "file": SimpleUploadedFile("r.txt", b"one\ntwo\n"),
    }
    with CaptureQueriesContext(connection) as queries:
        response = client.post(reverse("system-submit", args=[system.slug]), payload)
    assert not [q for q in queries.captured_queries if "evalhub_promptset" in q["sql"]]
    assert response.status_code == 400
    assert "'prompt_set' " + MESSAGE in page_of(response)
    assert not Submission.objects.exists()


@pytest.mark.django_db
def test_a_script_asking_for_json_gets_the_error_shape(client):
    owner = factories.user("owner")
    system = factories.system(owner, slug="my-bot")
    client.force_login(owner)
    response = client.post(
        reverse("system-edit", args=[system.slug]),
        {"name": "My\x00Bot"},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 400 and error_of(response)["field"] == "name"
    system.refresh_from_db()
    assert system.name != "My\x00Bot"


# The form base: values decoded from text ----------------------------------------------------


class Decoding(RefusesNul, forms.Form):
    document = forms.JSONField()
    note = forms.CharField(required=False)


def test_a_nul_decoded_from_json_text_is_its_fields_error():
    form = Decoding({"document": '{"turns": [{"text": "a\\u0000b"}]}'})
    assert not form.is_valid()
    assert form.errors["document"] == [
        "'turns.0.text' holds a NUL character (\\0 or \\u0000), which cannot be stored; "
        "remove it and send it again."
    ]
    assert "document" not in form.cleaned_data


def test_a_nul_decoded_in_a_key_is_refused_too():
    form = Decoding({"document": '{"a\\u0000": 1}'})
    assert not form.is_valid() and MESSAGE in form.errors["document"][0]


def test_a_form_without_nul_is_valid_as_before():
    form = Decoding({"document": '{"turns": ["\\\\u0000 written out"]}', "note": "fine"})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["document"] == {"turns": ["\\u0000 written out"]}


@pytest.mark.django_db
def test_the_admin_refuses_a_nul_in_an_items_json(client):
    client.force_login(factories.user("boss", staff=True))
    campaign = ab_campaign(2, status=Campaign.Status.DRAFT)
    item = Item.objects.filter(campaign=campaign).first()
    before = item.content
    response = client.post(
        reverse("admin:annotation_item_change", args=[item.pk]),
        {"content": '{"context": ["fix\\u0000ed"]}', "gold": "null"},
    )
    assert response.status_code == 200  # the form again, with the error
    assert "'context.0' " + MESSAGE in page_of(response)
    item.refresh_from_db()
    assert item.content == before


# Every form has the base ------------------------------------------------------------------


def project_form_classes() -> list[type]:
    for app in APPS:
        package = importlib.import_module(app)
        for module in pkgutil.walk_packages(package.__path__, f"{app}."):
            if ".migrations" in module.name or ".management" in module.name:
                continue
            importlib.import_module(module.name)
    found, stack = [], [forms.BaseForm]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.__module__.split(".")[0] in APPS:
            found.append(cls)
    return found


def test_every_form_of_the_project_has_the_form_base():
    classes = project_form_classes()
    assert len(classes) > 20  # the walk found the project's forms
    missing = [f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, RefusesNul)]
    assert sorted(missing) == []


def test_every_admin_form_of_the_project_has_the_form_base():
    """The project's admins (evalhub/admin_tools.py's bases); Django's and the libraries'
    (users, groups, tokens, lockouts) edit plain text fields, whose NULs the middleware
    refuses."""
    missing = []
    for model, model_admin in admin.site._registry.items():
        if type(model_admin).__module__.split(".")[0] not in APPS:
            continue
        admins = [model_admin, *(inline(model, admin.site) for inline in model_admin.inlines)]
        missing += [type(a).__name__ for a in admins if not issubclass(a.form, RefusesNul)]
    assert missing == []
