"""Answering a task page's submit with the next page itself, in one round trip.

A plain form post is answered the classic way: the judgment is stored, and a redirect
sends the browser to the next item (two requests per judgment). The task page's script
(static/js/annotation.js) posts the same form with ``X-EvalHub-In-Place: 1`` instead, and
the submit view answers with the next item's page, which the script puts in place of the
current one. A crowdworker on a slow connection then waits for one round trip per item
instead of two, and the server does a judgment's work once instead of loading the
assignment and its batch again for the redirected request.

The batch's last answer is answered with the completion page in place too, unless that
page sends the worker back to their platform (views/worker.py ``_done_page``). Where the
classic answer is a redirect that leaves the task (such a completion page, a chat item,
an expired assignment), the in-place answer is ``204`` with the redirect's target in
``X-EvalHub-Redirect``: ``fetch`` would follow a redirect itself and hand the script a
page whose address it cannot show, so the script navigates there instead.

htmx speaks the same idea (``HX-Request``, ``HX-Redirect``); it is not used because its
history keeps snapshots of pages (task items, some private) in localStorage, and its
indicator styles are inline, which the site's Content-Security-Policy refuses.
"""

from functools import wraps

from django.http import HttpResponse
from django.http.response import HttpResponseRedirectBase

REQUEST_HEADER = "X-EvalHub-In-Place"
LOCATION_HEADER = "X-EvalHub-Location"  # the address of the page sent in place
REDIRECT_HEADER = "X-EvalHub-Redirect"


def wants_in_place(request) -> bool:
    return request.headers.get(REQUEST_HEADER) == "1"


def shown_in_place(response, url: str, request):
    """For an in-place post: mark `response` as the page to show in place of the posting
    one, at `url` (the address a reload should open)."""
    if wants_in_place(request):
        response[LOCATION_HEADER] = url
    return response


def answers_in_place(view):
    """A view whose redirects become ``204`` + ``X-EvalHub-Redirect`` for in-place posts."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        if wants_in_place(request) and isinstance(response, HttpResponseRedirectBase):
            redirect = HttpResponse(status=204)
            redirect[REDIRECT_HEADER] = response["Location"]
            return redirect
        return response

    return wrapper
