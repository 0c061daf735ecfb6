"""The API's request rates: DRF's throttles, configured in REST_FRAMEWORK (evalhub/settings.py)
from the declared settings (EVALHUB_API_*).

- `UserRateThrottle` ("user"): every request, per account (signed out: per address);
- `AnonRateThrottle` ("anon"): every request signed out, per address;
- `ScopedRateThrottle`: the writes a view names in `throttle_scopes`, keyed by its action
  (a viewset's "create", "submit") or its lower-case method (an APIView's "post"), per
  account or address: "creations", "uploads", "token".

A refused request is DRF's `Throttled`, answered 429 with `Retry-After` in the one error
shape (evalhub/api/exceptions.py). The counts live in Django's default cache, the project's
(Redis in production, shared by every web process).

Two changes to DRF's classes. The rate is read when a request is counted, not once when DRF
is imported, so that a change of settings (a test's) takes effect. And a cache that cannot be
reached lets the request through, logged: a rate is a brake on abuse, and with Redis down
every API call would otherwise be a 500.
"""

import logging

from rest_framework import throttling
from rest_framework.settings import api_settings

from evalhub.cache import is_redis_failure

logger = logging.getLogger(__name__)


class CurrentRates:
    def get_rate(self):
        # DRF's own raises ImproperlyConfigured for a scope with no rate; so does this.
        self.THROTTLE_RATES = api_settings.DEFAULT_THROTTLE_RATES
        return super().get_rate()

    def allow_request(self, request, view):
        try:
            return throttling.SimpleRateThrottle.allow_request(self, request, view)
        except Exception as error:
            if not is_redis_failure(error):
                raise
            logger.warning("API rate %r not counted: the cache is unreachable", self.scope)
            return True


class UserRateThrottle(CurrentRates, throttling.UserRateThrottle):
    pass


class AnonRateThrottle(CurrentRates, throttling.AnonRateThrottle):
    pass


class ScopedRateThrottle(CurrentRates, throttling.ScopedRateThrottle):
    def allow_request(self, request, view):
        # DRF's, with the scope looked up per action or method (`scope_of`) instead of in
        # the view's one `throttle_scope`.
        self.scope = scope_of(request, view)
        if self.scope is None:
            return True
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)


SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def scope_of(request, view) -> str | None:
    """The scope a write to `view` counts against, or None (reads have no scope)."""
    if request.method in SAFE_METHODS:
        return None
    scopes = getattr(view, "throttle_scopes", {})
    action = getattr(view, "action", None) or request.method.lower()
    return scopes.get(action)
