"""Request parsers of the API (REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"])."""

from rest_framework import parsers

from ..errors import UserInputError


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with JSON nested too deep for Python's `json` (a few thousand
    brackets: a 6 KB body) answered as the caller's error. `json` raises RecursionError,
    which DRF's parser does not catch (it expects ValueError): the request was a 500."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise UserInputError("JSON nested too deeply.", field="non_field_errors") from None


# The API's parsers, in DRF's default order with the JSON parser above.
PARSERS = [JSONParser, parsers.FormParser, parsers.MultiPartParser]
