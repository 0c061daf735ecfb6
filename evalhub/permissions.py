"""Who may do what, in one vocabulary that pages and the REST API share.

Three words, for every model that has an ``owner`` and a notion of being public:

- **staff** (`is_staff`): EvalHub's admins. They see and manage everything.
- **manage** (`is_managed_by`): staff, or the object's owner. Managers change an object, launch it,
  submit for it and see it before it is public.
- **see** (`may_see`): anybody when the object is public (``obj.is_public()``), otherwise its
  managers only.

`is_managed_by` is the one verb for "may change it" (the models' own `is_managed_by` and the
querysets' `managed_by` say it too). `visible_to` and `managed_by` are the same rules as
queryset filters; the models' ``visible_to``/``managed_by``/``is_visible_to``/
``is_managed_by`` methods are built on them. Pages guard themselves with `staff_required`
(login for visitors, 403 for non-staff), `manageable_or_403` and `visible_or_404`; every API
view declares its rules per method with `by_method` (at the bottom). Whoever may not see a
private object is answered 404, as if it did not exist, by pages and API alike.
"""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import Http404
from rest_framework import permissions as drf
from rest_framework.exceptions import NotFound

# Predicates ----------------------------------------------------------------------------------


def is_staff(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_staff)


def is_owner(user, obj) -> bool:
    """The user owns the object; an object without an owner belongs to nobody."""
    if user is None or not user.is_authenticated:
        return False
    return obj.owner_id is not None and obj.owner_id == user.pk


def is_managed_by(user, obj) -> bool:
    return is_staff(user) or is_owner(user, obj)


def may_see(user, obj) -> bool:
    """`obj.is_public()` is the object's own notion (a published tournament, a system past
    its embargo)."""
    return obj.is_public() or is_managed_by(user, obj)


# The same rules on querysets -----------------------------------------------------------------


def visible_to(queryset: QuerySet, user, *, public: Q) -> QuerySet:
    """Rows `user` may see: the public ones (`public` filters them), their own, all for staff."""
    if is_staff(user):
        return queryset.all()
    if user is None or not user.is_authenticated:
        return queryset.filter(public)
    return queryset.filter(public | Q(owner=user))


def managed_by(queryset: QuerySet, user) -> QuerySet:
    if is_staff(user):
        return queryset.all()
    if user is None or not user.is_authenticated:
        return queryset.none()
    return queryset.filter(owner=user)


# Pages ---------------------------------------------------------------------------------------


def staff_required(view):
    """Anonymous visitors go to the login page; logged-in non-staff users get 403."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_staff(request.user):
            raise PermissionDenied("Only staff may do this.")
        return view(request, *args, **kwargs)

    return wrapper


def manageable_or_403(user, obj, message: str):
    """`obj` when `user` may manage it; otherwise PermissionDenied with `message`, or 404 to
    whoever may not even see it (as the API's `IsManager`: nothing private leaks)."""
    if not is_managed_by(user, obj):
        if not sees(user, obj):
            raise Http404("Not found.")
        raise PermissionDenied(message)
    return obj


def visible_or_404(user, obj, message: str = "Not found."):
    """`obj` when `user` may see it; otherwise 404, so that nothing private leaks."""
    if not may_see(user, obj):
        raise Http404(message)
    return obj


# REST API ---------------------------------------------------------------------------------------
#
# Every API view declares, per HTTP method (and per extra action of a viewset when its rule
# differs from its method's), who may call it: `permission_classes = [by_method(GET=Anyone,
# POST=IsStaff)]`. The rules below are the predicates above; object rules run in
# `has_object_permission`, so a view that fetches its object itself calls
# `self.check_object_permissions(request, obj)` and never tests a user in its body.
# tests/evalhub/test_api_permissions.py walks the URLconf and checks every API view declares
# each method it answers.


class Anyone(drf.AllowAny):
    """Anybody, signed in or not (a public read; objects are still filtered by visibility)."""


class SignedIn(drf.IsAuthenticated):
    """Any signed-in user (a researcher acting on their own objects)."""


class IsStaff(drf.BasePermission):
    message = "Only staff may do this."

    def has_permission(self, request, view):
        return is_staff(request.user)


class IsManager(drf.BasePermission):
    """Signed in, and manages the object (staff, or its owner). Somebody who may not even
    see the object is answered 404, as if it did not exist: nothing private leaks."""

    message = "Only the owner and staff may do this."

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated)

    def has_object_permission(self, request, view, obj):
        if is_managed_by(request.user, obj):
            return True
        if not sees(request.user, obj):
            raise NotFound()
        return False


class IsViewer(drf.BasePermission):
    """May see the object; 404 otherwise."""

    def has_object_permission(self, request, view, obj):
        if not sees(request.user, obj):
            raise NotFound()
        return True


def sees(user, obj) -> bool:
    """The object's own visibility rule when it has one (`is_visible_to`), else `may_see`;
    an object with no notion of private (a rubric) is seen by whoever reached it through the
    view's queryset."""
    if hasattr(obj, "is_visible_to"):
        return obj.is_visible_to(user)
    if hasattr(obj, "is_public"):
        return may_see(user, obj)
    return True


class MethodPermissions(drf.BasePermission):
    """The rules of one view: {HTTP method or action name: (permission classes, all to
    pass)}. Made by `by_method`; an action's own rule wins over its method's. HEAD follows
    GET; OPTIONS describes the view (what the public schema says) to anybody, and DRF's
    metadata checks the declared rule of each method it lists. A method the view answers
    but does not declare is refused; one it does not answer is let through to its 405."""

    rules: dict[str, tuple[type[drf.BasePermission], ...]] = {}

    def rule(self, request, view):
        action = getattr(view, "action", None)
        if action in self.rules:
            return self.rules[action]
        if request.method == "OPTIONS":
            return ()
        method = "GET" if request.method == "HEAD" else request.method
        if method in self.rules:
            return self.rules[method]
        if request.method in getattr(view, "allowed_methods", ()):
            return (_Undeclared,)
        return ()

    def _all(self, request, view, check) -> bool:
        for permission in (cls() for cls in self.rule(request, view)):
            if not check(permission):
                # DRF's 403 (or 401) says the refusing rule's own message.
                self.message = getattr(permission, "message", None)
                self.code = getattr(permission, "code", None)
                return False
        return True

    def has_permission(self, request, view):
        return self._all(request, view, lambda p: p.has_permission(request, view))

    def has_object_permission(self, request, view, obj):
        return self._all(request, view, lambda p: p.has_object_permission(request, view, obj))


class _Undeclared(drf.BasePermission):
    message = "This method declares no permission."

    def has_permission(self, request, view):
        return False


class NothingDeclared(MethodPermissions):
    """REST_FRAMEWORK's default: a view that declares nothing is refused every method it
    answers (fail closed), instead of falling back to a rule nobody chose."""


def by_method(**rules) -> type[MethodPermissions]:
    """`by_method(GET=Anyone, POST=(SignedIn, IsManager), launch=IsStaff)`: the declaration
    of one view. Keys are HTTP methods (upper case) or a viewset's action names."""
    normalized = {
        key: tuple(value) if isinstance(value, list | tuple) else (value,)
        for key, value in rules.items()
    }
    return type("MethodPermissions", (MethodPermissions,), {"rules": normalized})
