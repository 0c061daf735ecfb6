"""The REST API's answer to input a user got wrong: always the shape of `UserInputError`.

Set as REST_FRAMEWORK["EXCEPTION_HANDLER"]. A `UserInputError` raised by a view or a service,
and DRF's own `ValidationError` from a serializer, both become 400 with
``{"errors": [{"line"|"field": ..., "message": ...}], "error_count": N}``; every other error
keeps DRF's answer (``{"detail": ...}`` for 401, 403, 404...).
"""

from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from ..errors import Problem, UserInputError


def exception_handler(exc, context):
    if isinstance(exc, UserInputError):
        set_rollback()  # as DRF does for its own errors, in case the request is atomic
        return Response(exc.as_dict(), status=status.HTTP_400_BAD_REQUEST)
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, ValidationError):
        response.data = UserInputError(validation_problems(exc.detail)).as_dict()
    return response


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
