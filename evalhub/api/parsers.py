"""Request parsers of the API (REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"], and every view
that names its own: tests/evalhub/test_api_parsers.py holds them all to these).

Each refuses a body holding a NUL character anywhere, nested JSON and keys included, with
a 400 naming where ("turns.0.text"): PostgreSQL can store no NUL, in text or in jsonb, and
a JSONField's or a DictField's contents pass no field's check (evalhub/text.py says why
people's NULs are refused). Uploaded files are the importers' to read, line by line.
"""

import io

from django.conf import settings
from django.http import QueryDict
from rest_framework import parsers, status
from rest_framework.exceptions import APIException
from rest_framework.parsers import DataAndFiles

from ..errors import UserInputError
from ..text import find_nul, nul_refused, shown


class BodyTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "body_too_large"


def _where(data) -> str | None:
    """Where a NUL is in a parsed body: a JSON path, or the name of a form's field (any of
    its values: a QueryDict's items() give only the last one)."""
    if isinstance(data, QueryDict):
        return next((n for n, values in data.lists() if find_nul([n, *values]) is not None), None)
    return find_nul(data)


class RefusesNul:
    """Mixed into a DRF parser: its parsed body holds no NUL, or the request is a 400."""

    def parse(self, stream, media_type=None, parser_context=None):
        parsed = super().parse(stream, media_type, parser_context)
        data = parsed.data if isinstance(parsed, DataAndFiles) else parsed
        where = _where(data)
        if where is not None:
            raise UserInputError(nul_refused(where), field=shown(where) or "non_field_errors")
        return parsed


class JSONParser(RefusesNul, parsers.JSONParser):
    """DRF's JSON parser, with two bounds.

    A body over EVALHUB_MAX_JSON_BODY_BYTES is refused (413) having read no more than that:
    Django bounds form bodies (DATA_UPLOAD_MAX_MEMORY_SIZE), but DRF reads a JSON body from
    the request's stream, which nothing bounds.

    JSON nested too deep for Python's `json` (a few thousand brackets: a 6 KB body) is the
    caller's error. `json` raises RecursionError, which DRF's parser does not catch (it
    expects ValueError): the request was a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.EVALHUB_MAX_JSON_BODY_BYTES
        body = stream.read(limit + 1) if stream is not None else b""
        if len(body) > limit:
            raise BodyTooLarge(f"The JSON body is larger than {limit:,} bytes.")
        try:
            return super().parse(io.BytesIO(body), media_type, parser_context)
        except RecursionError:
            raise UserInputError("JSON nested too deeply.", field="non_field_errors") from None


class FormParser(RefusesNul, parsers.FormParser):
    pass


class MultiPartParser(RefusesNul, parsers.MultiPartParser):
    pass


# The API's parsers, in DRF's default order.
PARSERS = [JSONParser, FormParser, MultiPartParser]
