"""A fixed-window counter per client address in the cache (Redis in production, so every
web process shares it; local memory embedded). For actions that are not logins, which
django-axes already limits: sign-ups, new crowd identities."""

from django.core.cache import cache

from .client_address import client_address


def allow(request, action: str, limit: int, window_seconds: int) -> bool:
    """Count this request against ``limit`` per ``window_seconds`` for its address."""
    return allow_key(f"{action}:{client_address(request)}", limit, window_seconds)


def allow_key(name: str, limit: int, window_seconds: int) -> bool:
    """Count one more event under ``name`` against ``limit`` per ``window_seconds``
    (for limits shared by every address, such as one campaign's newcomers)."""
    key = f"ratelimit:{name}"
    cache.add(key, 0, timeout=window_seconds)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr: this is the window's first
        cache.set(key, 1, timeout=window_seconds)
        count = 1
    return count <= limit
