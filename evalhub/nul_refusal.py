"""Where a NUL character from a person is refused (evalhub/text.py says why refused, and
lists the other boundaries: the API's bodies, uploads, models' replies).

- `RefuseNul`, a middleware: a NUL in the path or the query string of any request, page
  or API, or in a field of a page's posted form, is a 400 before any view runs. It is the
  one place that sees what no form does: slugs in paths (the API's routers take any
  character but "/" and "."), query parameters that views read or filter by (the admin's
  search among them), posted values views read without a form (a chat message), and the
  values a ModelChoiceField would look up in the database before any validator runs.
  A page's form is read as the CSRF check reads it; an API request's body is left to the
  API's parsers (evalhub/api/parsers.py), which read it as JSON too.
- `RefusesNul`, the base of every form (tests/evalhub/test_nul_refusal.py holds every form
  class of the project and every admin's form to it): a value a form decodes from text
  (a JSONField, a task config written as JSON) holds the NULs of its "\\u0000" escapes,
  which were no NUL in the text the middleware saw. The base refuses them next to the
  field.
"""

from django.http import HttpResponseBadRequest, JsonResponse
from django.template.loader import render_to_string

from .api.handlers import is_api
from .errors import Problem, UserInputError
from .text import find_nul, nul_refused, shown

FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def _field_problem(fields) -> Problem | None:
    """The first field of a QueryDict whose name or a value holds a NUL, as a Problem."""
    for name, values in fields.lists():
        if find_nul([name, *values]) is not None:
            return Problem(field=shown(name), message=nul_refused(name))
    return None


def nul_problem(request) -> Problem | None:
    """What in the request's URL, or in a page's posted form, holds a NUL; None if nothing."""
    if find_nul(request.path) is not None:
        return Problem(message=nul_refused(subject="The address"))
    problem = _field_problem(request.GET)
    if problem is None and _page_form(request):
        problem = _field_problem(request.POST)
    return problem


def _page_form(request) -> bool:
    return request.method == "POST" and request.content_type in FORMS and not is_api(request)


def _wants_json(request) -> bool:
    """The API, and a page's script asking for JSON (the chat's)."""
    if is_api(request):
        return True
    preferred = request.get_preferred_type(["text/html", "application/json"])
    return preferred == "application/json"


class RefuseNul:
    """A 400 for a NUL in a request's URL or page form: in the API's one error shape to the
    API and to scripts that ask for JSON, as a page to a browser."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        problem = nul_problem(request)
        if problem is None:
            return self.get_response(request)
        if _wants_json(request):
            return JsonResponse(UserInputError([problem]).as_dict(), status=400)
        page = render_to_string("refused.html", {"message": problem.message}, request=request)
        return HttpResponseBadRequest(page)


class RefusesNul:
    """Mixed into every form before Django's form class: `class F(RefusesNul, forms.Form)`.
    A cleaned value holding a NUL (decoded from a field's text) is that field's error."""

    def full_clean(self):
        super().full_clean()
        for name, value in list(getattr(self, "cleaned_data", {}).items()):
            where = find_nul(value)
            if where is not None:
                self.add_error(name, nul_refused(where))
