"""The rubrics EvalHub ships: "default", one per kind, from each judging/rubrics module.

`install_default_rubrics` stores a kind's `DEFAULT` text as version 1, and as the next
version whenever the shipped text changes (the versions runs used stay). The data
migration 0002 and `manage.py install_default_rubrics` both call it; it is idempotent.
"""

from .rubrics import RUBRIC_KINDS, rubric_module

DEFAULT_NAME = "default"


def install_default_rubrics(rubric_model=None) -> list:
    """The default rubrics created (none when every kind's latest is the shipped text)."""
    if rubric_model is None:
        from .models import Rubric as rubric_model
    created = []
    for kind in RUBRIC_KINDS:
        text = rubric_module(kind).DEFAULT
        latest = (
            rubric_model.objects.filter(task_kind=kind, name=DEFAULT_NAME)
            .order_by("-version")
            .first()
        )
        if latest is not None and latest.instructions == text:
            continue
        created.append(
            rubric_model.objects.create(
                task_kind=kind,
                name=DEFAULT_NAME,
                version=(latest.version + 1) if latest else 1,
                instructions=text,
            )
        )
    return created
