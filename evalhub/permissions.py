"""Who may do what, in one vocabulary that pages and the REST API share.

Three words, for every model that has an ``owner`` and a notion of being public:

- **staff** (`is_staff`): EvalHub's admins. They see and manage everything.
- **manage** (`may_manage`): staff, or the object's owner. Managers change an object, launch it,
  submit for it and see it before it is public.
- **see** (`may_see`): anybody when the object is public (``obj.is_public()``), otherwise its
  managers only.

`visible_to` and `managed_by` are the same rules as queryset filters; the models' own
``visible_to``/``editable_by``/``is_visible_to``/``is_managed_by`` methods are built on them.
Pages guard themselves with `staff_required` (login for visitors, 403 for non-staff),
`manageable_or_403` and `visible_or_404`; API views with the DRF classes at the bottom.
"""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import Http404
from rest_framework import permissions as drf

# Predicates ----------------------------------------------------------------------------------


def is_staff(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_staff)


def is_owner(user, obj) -> bool:
    """The user owns the object; an object without an owner belongs to nobody."""
    if user is None or not user.is_authenticated:
        return False
    return obj.owner_id is not None and obj.owner_id == user.pk


def may_manage(user, obj) -> bool:
    return is_staff(user) or is_owner(user, obj)


def may_see(user, obj) -> bool:
    """`obj.is_public()` is the object's own notion (a published tournament, a system past
    its embargo)."""
    return obj.is_public() or may_manage(user, obj)


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
    """`obj` when `user` may manage it; otherwise PermissionDenied with `message`."""
    if not may_manage(user, obj):
        raise PermissionDenied(message)
    return obj


def visible_or_404(user, obj, message: str = "Not found."):
    """`obj` when `user` may see it; otherwise 404, so that nothing private leaks."""
    if not may_see(user, obj):
        raise Http404(message)
    return obj


# REST API ------------------------------------------------------------------------------------


class IsStaff(drf.BasePermission):
    def has_permission(self, request, view):
        return is_staff(request.user)


class IsStaffOrReadOnly(drf.BasePermission):
    def has_permission(self, request, view):
        return request.method in drf.SAFE_METHODS or is_staff(request.user)


class IsManagerOrReadOnly(drf.BasePermission):
    """Anyone who may see an object may read it; only its managers change it."""

    def has_object_permission(self, request, view, obj):
        return request.method in drf.SAFE_METHODS or may_manage(request.user, obj)
