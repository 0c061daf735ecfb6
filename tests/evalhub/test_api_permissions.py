"""Every API view declares, per method it answers, who may call it (evalhub/permissions.py
`by_method`); and the declaration decides, not the view's body."""

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient, APIRequestFactory
from rest_framework.views import APIView

from evalhub.permissions import (
    Anyone,
    IsManager,
    IsStaff,
    MethodPermissions,
    SignedIn,
    by_method,
)
from tests import factories


def api_views(resolver=None, prefix=""):
    """(route, view class, {method: action or None}, initkwargs) of every DRF view."""
    resolver = resolver or get_resolver()
    for pattern in resolver.url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from api_views(pattern, route)
            continue
        assert isinstance(pattern, URLPattern)
        callback = pattern.callback
        cls = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
        if not (route.startswith("api/") and cls and issubclass(cls, APIView)):
            continue
        actions = getattr(callback, "actions", None)
        if actions is None:
            methods = {m: None for m in cls.http_method_names if hasattr(cls, m)}
        else:
            methods = dict(actions)
        methods.pop("options", None)
        methods.pop("head", None)
        yield route, cls, methods, getattr(callback, "initkwargs", {}) or {}


VIEWS = list(api_views())


def test_the_walk_finds_the_api():
    routes = {route for route, *_ in VIEWS}
    assert len(VIEWS) > 30
    assert "api/token/" in routes


@pytest.mark.parametrize(
    ("route", "cls", "methods", "initkwargs"),
    VIEWS,
    ids=[f"{r} {c.__name__}" for r, c, *_ in VIEWS],
)
def test_every_api_view_declares_each_method(route, cls, methods, initkwargs):
    classes = initkwargs.get("permission_classes", cls.permission_classes)
    declared = [c for c in classes if isinstance(c, type) and issubclass(c, MethodPermissions)]
    assert len(declared) == 1, f"{cls.__name__} has no by_method(...) declaration"
    assert "get_permissions" not in vars(cls), f"{cls.__name__} decides in get_permissions"
    rules = declared[0].rules
    for method, action in methods.items():
        assert action in rules or method.upper() in rules, (
            f"{cls.__name__} answers {method.upper()} ({action}) without declaring who may"
        )
    for action in methods.values():
        view_action = getattr(cls, action or "", None)
        # @action(permission_classes=...) would bypass the declaration
        kwargs = getattr(view_action, "kwargs", {}) or {}
        assert "permission_classes" not in kwargs, f"{cls.__name__}.{action} overrides it"


# The declaration itself -----------------------------------------------------------------------


class Thing:
    def __init__(self, owner, public):
        self.owner_id = owner.pk if owner else None
        self.public = public

    def is_public(self):
        return self.public


def call(method, user=None, obj=None, **rules):
    class View(APIView):
        authentication_classes = []
        permission_classes = [by_method(**rules)]

        def get(self, request):
            if obj is not None:
                self.check_object_permissions(request, obj)
            return self.respond()

        def post(self, request):
            return self.get(request)

        def respond(self):
            from rest_framework.response import Response

            return Response({"ok": True})

    factory = APIRequestFactory()
    request = getattr(factory, method.lower())("/api/thing/")
    if user is not None:
        from rest_framework.test import force_authenticate

        force_authenticate(request, user)
    return View.as_view()(request)


@pytest.mark.django_db
def test_each_method_follows_its_own_rule():
    staff = factories.user("boss", staff=True)
    assert call("GET", GET=Anyone, POST=IsStaff).status_code == 200
    assert call("POST", GET=Anyone, POST=IsStaff).status_code == 403  # no authenticator: 403
    assert call("POST", staff, GET=Anyone, POST=IsStaff).status_code == 200


@pytest.mark.django_db
def test_a_method_the_view_answers_but_does_not_declare_is_refused():
    user = factories.user("someone")
    response = call("POST", user, GET=Anyone)
    assert response.status_code == 403
    assert response.data["errors"][0]["message"] == "This method declares no permission."


@pytest.mark.django_db
def test_options_describes_the_view_to_anybody_and_head_follows_get():
    assert call("OPTIONS", POST=IsStaff).status_code == 200
    assert call("HEAD", GET=IsStaff).status_code == 403
    assert call("HEAD", GET=Anyone).status_code == 200


@pytest.mark.django_db
def test_a_method_the_view_does_not_answer_is_a_405():
    response = call("DELETE", GET=Anyone)
    assert response.status_code == 405


@pytest.mark.django_db
def test_a_manager_rule_answers_404_to_who_may_not_see_the_object():
    owner, stranger = factories.user("owner"), factories.user("stranger")
    assert call("GET", owner, Thing(owner, public=False), GET=IsManager).status_code == 200
    assert call("GET", stranger, Thing(owner, public=False), GET=IsManager).status_code == 404
    assert call("GET", stranger, Thing(owner, public=True), GET=IsManager).status_code == 403


@pytest.mark.django_db
def test_several_rules_must_all_pass():
    user = factories.user("plain")
    assert call("GET", user, GET=(SignedIn, IsStaff)).status_code == 403
    assert call("GET", user, GET=[SignedIn]).status_code == 200


@pytest.mark.django_db
def test_a_view_that_declares_nothing_is_refused_everything():
    from rest_framework.response import Response

    class Forgetful(APIView):
        authentication_classes = []

        def get(self, request):
            return Response({"secret": 1})

    response = Forgetful.as_view()(APIRequestFactory().get("/api/forgetful/"))
    assert response.status_code == 403
    assert response.data["errors"][0]["message"] == "This method declares no permission."


@pytest.mark.django_db
def test_a_declared_api_answers_anonymous_reads():
    assert APIClient().get("/api/systems/").status_code == 200
