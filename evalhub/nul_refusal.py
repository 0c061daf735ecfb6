"""Where a NUL character from a person is refused (evalhub/text.py says why refused):
the URL of every request, and every form. The API's request bodies are refused by its
parsers (evalhub/api/parsers.py), uploaded files line by line by the importers
(evalhub/importers/problems.py).

- `RefuseNulInUrls`, a middleware: a NUL in the path or the query string of any request,
  page or API, is a 400 before any view runs. It reads nothing but the URL (never a body:
  uploads and the API's parsers read those), and it covers what no form sees: slugs in
  paths (the API's routers take any character but "/" and "."), query parameters that
  views read or filter by, the admin's search.
- `RefusesNul`, the base of every form (tests/evalhub/test_nul_refusal.py holds every form
  class of the project and every admin's form to it). Django's CharField already refuses a
  NUL, but a ModelChoiceField looks its text up in the database first (a 500 on
  PostgreSQL), and a value decoded from JSON text (a JSONField, a task config) holds the
  NULs of its "\\u0000" escapes, which no field sees. The base refuses a NUL in a field's
  submitted value before the field reads it, and one inside a cleaned value (a decoded JSON
  document) after, each next to its field.
"""

from django import forms
from django.http import HttpResponseBadRequest, JsonResponse
from django.template.loader import render_to_string

from .api.handlers import is_api
from .errors import Problem, UserInputError
from .text import find_nul, nul_refused, shown


def _url_problem(request) -> Problem | None:
    """What in the request's URL holds a NUL, as a Problem, or None."""
    if find_nul(request.path) is not None:
        return Problem(message=nul_refused(subject="The address"))
    for name, values in request.GET.lists():
        if find_nul([name, *values]) is not None:
            return Problem(field=shown(name), message=nul_refused(name))
    return None


class RefuseNulInUrls:
    """A 400 for a NUL in the path or the query string: in the API's one error shape under
    /api/, as a page elsewhere."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        problem = _url_problem(request)
        if problem is None:
            return self.get_response(request)
        if is_api(request):
            return JsonResponse(UserInputError([problem]).as_dict(), status=400)
        page = render_to_string("refused.html", {"message": problem.message}, request=request)
        return HttpResponseBadRequest(page)


def _refused(message: str):
    def clean(*args, **kwargs):
        raise forms.ValidationError(message, code="null_characters_not_allowed")

    return clean


class RefusesNul:
    """Mixed into every form before Django's form class: `class F(RefusesNul, forms.Form)`.
    A NUL anywhere in a field's value is that field's error, "The value holds a NUL
    character ...", and nothing of it reaches the database."""

    def full_clean(self):
        refused = self._fields_sent_with_nul() if self.is_bound else []
        # The field fails as a field that refuses its value does; its own clean, which may
        # look the value up in the database, is not called. Only this form's copy of the
        # field is touched, and only for this validation.
        for name in refused:
            self.fields[name].clean = _refused(nul_refused())
        try:
            super().full_clean()
        finally:
            for name in refused:
                del self.fields[name].clean
        for name, value in list(getattr(self, "cleaned_data", {}).items()):
            where = find_nul(value)
            if where is not None:
                self.add_error(name, nul_refused(where))

    def _fields_sent_with_nul(self) -> list[str]:
        names = []
        for name, field in self.fields.items():
            if field.disabled:
                continue  # Django reads no submitted value for it
            value = field.widget.value_from_datadict(self.data, self.files, self.add_prefix(name))
            if find_nul(value) is not None:
                names.append(name)
        return names
