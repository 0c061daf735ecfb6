"""Crowd providers move people and money; they never own data. `get_provider(key)`."""

from .base import Arrival, CrowdProvider
from .local import LocalProvider
from .mturk import MTurkProvider
from .prolific import ProlificProvider

PROVIDERS: dict[str, CrowdProvider] = {
    "local": LocalProvider(),
    "mturk": MTurkProvider(),
    "prolific": ProlificProvider(),
}


def get_provider(key: str) -> CrowdProvider:
    """The provider plug-in for a campaign; unknown or not yet installed ones fall back to
    the local link, which every campaign also offers."""
    return PROVIDERS.get(key, PROVIDERS["local"])


__all__ = ["Arrival", "CrowdProvider", "get_provider", "PROVIDERS"]
