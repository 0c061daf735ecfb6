"""Who sees and changes what: anonymous, researcher, another researcher, owner, staff
× public, private, embargoed and formerly embargoed systems, on the pages and the API."""

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from evalhub.models import Submission
from tests import factories

pytestmark = pytest.mark.django_db

ACTORS = ["anonymous", "researcher", "other_researcher", "owner", "staff"]
KINDS = ["public", "private", "embargoed", "embargo_over"]
SEES_HIDDEN = {"owner", "staff"}


@pytest.fixture
def world():
    owner = factories.user("owner")
    other = factories.user("other")
    factories.system(other, slug="others-bot")  # makes `other` a researcher with a system
    people = {
        "anonymous": None,
        "researcher": factories.user("researcher"),
        "other_researcher": other,
        "owner": owner,
        "staff": factories.user("staff", staff=True),
    }
    now = timezone.now()
    systems = {
        "public": factories.system(owner, slug="public-bot"),
        "private": factories.system(owner, slug="private-bot", visibility="private"),
        "embargoed": factories.system(
            owner, slug="embargoed-bot", embargo_until=now + timedelta(days=3)
        ),
        "embargo_over": factories.system(
            owner, slug="released-bot", embargo_until=now - timedelta(days=1)
        ),
    }
    prompt_set = factories.prompt_set(2, slug="shared-set")
    submissions = {
        kind: factories.submission(system, prompt_set) for kind, system in systems.items()
    }
    return {
        "people": people,
        "systems": systems,
        "prompt_set": prompt_set,
        "submissions": submissions,
    }


def visible(actor, kind):
    return kind in {"public", "embargo_over"} or actor in SEES_HIDDEN


def web_client(client, world, actor):
    person = world["people"][actor]
    if person:
        client.force_login(person)
    return client


def api_client(world, actor):
    client = APIClient()
    person = world["people"][actor]
    if person:
        client.force_authenticate(person)
    return client


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("kind", KINDS)
def test_profile_page(client, world, actor, kind):
    system = world["systems"][kind]
    response = web_client(client, world, actor).get(system.get_absolute_url())
    assert response.status_code == (200 if visible(actor, kind) else 404)


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("page", ["system-edit", "system-submit"])
def test_edit_and_submit_pages(client, world, actor, kind, page):
    system = world["systems"][kind]
    response = web_client(client, world, actor).get(reverse(page, args=[system.slug]))
    if actor == "anonymous":
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    elif actor in SEES_HIDDEN:
        assert response.status_code == 200
    else:
        assert response.status_code == (403 if visible(actor, kind) else 404)


@pytest.mark.parametrize("actor", ["researcher", "other_researcher"])
def test_others_cannot_post_an_edit(client, world, actor):
    system = world["systems"]["public"]
    response = web_client(client, world, actor).post(
        reverse("system-edit", args=[system.slug]),
        {"name": "Hijacked", "slug": system.slug, "visibility": "public"},
    )
    system.refresh_from_db()
    assert response.status_code == 403 and system.name != "Hijacked"


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("url", ["home", "system-list", "promptset-detail"])
def test_listings_show_only_visible_systems(client, world, actor, url):
    args = [world["prompt_set"].slug] if url == "promptset-detail" else []
    content = web_client(client, world, actor).get(reverse(url, args=args)).content.decode()
    for kind, system in world["systems"].items():
        # The home page advertises public systems only, whoever looks at it.
        expected = visible("anonymous" if url == "home" else actor, kind)
        assert (system.get_absolute_url() in content) == expected, kind


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("kind", ["private", "embargoed"])
def test_compare_refuses_hidden_systems(client, world, actor, kind):
    hidden = world["systems"][kind]
    public = world["systems"]["public"]
    response = web_client(client, world, actor).get(
        reverse("compare"),
        {"prompt_set": world["prompt_set"].slug, "systems": [public.slug, hidden.slug]},
    )
    shows_hidden_responses = f"response 1 of {hidden.slug}" in response.content.decode()
    assert shows_hidden_responses == visible(actor, kind)


@pytest.mark.parametrize("actor", ACTORS)
def test_api_system_list(world, actor):
    response = api_client(world, actor).get("/api/systems/")
    slugs = {item["slug"] for item in response.json()["results"]}
    for kind, system in world["systems"].items():
        assert (system.slug in slugs) == visible(actor, kind), kind


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("kind", KINDS)
def test_api_system_detail_and_submissions(world, actor, kind):
    system = world["systems"][kind]
    client = api_client(world, actor)
    expected = 200 if visible(actor, kind) else 404
    assert client.get(f"/api/systems/{system.slug}/").status_code == expected
    assert client.get(f"/api/systems/{system.slug}/submissions/").status_code == expected
    public_id = world["submissions"][kind].public_id
    assert client.get(f"/api/submissions/{public_id}/").status_code == expected


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("kind", KINDS)
def test_api_update(world, actor, kind):
    system = world["systems"][kind]
    response = api_client(world, actor).patch(
        f"/api/systems/{system.slug}/", {"description": "changed"}, format="json"
    )
    system.refresh_from_db()
    if actor == "anonymous":
        assert response.status_code == 401
    elif actor in SEES_HIDDEN:
        assert response.status_code == 200 and system.description == "changed"
    else:
        assert response.status_code == (403 if visible(actor, kind) else 404)
    if actor not in SEES_HIDDEN:
        assert system.description != "changed"


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("kind", KINDS)
def test_api_submit(world, actor, kind):
    system = world["systems"][kind]
    before = Submission.objects.count()
    response = api_client(world, actor).post(
        f"/api/systems/{system.slug}/submissions/",
        {"prompt_set": world["prompt_set"].slug, "file": SimpleUploadedFile("r.txt", b"a\nb\n")},
        format="multipart",
    )
    if actor == "anonymous":
        assert response.status_code == 401
    elif actor in SEES_HIDDEN:
        assert response.status_code == 201
    else:
        assert response.status_code == (403 if visible(actor, kind) else 404)
    assert Submission.objects.count() == before + (1 if response.status_code == 201 else 0)


@pytest.mark.parametrize("actor", ACTORS)
def test_api_prompt_set_creation_is_for_staff(world, actor):
    response = api_client(world, actor).post(
        "/api/prompt-sets/",
        {"slug": "new-set", "name": "New", "file": SimpleUploadedFile("p.txt", b"hi\n")},
        format="multipart",
    )
    expected = {"anonymous": 401, "staff": 201}.get(actor, 403)
    assert response.status_code == expected


def test_embargo_lifts_by_itself(client, world):
    system = world["systems"]["embargoed"]
    system.embargo_until = timezone.now() - timedelta(seconds=1)
    system.save()
    assert client.get(system.get_absolute_url()).status_code == 200
