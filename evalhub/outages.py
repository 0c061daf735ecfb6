"""What a request gets when a service it cannot do without is down: 503 with Retry-After,
as a page, or under /api/ in the API's one error shape.

A use that fails closed raises `ServiceUnavailable` (the rate limits of new identities,
evalhub/ratelimit.py); `ServiceUnavailableMiddleware` answers it wherever it is raised, so
no view handles it itself.
"""

from django.http import JsonResponse
from django.shortcuts import render

from .api.exceptions import error_body
from .api.handlers import is_api

RETRY_AFTER_SECONDS = 60


class ServiceUnavailable(Exception):
    """A service this request needs is down; the message says what the visitor can do."""


class ServiceUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, ServiceUnavailable):
            return None
        if is_api(request):
            response = JsonResponse(error_body(str(exception)), status=503)
        else:
            response = render(
                request, "service_unavailable.html", {"message": str(exception)}, status=503
            )
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
