"""The shared vocabulary of evalhub/permissions.py: each predicate, the queryset filters,
the page guards and the DRF classes, and that pages and the API give the same answers."""

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from evalhub import permissions
from evalhub.models import System
from tests import factories

pytestmark = pytest.mark.django_db

ACTORS = ["anonymous", "stranger", "owner", "staff"]


@pytest.fixture
def people():
    return {
        "anonymous": AnonymousUser(),
        "stranger": factories.user("stranger"),
        "owner": factories.user("owner"),
        "staff": factories.user("staff", staff=True),
    }


def thing(owner, public):
    """Any object with an owner and a notion of being public."""
    return SimpleNamespace(owner_id=owner.pk if owner else None, is_public=lambda: public)


# Predicates ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "actor, expected",
    [("anonymous", False), ("stranger", False), ("owner", False), ("staff", True)],
)
def test_is_staff(people, actor, expected):
    assert permissions.is_staff(people[actor]) is expected


def test_is_staff_of_nobody():
    assert permissions.is_staff(None) is False


@pytest.mark.parametrize(
    "actor, expected",
    [("anonymous", False), ("stranger", False), ("owner", True), ("staff", False)],
)
def test_is_owner(people, actor, expected):
    assert permissions.is_owner(people[actor], thing(people["owner"], public=True)) is expected


def test_an_object_without_owner_belongs_to_nobody(people):
    orphan = thing(None, public=True)
    assert not permissions.is_owner(people["owner"], orphan)
    assert not permissions.is_managed_by(people["stranger"], orphan)
    assert permissions.is_managed_by(people["staff"], orphan)


@pytest.mark.parametrize(
    "actor, expected", [("anonymous", False), ("stranger", False), ("owner", True), ("staff", True)]
)
def test_is_managed_by(people, actor, expected):
    assert permissions.is_managed_by(people[actor], thing(people["owner"], public=True)) is expected


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("public", [True, False])
def test_may_see(people, actor, public):
    expected = public or actor in {"owner", "staff"}
    assert permissions.may_see(people[actor], thing(people["owner"], public)) is expected


# Querysets ------------------------------------------------------------------------------------


@pytest.fixture
def systems(people):
    now = timezone.now()
    return {
        "public": factories.system(people["owner"], slug="public"),
        "private": factories.system(people["owner"], slug="private", visibility="private"),
        "embargoed": factories.system(
            people["owner"], slug="embargoed", embargo_until=now + timedelta(days=1)
        ),
        "strangers": factories.system(people["stranger"], slug="strangers", visibility="private"),
    }


@pytest.mark.parametrize(
    "actor, expected",
    [
        ("anonymous", {"public"}),
        ("stranger", {"public", "strangers"}),
        ("owner", {"public", "private", "embargoed"}),
        ("staff", {"public", "private", "embargoed", "strangers"}),
    ],
)
def test_visible_to_filters_a_queryset(people, systems, actor, expected):
    rows = permissions.visible_to(
        System.objects.all(), people[actor], public=System.objects.public_q()
    )
    assert set(rows.values_list("slug", flat=True)) == expected
    # The model's own method is the same rule, and agrees with the object predicate.
    assert set(System.objects.visible_to(people[actor]).values_list("slug", flat=True)) == expected
    seen = {slug for slug, s in systems.items() if permissions.may_see(people[actor], s)}
    assert {systems[slug].slug for slug in seen} == expected


@pytest.mark.parametrize(
    "actor, expected",
    [
        ("anonymous", set()),
        ("stranger", {"strangers"}),
        ("owner", {"public", "private", "embargoed"}),
        ("staff", {"public", "private", "embargoed", "strangers"}),
    ],
)
def test_managed_by_filters_a_queryset(people, systems, actor, expected):
    rows = permissions.managed_by(System.objects.all(), people[actor])
    assert set(rows.values_list("slug", flat=True)) == expected
    managed = {s.slug for s in systems.values() if permissions.is_managed_by(people[actor], s)}
    assert managed == expected


# Page guards -----------------------------------------------------------------------------------


def guarded_request(user):
    request = RequestFactory().get("/somewhere/?x=1")
    request.user = user
    return request


def test_staff_required_sends_visitors_to_the_login_page(people):
    view = permissions.staff_required(lambda request: HttpResponse("ok"))
    response = view(guarded_request(people["anonymous"]))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    assert "next=/somewhere/%3Fx%3D1" in response["Location"]


def test_staff_required_refuses_non_staff_and_lets_staff_in(people):
    view = permissions.staff_required(lambda request: HttpResponse("ok"))
    with pytest.raises(PermissionDenied):
        view(guarded_request(people["owner"]))
    assert view(guarded_request(people["staff"])).content == b"ok"


def test_manageable_or_403(people):
    obj = thing(people["owner"], public=True)
    assert permissions.manageable_or_403(people["owner"], obj, "no") is obj
    with pytest.raises(PermissionDenied, match="only the owner"):
        permissions.manageable_or_403(people["stranger"], obj, "only the owner")


def test_manageable_or_403_answers_404_to_who_may_not_see_it(people):
    hidden = thing(people["owner"], public=False)
    assert permissions.manageable_or_403(people["staff"], hidden, "no") is hidden
    with pytest.raises(Http404):
        permissions.manageable_or_403(people["stranger"], hidden, "only the owner")


def test_visible_or_404(people):
    hidden = thing(people["owner"], public=False)
    assert permissions.visible_or_404(people["staff"], hidden) is hidden
    with pytest.raises(Http404, match="No such thing"):
        permissions.visible_or_404(people["anonymous"], hidden, "No such thing.")


# DRF classes ----------------------------------------------------------------------------------


def api_request(user, method):
    return SimpleNamespace(user=user, method=method)


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_drf_classes_say_what_the_predicates_say(people, actor, method):
    user = people[actor]
    obj = thing(people["owner"], public=True)
    request = api_request(user, method)
    view = SimpleNamespace(action=None, allowed_methods=["GET", "POST"])
    declared = permissions.by_method(GET=permissions.Anyone, POST=permissions.IsManager)()
    assert permissions.IsStaff().has_permission(request, None) is permissions.is_staff(user)
    assert permissions.IsManager().has_object_permission(request, None, obj) is (
        permissions.is_managed_by(user, obj)
    )
    # The public object is read by anybody; only its managers change it.
    assert declared.has_permission(request, view) is (method == "GET" or user.is_authenticated)
    assert declared.has_object_permission(request, view, obj) is (
        method == "GET" or permissions.is_managed_by(user, obj)
    )


# Pages and API agree --------------------------------------------------------------------------


def client_for(user, api=False):
    client = APIClient() if api else Client()
    if user.is_authenticated:
        client.force_login(user)
    return client


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize("kind", ["public", "private", "embargoed", "strangers"])
def test_a_system_page_and_its_api_agree_on_who_sees_it(people, systems, actor, kind):
    user, system = people[actor], systems[kind]
    page = client_for(user).get(reverse("system-detail", args=[system.slug]))
    api = client_for(user, api=True).get(f"/api/systems/{system.slug}/")
    expected = 200 if permissions.may_see(user, system) else 404
    assert (page.status_code, api.status_code) == (expected, expected)


@pytest.mark.parametrize("actor", ["stranger", "owner", "staff"])
def test_a_system_edit_page_and_its_api_agree_on_who_changes_it(people, systems, actor):
    user, system = people[actor], systems["public"]
    before = (system.name, system.description)
    page = client_for(user).post(
        reverse("system-edit", args=[system.slug]),
        {"name": "Renamed on the page", "slug": system.slug, "visibility": "public"},
    )
    api = client_for(user, api=True).patch(
        f"/api/systems/{system.slug}/", {"description": "changed by the API"}, format="json"
    )
    system.refresh_from_db()
    if permissions.is_managed_by(user, system):
        assert page.status_code == 302 and api.status_code == 200
        assert (system.name, system.description) == ("Renamed on the page", "changed by the API")
    else:
        assert (page.status_code, api.status_code) == (403, 403)
        assert (system.name, system.description) == before


@pytest.mark.parametrize("actor", ["stranger", "owner", "staff"])
def test_staff_pages_and_staff_api_agree_on_who_is_staff(people, actor):
    user = people[actor]
    # Every run of every analysis: a staff page (the campaign list is everyone's own now).
    page = client_for(user).get(reverse("analysis:overview"))
    api = client_for(user, api=True).post("/api/conversations/import/", {}, format="multipart")
    if permissions.is_staff(user):
        assert page.status_code == 200
        assert api.status_code == 400  # let in, then told that the file is missing
    else:
        assert (page.status_code, api.status_code) == (403, 403)
