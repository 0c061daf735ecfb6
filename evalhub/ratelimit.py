"""A fixed-window counter per client address, or per any key, in the cache (Redis in
production, so every web process shares it; local memory embedded). For actions that are
not logins, which django-axes already limits: sign-ups, new crowd identities, seed uploads,
chat messages.

Each caller declares what an outage of the cache means for its limit (`on_outage`):
`FAIL_CLOSED` for limits on new identities (a sign-up, a new crowd identity), which are
refused with a 503 page while the limit cannot be counted; `FAIL_OPEN` for limits on
people already known (a logged-in researcher, a worker holding an assignment), who go on
uncounted. Both log a warning (evalhub/cache.py).
"""

from enum import Enum

from django.core.cache import cache

from .cache import CacheDown, call
from .client_address import client_address
from .outages import ServiceUnavailable


class Outage(Enum):
    FAIL_OPEN = "allowed uncounted"
    FAIL_CLOSED = "refused with 503"


class LimitUnavailable(ServiceUnavailable):
    """A limit that fails closed could not be counted."""


UNAVAILABLE = (
    "We cannot take anyone new just now: a service EvalHub needs is down. Please try again "
    "in a few minutes. If you had already started, your work is saved: go on from your link."
)


def allow(request, action: str, limit: int, window_seconds: int, *, on_outage: Outage) -> bool:
    """Count this request against ``limit`` per ``window_seconds`` for its client address."""
    return allow_key(
        f"{action}:{client_address(request)}", limit, window_seconds, on_outage=on_outage
    )


def allow_key(name: str, limit: int, window_seconds: int, *, on_outage: Outage) -> bool:
    """Count one more event under ``name`` against ``limit`` per ``window_seconds``
    (for limits shared by every address, such as one campaign's newcomers)."""
    use = f"the {name.split(':', 1)[0]} limit"
    try:
        count = call(
            use, f"requests are {on_outage.value}", _count, f"ratelimit:{name}", window_seconds
        )
    except CacheDown as down:
        if on_outage is Outage.FAIL_CLOSED:
            raise LimitUnavailable(UNAVAILABLE) from down
        return True
    return count <= limit


def _count(key: str, window_seconds: int) -> int:
    cache.add(key, 0, timeout=window_seconds)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr: this is the window's first
        cache.set(key, 1, timeout=window_seconds)
        return 1
