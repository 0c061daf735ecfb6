"""Django's own error pages, for the paths of the REST API, in the API's one error shape.

DRF's exception handler answers the errors a view raises; a URL under /api/ that matches no
route, a request Django refuses before any view (a bad Host, a body too large) or a crash
never reaches it. These handlers (handler400/403/404/500 in evalhub/urls.py) answer those
in JSON, in the shape of `evalhub.api.exceptions`, and leave every other path to Django's
HTML pages.
"""

from django.http import JsonResponse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt

from .exceptions import error_body

API_PREFIX = "/api/"


def is_api(request) -> bool:
    return request.path.startswith(API_PREFIX)


def _json(message: str, status: int) -> JsonResponse:
    return JsonResponse(error_body(message), status=status)


def bad_request(request, exception):
    if is_api(request):
        return _json("Bad request.", 400)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception):
    if is_api(request):
        return _json(str(exception) or "You do not have permission to perform this action.", 403)
    return defaults.permission_denied(request, exception)


def page_not_found(request, exception):
    if is_api(request):
        return _json("Not found.", 404)
    return defaults.page_not_found(request, exception)


@csrf_exempt  # it changes nothing; a POST must get the 404, not the CSRF page
def no_such_route(request, *args, **kwargs):
    """The last route under /api/: a path no API route matches. A route and not only
    handler404, because with DEBUG on Django answers an unmatched URL with its technical
    HTML page instead of calling handler404; the API's shape must not depend on DEBUG."""
    return _json("Not found.", 404)


def server_error(request):
    if is_api(request):
        return _json("Server error.", 500)
    return defaults.server_error(request)
