"""How often one researcher may upload seed conversations (a shared fixed-window counter)."""

from django.conf import settings

from .ratelimit import Outage, allow_key


def allow_seed_upload(user) -> bool:
    """Count one upload by `user` against EVALHUB_SEED_UPLOADS_PER_HOUR (uncounted while
    Redis is down: a logged-in researcher goes on)."""
    return allow_key(
        f"seed-upload:{user.pk}",
        settings.EVALHUB_SEED_UPLOADS_PER_HOUR,
        3600,
        on_outage=Outage.FAIL_OPEN,
    )
