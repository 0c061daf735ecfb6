"""What every paying provider needs: the public task URL and a campaign's settings."""

from urllib.parse import urlencode

from django.conf import settings
from django.urls import reverse

from .base import CrowdError


def public_url(path: str, params: dict | None = None) -> str:
    """An absolute HTTPS URL under EVALHUB_PUBLIC_URL (platforms refuse anything else)."""
    base = settings.EVALHUB_PUBLIC_URL
    if not base.startswith("https://"):
        raise CrowdError(
            "EVALHUB_PUBLIC_URL must be the HTTPS address workers reach "
            f"(it is {base!r}); platforms send workers there."
        )
    query = f"?{urlencode(params, safe='{}%')}" if params else ""
    return f"{base}{path}{query}"


def start_path(campaign) -> str:
    return reverse("annotation:start", args=[campaign.slug])
