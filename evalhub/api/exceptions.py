"""The REST API's one error shape, for every status from 400 to 500.

Set as REST_FRAMEWORK["EXCEPTION_HANDLER"]. Every error a view raises (a `UserInputError`
from a service, DRF's `ValidationError` from a serializer, and DRF's or Django's 401, 403,
404, 405, 406, 415 and 429) answers the shape of `UserInputError.as_dict()`:

    {"errors": [{"field": "slug", "message": "..."}, {"line": 3, "message": "..."}],
     "error_count": 2}

Each error has a "message" and one locator: "field" (an input field), or "line" (a line of
an uploaded file, or null for the request as a whole: "Not found.", "Authentication
credentials were not provided."). A client reads one shape whatever the status; a 429 keeps
DRF's Retry-After header (a throttle's), or gets the error's own (a quota's:
evalhub/quotas.py, whose `UserInputError` carries its status). Django's own 400/403/404/500 under /api/ (a URL that matches no
route, a crash) answer the same shape through `evalhub.api.handlers`.
"""

from rest_framework.exceptions import ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from ..errors import Problem, UserInputError


def exception_handler(exc, context):
    answer_in_json(context.get("request"))
    if isinstance(exc, UserInputError):
        set_rollback()  # as DRF does for its own errors, in case the request is atomic
        # 400, or the error's own status (a quota: evalhub/quotas.py).
        response = Response(exc.as_dict(), status=exc.status_code)
        if exc.retry_after is not None:
            response["Retry-After"] = str(exc.retry_after)
        return response
    # DRF's handler turns Http404 and Django's PermissionDenied into its own errors, sets
    # the headers (WWW-Authenticate, Retry-After) and rolls back; only the body changes.
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # not an API error: Django's 500 handler answers it
    if isinstance(exc, ValidationError):
        response.data = UserInputError(validation_problems(exc.detail)).as_dict()
    else:
        response.data = error_body(detail_text(response.data))
    return response


def answer_in_json(request) -> None:
    """An error of a view that renders CSV or JSON lines (an export) is still answered in
    JSON, as documented: its renderer would write the error's dict as a file's content. The
    browsable API keeps its HTML page."""
    renderer = getattr(request, "accepted_renderer", None)
    if renderer is not None and renderer.format not in ("json", "api"):
        request.accepted_renderer = JSONRenderer()
        request.accepted_media_type = JSONRenderer.media_type


def error_body(message: str) -> dict:
    """The one shape for an error of the request as a whole."""
    return UserInputError([Problem(message=str(message))]).as_dict()


def detail_text(data) -> str:
    """DRF's body for a non-validation error is {"detail": text}; a view may have set a
    list or a plain text instead."""
    if isinstance(data, dict) and "detail" in data:
        return str(data["detail"])
    if isinstance(data, list):
        return " ".join(str(item) for item in data)
    return str(data)


def validation_problems(detail, field: str | None = None) -> list[Problem]:
    """DRF's nested error detail as flat problems; nested fields are named "outer.inner",
    items of a list "outer.0"; errors of no field are DRF's NON_FIELD_ERRORS_KEY."""
    if isinstance(detail, dict):
        problems = []
        for key, value in detail.items():
            problems += validation_problems(value, f"{field}.{key}" if field else str(key))
        return problems
    if isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            return [p for item in detail for p in validation_problems(item, field)]
        problems = []
        for index, item in enumerate(detail):
            if item:  # DRF gives {} for the items of a list that are valid
                problems += validation_problems(item, f"{field}.{index}" if field else str(index))
        return problems
    return [Problem(field=field or api_settings.NON_FIELD_ERRORS_KEY, message=str(detail))]
