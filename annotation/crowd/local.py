"""Participants from a shared link: Prolific-style ids, a generic `?worker=`, or a login."""

import re

from .base import Arrival, CrowdProvider

# External ids become database keys and appear in exports: keep them plain.
SAFE_ID = re.compile(r"^[A-Za-z0-9_.:@-]{1,120}$")


class LocalProvider(CrowdProvider):
    key = "local"

    def identify(self, request) -> Arrival | None:
        params = request.GET
        pid = params.get("PROLIFIC_PID", "").strip()
        if pid and SAFE_ID.match(pid):
            return Arrival(
                "prolific",
                pid,
                {
                    "study_id": params.get("STUDY_ID", ""),
                    "session_id": params.get("SESSION_ID", ""),
                },
            )
        worker = params.get("worker", "").strip()
        if worker and SAFE_ID.match(worker):
            return Arrival("local", f"link:{worker}")
        if request.user.is_authenticated:
            return Arrival("local", f"user:{request.user.username}")
        return None
