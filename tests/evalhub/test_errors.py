"""evalhub/errors.py: one exception for input a user got wrong, its problems and their shape,
shown the same way on pages and in the API."""

import importlib

import pytest
from django import forms
from django.contrib.messages import get_messages
from django.contrib.messages.storage.fallback import FallbackStorage
from django.contrib.sessions.backends.signed_cookies import SessionStore
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import RequestFactory
from django.urls import reverse
from django.utils.html import escape
from rest_framework.test import APIClient

from evalhub.errors import SHOWN_PROBLEMS, Problem, UserInputError, field_problems, show_on_page
from evalhub.models import Submission
from tests import factories

# Problem and UserInputError ------------------------------------------------------------------


def test_a_problem_on_a_line():
    problem = Problem(3, "empty response.")
    assert str(problem) == "line 3: empty response."
    assert problem.as_dict() == {"line": 3, "message": "empty response."}


def test_a_problem_on_a_field():
    problem = Problem(field="slug", message="taken.")
    assert str(problem) == "slug: taken."
    assert problem.as_dict() == {"field": "slug", "message": "taken."}


def test_a_problem_with_the_input_as_a_whole():
    problem = Problem(message="The file is empty.")
    assert str(problem) == "The file is empty."
    assert problem.as_dict() == {"line": None, "message": "The file is empty."}


def test_a_message_alone_is_one_problem():
    error = UserInputError("Choose at least one baseline.")
    assert str(error) == "Choose at least one baseline."
    assert error.as_dict() == {
        "errors": [{"line": None, "message": "Choose at least one baseline."}],
        "error_count": 1,
    }


def test_a_message_can_name_its_field_or_line():
    assert UserInputError("taken.", field="slug").as_dict()["errors"] == [
        {"field": "slug", "message": "taken."}
    ]
    assert UserInputError("not JSON.", line=7).as_dict()["errors"] == [
        {"line": 7, "message": "not JSON."}
    ]


def test_many_problems_are_counted_but_only_the_first_are_listed():
    error = UserInputError([Problem(n, "bad.") for n in range(1, SHOWN_PROBLEMS + 6)])
    body = error.as_dict()
    assert body["error_count"] == SHOWN_PROBLEMS + 5
    assert len(body["errors"]) == SHOWN_PROBLEMS
    assert body["errors"][0] == {"line": 1, "message": "bad."}
    assert str(error) == "line 1: bad.; line 2: bad.; line 3: bad."


def test_field_errors_become_problems():
    problems = field_problems({"slug": "taken.", "file": ["too big.", "not UTF-8."], "": "no."})
    assert problems == [
        Problem(field="slug", message="taken."),
        Problem(field="file", message="too big."),
        Problem(field="file", message="not UTF-8."),
        Problem(message="no."),
    ]
    assert UserInputError.from_fields({"slug": "taken."}).problems == problems[:1]


# Every error of user input is one -----------------------------------------------------------

USER_ERRORS = [
    "evalhub.importers.problems.InvalidUpload",
    "annotation.kinds.base.PayloadInvalid",
    "annotation.kinds.base.ConfigInvalid",
    "annotation.campaigns.SetupInvalid",
    "annotation.campaigns.TransitionRefused",
    "annotation.training.TrainingClosed",
    "tournaments.ab_experiment.ExperimentInvalid",
    "tournaments.plan.PlanInvalid",
    "tournaments.importers.reading.StudyInvalid",
    "tournaments.spot_the_bot_campaign.GenerationInvalid",
    "tournaments.collection.CollectionError",
    "tournaments.collection.NoSeedConversations",
    "analysis.reports.NothingToAnalyse",
    "analysis.inputs.judgments.NoCampaign",
]
# Callers catch these as ValueError; they stay ValueErrors.
VALUE_ERRORS = {
    "ConfigInvalid",
    "ExperimentInvalid",
    "PlanInvalid",
    "GenerationInvalid",
    "NothingToAnalyse",
    "NoCampaign",
}


def load(path):
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("path", USER_ERRORS)
def test_user_errors_share_the_base(path):
    cls = load(path)
    assert issubclass(cls, UserInputError)
    assert issubclass(cls, ValueError) is (cls.__name__ in VALUE_ERRORS)


def test_field_errors_of_a_form_keep_their_fields():
    payload = load("annotation.kinds.base.PayloadInvalid")({"rating": "Choose one.", "": "Late."})
    assert payload.errors == {"rating": "Choose one.", "": "Late."}
    assert payload.as_dict()["errors"] == [
        {"field": "rating", "message": "Choose one."},
        {"line": None, "message": "Late."},
    ]
    setup = load("annotation.campaigns.SetupInvalid")({"task_config": ["bad level."]})
    assert str(setup) == "bad level."
    assert setup.as_dict() == {
        "errors": [{"field": "task_config", "message": "bad level."}],
        "error_count": 1,
    }


# Pages --------------------------------------------------------------------------------------


class NameForm(forms.Form):
    name = forms.CharField(required=False)


def page_request():
    request = RequestFactory().post("/")
    request.session = SessionStore()
    request._messages = FallbackStorage(request)
    return request


def test_on_a_form_each_problem_sits_on_its_field():
    form = NameForm({"name": "x"})
    assert form.is_valid()
    error = UserInputError(
        [
            Problem(field="name", message="taken."),
            Problem(field="elsewhere", message="not a field of this form."),
            Problem(4, "empty response."),
        ]
    )
    show_on_page(page_request(), error, form)
    assert form.errors["name"] == ["taken."]
    assert form.non_field_errors() == ["not a field of this form.", "line 4: empty response."]


def test_without_a_form_each_problem_is_a_message():
    request = page_request()
    error = UserInputError([Problem(n, "bad.") for n in range(1, SHOWN_PROBLEMS + 3)])
    show_on_page(request, error)
    texts = [m.message for m in get_messages(request)]
    assert texts[:2] == ["line 1: bad.", "line 2: bad."]
    assert len(texts) == SHOWN_PROBLEMS + 1
    assert texts[-1] == "... and 2 more problems."


def test_a_text_is_one_problem_shown_about_its_subject():
    request = page_request()
    show_on_page(request, "nothing judged yet.", about="Spring cup")
    assert [(m.message, m.level_tag) for m in get_messages(request)] == [
        ("Spring cup: nothing judged yet.", "error")
    ]


def test_a_settings_error_is_a_user_input_error_with_its_fields():
    from evalhub.declared import DeclaredInvalid

    invalid = DeclaredInvalid({"replicates": "must be at least 1.", "": "not an object."})
    assert isinstance(invalid, UserInputError)
    assert invalid.as_dict() == {
        "errors": [
            {"field": "replicates", "message": "must be at least 1."},
            {"line": None, "message": "not an object."},
        ],
        "error_count": 2,
    }
    assert str(invalid) == "must be at least 1. not an object."


# Pages and API say the same ------------------------------------------------------------------


@pytest.mark.django_db
def test_an_upload_error_reads_the_same_on_the_page_and_in_the_api(client):
    owner = factories.user("owner")
    system = factories.system(owner)
    factories.prompt_set(3, slug="greetings")
    data = {"prompt_set": "greetings", "format": "jsonl"}
    body = b'{"prompt": "1", "response": "a"}\n{"prompt": "9", "response": "b"}\n'
    client.force_login(owner)
    page = client.post(
        reverse("system-submit", args=[system.slug]),
        {**data, "file": SimpleUploadedFile("r.jsonl", body)},
    )
    api = APIClient()
    api.force_authenticate(owner)
    answer = api.post(
        f"/api/systems/{system.slug}/submissions/",
        {**data, "file": SimpleUploadedFile("r.jsonl", body)},
        format="multipart",
    )
    assert page.status_code == answer.status_code == 400
    errors = answer.json()["errors"]
    assert errors[0] == {"line": 2, "message": "unknown prompt id '9'."}
    assert answer.json()["error_count"] == len(errors)
    for error in errors:
        shown = f"line {error['line']}: " if error["line"] else ""
        assert escape(shown + error["message"]) in page.content.decode()
    assert not Submission.objects.exists()


def test_the_problems_of_lines_are_listed_in_line_order():
    from evalhub.errors import FileProblem, Problem, UserInputError

    error = UserInputError(
        [
            Problem(None, "2 prompts unanswered"),
            Problem(7, "late"),
            Problem(2, "early"),
            Problem(field="slug", message="taken"),
        ]
    )
    # Lines in order, in the places lines held; the others stay where they were.
    assert error.messages() == [
        "2 prompts unanswered",
        "line 2: early",
        "line 7: late",
        "slug: taken",
    ]
    files = UserInputError(
        [
            FileProblem("b.jsonl", 3, "x"),
            FileProblem("a.jsonl", 9, "y"),
            FileProblem("b.jsonl", 1, "z"),
        ]
    )
    assert [str(p) for p in files.problems] == [
        "b.jsonl line 1: z",
        "b.jsonl line 3: x",
        "a.jsonl line 9: y",
    ]


@pytest.mark.django_db
def test_an_upload_with_problems_found_in_two_passes_lists_them_by_line(client):
    from django.urls import reverse

    from tests import factories

    owner = factories.user()
    system = factories.system(owner)
    factories.prompt_set(3, slug="three")
    client.force_login(owner)
    # jsonl: an unknown id on line 3 and a duplicate on line 2 are found in different passes
    lines = [
        '{"id": "1", "response": "a"}',
        '{"id": "1", "response": "b"}',
        '{"id": "99", "response": "c"}',
    ]
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("r.jsonl", "\n".join(lines).encode())
    response = client.post(
        reverse("system-submit", args=[system.slug]), {"prompt_set": "three", "file": upload}
    )
    page = response.content.decode()
    positions = [page.find(f"line {n}") for n in (2, 3) if f"line {n}" in page]
    assert positions == sorted(positions) and len(positions) == 2, page[-3000:]
