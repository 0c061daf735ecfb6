"""Who may reach the staff pages of the annotation engine."""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied


def staff_required(view):
    """Anonymous visitors go to the login page; logged-in non-staff users get 403."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied("Only staff manage campaigns and workers.")
        return view(request, *args, **kwargs)

    return wrapper
