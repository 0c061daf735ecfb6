"""How much one account may own, and upload a day: the per-user quotas, checked in one place.

Each quota is a declared setting (evalhub/config.py, "Quotas and API rates"). Pages and the
API call `check_quota(user, Model)` before they create a row, and `count_upload(user)` before
they read an uploaded file; both raise `QuotaExceeded`, a `UserInputError`, which the API
answers in its one error shape (400 for a count, 429 with Retry-After for the day's uploads)
and pages show with `show_on_page`. Staff are exempt: they curate for everybody.

Two requests at the same instant may both pass a count check and overshoot a quota by one;
the API's throttles (evalhub/api/throttles.py) keep such bursts small, and a quota is a
bound on abuse, not an invoice.

Quotas are keyed by model label, so this module names the apps above it only in strings,
as INSTALLED_APPS does (it imports none of them).
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db.models import Q

from .errors import UserInputError
from .permissions import is_staff
from .ratelimit import Outage, allow_key


@dataclass(frozen=True)
class Quota:
    setting: str  # the declared setting holding the limit
    # The lookups from the model to the user who owns a row (any of them).
    owner: tuple[str, ...]
    noun: str  # plural, for the message


QUOTAS = {
    "evalhub.System": Quota("EVALHUB_QUOTA_SYSTEMS", ("owner",), "systems"),
    "endpoints.BotEndpoint": Quota(
        # A system's endpoints and the user's own (judges' models).
        "EVALHUB_QUOTA_ENDPOINTS",
        ("system__owner", "owner"),
        "bot endpoints",
    ),
    "tournaments.Tournament": Quota("EVALHUB_QUOTA_TOURNAMENTS", ("owner",), "tournaments"),
    "judging.Rubric": Quota("EVALHUB_QUOTA_RUBRICS", ("owner",), "rubrics"),
    "annotation.Campaign": Quota("EVALHUB_QUOTA_CAMPAIGNS", ("owner",), "campaigns"),
    "webhooks.Subscription": Quota("EVALHUB_QUOTA_WEBHOOKS", ("owner",), "webhook subscriptions"),
}
UPLOADS_SETTING = "EVALHUB_QUOTA_UPLOADS_PER_DAY"


class QuotaExceeded(UserInputError):
    """The user has reached a quota. `status_code` is what the API answers: 400 for a count
    (deleting something, or staff, is the way on), 429 for the day's uploads, with
    `retry_after` seconds until the next day (UTC)."""

    def __init__(self, message: str, *, status_code: int = 400, retry_after: int | None = None):
        super().__init__(message)
        self.status_code = status_code
        self.retry_after = retry_after


def exempt(user) -> bool:
    """Staff, and work no account asks for (a command, the demo loader, a migration)."""
    return user is None or not user.is_authenticated or is_staff(user)


def check_quota(user, model) -> None:
    """Refuse a new `model` row for `user` when they already own as many as its quota allows."""
    if exempt(user):
        return
    quota = QUOTAS[model._meta.label]
    limit = getattr(settings, quota.setting)
    owns = Q()
    for lookup in quota.owner:
        owns |= Q(**{lookup: user})
    owned = model._default_manager.filter(owns).count()
    if owned >= limit:
        raise QuotaExceeded(
            f"You have {owned:,} {quota.noun}, the most one account may have "
            f"({quota.setting}={limit:,}). Remove one, or ask staff to raise the quota."
        )


def count_upload(user, now: datetime | None = None) -> None:
    """Count one upload by `user` against their uploads of the day (UTC); refuse it past the
    quota. Every attempt counts, a refused file too: the quota bounds the work uploads cost."""
    if exempt(user):
        return
    now = now or datetime.now(UTC)
    limit = getattr(settings, UPLOADS_SETTING)
    # Uploads are by signed-in researchers: while the cache is down they go on, uncounted.
    key = f"uploads:{user.pk}:{now.date().isoformat()}"
    if allow_key(key, limit, 86_400, on_outage=Outage.FAIL_OPEN):
        return
    tomorrow = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), UTC)
    wait = max(1, int((tomorrow - now).total_seconds()))
    raise QuotaExceeded(
        f"You have uploaded {limit:,} files today, the most one account may "
        f"({UPLOADS_SETTING}={limit:,}); try again after midnight UTC.",
        status_code=429,
        retry_after=wait,
    )
