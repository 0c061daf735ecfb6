"""Registering a system and submitting its responses through the web form."""

import importlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import clear_url_caches, reverse

from evalhub.models import Response, Submission, System
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner_client(client):
    owner = factories.user("owner")
    client.force_login(owner)
    client.owner = owner
    return client


def upload(client, system, data: bytes, name="r.txt", **fields):
    prompt_set = fields.pop("prompt_set")
    follow = fields.pop("follow", False)
    payload = {"prompt_set": prompt_set.slug, "file": SimpleUploadedFile(name, data), **fields}
    return client.post(reverse("system-submit", args=[system.slug]), payload, follow=follow)


def test_register_a_system(owner_client):
    response = owner_client.post(
        reverse("system-create"),
        {"name": "My Bot", "slug": "my-bot", "visibility": "public", "description": "x"},
    )
    system = System.objects.get(slug="my-bot")
    assert response.status_code == 302
    assert response["Location"] == reverse("system-submit", args=["my-bot"])
    assert system.owner == owner_client.owner


def test_register_requires_login(client):
    response = client.post(reverse("system-create"), {"name": "x", "slug": "x"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert System.objects.count() == 0


def test_good_upload_redirects_to_the_profile_with_metrics(
    owner_client, django_capture_on_commit_callbacks
):
    system = factories.system(owner_client.owner)
    prompts = factories.prompt_set(2)
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(owner_client, system, b"a b a\nb c\n", prompt_set=prompts)
    submission = Submission.objects.get()
    assert response.status_code == 302
    assert response["Location"] == submission.get_absolute_url()
    page = owner_client.get(response["Location"])
    assert submission.status == "scored"
    assert b"0.6000" in page.content  # distinct-1 = 3/5, shown on the profile


def test_the_profile_shows_chatevals_definitions_beside_evalhubs(
    owner_client, django_capture_on_commit_callbacks
):
    system = factories.system(owner_client.owner)
    prompts = factories.prompt_set(3)
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(owner_client, system, b"a b\n\nb c\n", prompt_set=prompts)
    submission = Submission.objects.get()
    page = owner_client.get(response["Location"]).content.decode()
    # EvalHub: 4 tokens, 3 types; ChatEval: "a b  b c" is 5 tokens (one empty), 4 types.
    assert submission.metrics["distinct_1"] == pytest.approx(0.75)
    assert submission.metrics["chateval_distinct_1"] == pytest.approx(0.8)
    assert "As ChatEval computed" in page and "EvalHub's definition" in page
    assert "0.7500" in page and "0.8000" in page


def test_empty_responses_are_stored_and_the_profile_says_how_many(
    owner_client, django_capture_on_commit_callbacks
):
    system = factories.system(owner_client.owner)
    prompts = factories.prompt_set(3)
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(owner_client, system, b"\na b\n \n", prompt_set=prompts, follow=True)
    submission = Submission.objects.get()
    page = response.content.decode()
    assert response.status_code == 200
    assert "2 empty responses (lines 1, 3): stored, and counted as zero tokens" in page
    assert "2 empty responses (lines 1, 3)</small>" in page
    assert submission.metrics["n_empty"] == 2
    assert list(submission.responses.values_list("text", flat=True)) == ["", "a b", ""]


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [
        (
            b"only one line\n",
            "r.txt",
            "Expected 2 lines, one response per prompt in order; the file has 1.",
        ),
        (b'{"prompt": "1"}\n', "r.jsonl", "line 1: the response must be a string"),
        (
            b'{"prompt": "7", "response": "a"}\n',
            "r.jsonl",
            "line 1: unknown prompt id &#x27;7&#x27;.",
        ),
        (
            b'{"prompt": "1", "response": "a"}\n{"prompt": "1", "response": "b"}\n',
            "r.jsonl",
            "line 2: duplicate prompt id &#x27;1&#x27; (already answered on line 1).",
        ),
        (b"a\n\xc3\x28\n", "r.txt", "line 2: the file is not UTF-8"),
        (
            b"prompt;response\n1;a\n",
            "r.csv",
            "line 1: the header must name the columns prompt,response",
        ),
        (b"not json\n", "r.jsonl", "The file is not in the JSON lines format."),
    ],
)
def test_bad_upload_shows_the_problem_and_stores_nothing(owner_client, data, name, message):
    system = factories.system(owner_client.owner)
    prompts = factories.prompt_set(2)
    response = upload(owner_client, system, data, name=name, prompt_set=prompts)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert b"The file was not stored" in response.content
    assert Submission.objects.count() == 0 and Response.objects.count() == 0


def test_file_over_the_limit(owner_client, settings):
    system = factories.system(owner_client.owner)
    prompts = factories.prompt_set(2)
    settings.EVALHUB_MAX_UPLOAD_BYTES = 10
    response = upload(owner_client, system, b"aaaaaaaaa\nbbbbbbbbb\n", prompt_set=prompts)
    assert response.status_code == 400
    assert "The file is 20 bytes; the limit is 10 bytes." in response.content.decode()
    assert Submission.objects.count() == 0


def test_only_twenty_problems_are_listed_with_the_total(owner_client):
    system = factories.system(owner_client.owner)
    prompts = factories.prompt_set(25)
    data = "".join(f'{{"prompt": "{i + 1}", "response": 5}}\n' for i in range(24))
    data += '{"prompt": "25", "response": "x"}\n'
    response = upload(owner_client, system, data.encode(), name="r.jsonl", prompt_set=prompts)
    content = response.content.decode()
    assert "24 problems found" in content and "The first 20 are listed." in content
    assert content.count("<li>line ") == 20
    assert Submission.objects.count() == 0


def test_baseline_choice_is_stored(owner_client):
    system = factories.system(owner_client.owner)
    baseline = factories.system(None, is_baseline=True)
    prompts = factories.prompt_set(1)
    upload(owner_client, system, b"a\n", prompt_set=prompts, baselines=[baseline.slug])
    assert list(Submission.objects.get().baselines.all()) == [baseline]


def test_private_baseline_of_someone_else_cannot_be_chosen(owner_client):
    system = factories.system(owner_client.owner)
    hidden = factories.system(factories.user(), is_baseline=True, visibility="private")
    prompts = factories.prompt_set(1)
    response = upload(owner_client, system, b"a\n", prompt_set=prompts, baselines=[hidden.slug])
    assert response.status_code == 200 and Submission.objects.count() == 0
    assert "Select a valid choice" in response.content.decode()


def test_edit_own_system(owner_client):
    system = factories.system(owner_client.owner, name="Old")
    response = owner_client.post(
        reverse("system-edit", args=[system.slug]),
        {"name": "New", "slug": system.slug, "visibility": "private"},
    )
    system.refresh_from_db()
    assert response.status_code == 302
    assert (system.name, system.visibility) == ("New", "private")


def test_profile_paginates_responses(client):
    system = factories.system(factories.user())
    prompts = factories.prompt_set(30)
    factories.submission(system, prompts)
    first = client.get(system.get_absolute_url())
    second = client.get(system.get_absolute_url() + "?page=2")
    assert b"response 25 of" in first.content and b"response 26 of" not in first.content
    assert b"response 26 of" in second.content


def test_profile_query_count_does_not_grow_with_submissions(client, django_assert_max_num_queries):
    system = factories.system(factories.user())
    for _ in range(6):
        factories.submission(system, factories.prompt_set(3))
    with django_assert_max_num_queries(8):
        assert client.get(system.get_absolute_url()).status_code == 200


@pytest.fixture
def private_submission(django_capture_on_commit_callbacks):
    owner = factories.user("private-owner")
    system = factories.system(owner, visibility=System.Visibility.PRIVATE)
    with django_capture_on_commit_callbacks(execute=True):
        submission = factories.submission(system, factories.prompt_set(2), ["secret a", "b"])
    submission.refresh_from_db()
    return submission


@pytest.fixture
def embedded_urls(settings):
    """The URLs as the embedded mode (DEBUG on) builds them; Django's test runner turns
    DEBUG off, so they are built again with it on."""
    import evalhub.urls

    settings.DEBUG = True
    importlib.reload(evalhub.urls)
    clear_url_caches()
    yield
    settings.DEBUG = False
    importlib.reload(evalhub.urls)
    clear_url_caches()


def test_uploads_have_no_public_url_in_the_embedded_mode(
    client, settings, private_submission, embedded_urls
):
    assert (settings.MEDIA_ROOT / private_submission.file.name).is_file()
    response = client.get(settings.MEDIA_URL + private_submission.file.name)
    assert response.status_code == 404
    assert b"secret a" not in response.content


def test_a_private_systems_file_is_not_found_for_others(client, private_submission):
    url = reverse("submission-file", args=[private_submission.public_id])
    assert client.get(url).status_code == 404
    client.force_login(factories.user("someone-else"))
    assert client.get(url).status_code == 404


@pytest.mark.parametrize("who", ["owner", "staff"])
def test_a_private_systems_file_is_served_to_its_owner_and_staff(client, private_submission, who):
    user = private_submission.system.owner if who == "owner" else factories.user(staff=True)
    client.force_login(user)
    response = client.get(reverse("submission-file", args=[private_submission.public_id]))
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b"secret a\nb\n"
    assert response["Content-Disposition"] == 'attachment; filename="r.txt"'


def test_a_public_systems_file_is_served_to_anyone(client, django_capture_on_commit_callbacks):
    system = factories.system(factories.user())
    with django_capture_on_commit_callbacks(execute=True):
        submission = factories.submission(system, factories.prompt_set(1), ["hello"])
    response = client.get(reverse("submission-file", args=[submission.public_id]))
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b"hello\n"
