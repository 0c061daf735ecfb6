"""Request parsers of the API (REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"])."""

import io

from django.conf import settings
from rest_framework import parsers, status
from rest_framework.exceptions import APIException

from ..errors import UserInputError


class BodyTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "body_too_large"


class JSONParser(parsers.JSONParser):
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


# The API's parsers, in DRF's default order with the JSON parser above.
PARSERS = [JSONParser, parsers.FormParser, parsers.MultiPartParser]
