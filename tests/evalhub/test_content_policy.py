"""The CSP middleware that keeps built headers (evalhub/content_policy.py) answers what
django-csp's own middleware answers."""

import pytest
from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CSPMiddleware
from django.http import HttpResponse
from django.test import RequestFactory, override_settings

from evalhub import content_policy
from evalhub.content_policy import CachedCSPMiddleware


@pytest.fixture(autouse=True)
def empty_cache():
    content_policy._built.clear()
    yield
    content_policy._built.clear()


def respond(middleware_class, *, use_nonce=False, **overrides):
    """The response of a view that sets `overrides` (e.g. _csp_replace=...) on its response,
    through the middleware; with the request's nonce read by the view if `use_nonce`."""
    nonces = []

    def view(request):
        if use_nonce:
            nonces.append(str(request.csp_nonce))
        response = HttpResponse("page")
        for name, value in overrides.items():
            setattr(response, name, value)
        return response

    request = RequestFactory().get("/somewhere/")
    return middleware_class(view)(request), nonces


OVERRIDES = [
    {},
    {"_csp_replace": {"frame-ancestors": ["'self'", "https://workersandbox.mturk.com"]}},
    {"_csp_update": {"form-action": ["https://www.mturk.com/mturk/externalSubmit"]}},
    {"_csp_config": {"default-src": ["'none'"], "img-src": "data:"}},
    {"_csp_replace": {"frame-ancestors": None, "upgrade-insecure-requests": True}},
]


@pytest.mark.parametrize("overrides", OVERRIDES)
def test_the_kept_header_is_django_csps_header(overrides):
    expected, _ = respond(CSPMiddleware, **overrides)
    first, _ = respond(CachedCSPMiddleware, **overrides)
    again, _ = respond(CachedCSPMiddleware, **overrides)
    assert first[HEADER] == expected[HEADER] == again[HEADER]
    assert len(policies()) == 1


def policies():
    """The kept headers of the policy (the report-only one, unset here, is kept as "")."""
    return {key: header for key, header in content_policy._built.items() if not key[0]}


def test_overrides_key_the_kept_headers():
    plain, _ = respond(CachedCSPMiddleware)
    framed, _ = respond(CachedCSPMiddleware, _csp_replace={"frame-ancestors": ["'self'"]})
    other, _ = respond(CachedCSPMiddleware, _csp_replace={"frame-ancestors": ["https://a.test"]})
    assert "frame-ancestors 'none'" in plain[HEADER]
    assert "frame-ancestors 'self'" in framed[HEADER]
    assert "frame-ancestors https://a.test" in other[HEADER]
    assert len(policies()) == 3


def test_a_page_that_used_its_nonce_gets_its_own_nonce_and_nothing_is_kept():
    first, (nonce,) = respond(CachedCSPMiddleware, use_nonce=True)
    second, (other_nonce,) = respond(CachedCSPMiddleware, use_nonce=True)
    assert nonce != other_nonce
    assert f"'nonce-{nonce}'" in first[HEADER] and f"'nonce-{other_nonce}'" in second[HEADER]
    assert content_policy._built == {}


def test_overrides_of_another_shape_are_built_every_time_as_django_csp_builds_them():
    overrides = {"_csp_replace": {"frame-ancestors": {"https://b.test", "https://a.test"}}}
    expected, _ = respond(CSPMiddleware, **overrides)
    response, _ = respond(CachedCSPMiddleware, **overrides)
    assert response[HEADER] == expected[HEADER]
    assert "frame-ancestors https://a.test https://b.test" in response[HEADER]
    assert policies() == {}


def test_a_changed_policy_setting_is_not_answered_from_kept_headers():
    before, _ = respond(CachedCSPMiddleware)
    policy = {"DIRECTIVES": {"default-src": ["'none'"]}}
    with override_settings(
        CONTENT_SECURITY_POLICY=policy, CONTENT_SECURITY_POLICY_REPORT_ONLY=policy
    ):
        during, _ = respond(CachedCSPMiddleware)
    after, _ = respond(CachedCSPMiddleware)
    assert during[HEADER] == during[HEADER_REPORT_ONLY] == "default-src 'none'"
    assert before[HEADER] == after[HEADER] != during[HEADER]
    assert HEADER_REPORT_ONLY not in after


def test_a_response_with_its_own_header_or_exempt_keeps_it():
    def view(request):
        response = HttpResponse("file")
        response[HEADER] = "default-src 'none'; sandbox"
        return response

    response = CachedCSPMiddleware(view)(RequestFactory().get("/download/"))
    assert response[HEADER] == "default-src 'none'; sandbox"
    exempt, _ = respond(CachedCSPMiddleware, _csp_exempt=True)
    assert HEADER not in exempt


def test_the_nonce_cannot_be_asked_for_once_the_header_is_written():
    request = RequestFactory().get("/somewhere/")
    CachedCSPMiddleware(lambda request: HttpResponse("page"))(request)
    with pytest.raises(Exception, match="not available after the CSP header"):
        str(request.csp_nonce)
