"""What a system's profile page shows."""

import uuid
from dataclasses import dataclass

from django.db.models import QuerySet

from .models import Submission, System


@dataclass
class SystemProfile:
    submissions: list[Submission]
    selected: Submission | None
    responses: QuerySet


def system_profile(system: System, submission_public_id: str | None) -> SystemProfile:
    submissions = list(
        system.submissions.select_related("prompt_set").prefetch_related("baselines")
    )
    selected = submissions[0] if submissions else None
    wanted = parse_uuid(submission_public_id)
    selected = next((s for s in submissions if s.public_id == wanted), selected)
    responses = (
        selected.responses.select_related("prompt").order_by("prompt__position")
        if selected
        else system.submissions.none()
    )
    return SystemProfile(submissions=submissions, selected=selected, responses=responses)


def parse_uuid(value: str | None) -> uuid.UUID | None:
    try:
        return uuid.UUID(value) if value else None
    except ValueError:
        return None
