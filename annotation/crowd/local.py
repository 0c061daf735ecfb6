"""Participants from a shared link: a generic `?worker=` id, or a login.

A platform's own parameters (Prolific's PROLIFIC_PID, MTurk's workerId) are that
platform's provider's to read (prolific.py, mturk.py): a campaign takes them only when it
is on that platform, so a shared link's campaign cannot be entered with a made-up
PROLIFIC_PID when it takes no `?worker=` ids.
"""

import re

from django.utils.translation import gettext as _

from .base import Arrival, BadArrival, CrowdProvider

# External ids become database keys and appear in exports: keep them plain.
SAFE_ID = re.compile(r"^[A-Za-z0-9_.:@-]{1,120}$")

# Parameters that only a crowd platform adds to a link, by the platform that adds them.
PLATFORM_PARAMS = {"PROLIFIC_PID": "Prolific", "workerId": "MTurk"}


def refuse_other_platforms(request, own: str | None = None) -> None:
    """BadArrival when the link carries another platform's participant parameter."""
    for param, platform in PLATFORM_PARAMS.items():
        if platform != own and request.GET.get(param, "").strip():
            raise BadArrival(
                _(
                    "This campaign is not on %(platform)s: its links take no %(param)s. Use "
                    "the link your study or your invitation gave you."
                )
                % {"platform": platform, "param": param}
            )


class LocalProvider(CrowdProvider):
    key = "local"

    def identify(self, request) -> Arrival | None:
        refuse_other_platforms(request)
        return self.identify_on_link(request)

    @staticmethod
    def identify_on_link(request) -> Arrival | None:
        """Whoever the shared link names (`?worker=`) or the logged-in account."""
        worker = request.GET.get("worker", "").strip()
        if worker and SAFE_ID.match(worker):
            return Arrival("local", f"link:{worker}")
        if request.user.is_authenticated:
            return Arrival("local", f"user:{request.user.username}")
        return None
