"""Rubrics are frozen once a run used them: a change makes a new version.

A run's automatic judgments mean "what this judge said when asked this way"; a rubric
edited after the run would make them refer to a prompt nobody sent. So, as partner sets
do (tournaments/partner_sets.py), a used rubric (referenced by any run) is never changed
in place: `revise` stores the change as version n + 1 under the same (task kind, name) and
leaves version n to the runs that used it, and a pre_save signal (judging/signals.py)
refuses any direct change to a used rubric. New runs pick any version; the forms offer
each name's latest first.
"""

from django.db import transaction
from django.db.models import Max

from evalhub import limits
from evalhub.errors import UserInputError
from evalhub.quotas import check_quota

from .models import RUBRIC_VERSION_MAX, Rubric
from .rubrics import rubric_kinds
from .rubrics.common import check_instructions

FROZEN_FIELDS = ("task_kind", "name", "version", "instructions")


class RubricFrozen(UserInputError):
    """A run used this rubric, so it is not changed: revise it instead."""


class RubricInvalid(UserInputError):
    pass


def is_used(rubric: Rubric) -> bool:
    return rubric.pk is not None and rubric.runs.exists()


def next_version(task_kind: str, name: str) -> int:
    latest = Rubric.objects.filter(task_kind=task_kind, name=name).aggregate(v=Max("version"))
    return (latest["v"] or 0) + 1


def check(task_kind: str, instructions: str) -> None:
    if task_kind not in rubric_kinds():
        raise RubricInvalid(
            f"Judges do not answer {task_kind!r} tasks; they answer {', '.join(rubric_kinds())}.",
            field="task_kind",
        )
    if len(instructions) > limits.INSTRUCTIONS_CHARS:
        raise RubricInvalid(
            f"The instructions have {len(instructions):,} characters; at most "
            f"{limits.INSTRUCTIONS_CHARS:,} are allowed.",
            field="instructions",
        )
    problems = check_instructions(task_kind, instructions)
    if problems:
        raise RubricInvalid(" ".join(problems), field="instructions")


@transaction.atomic
def create(*, task_kind: str, name: str, instructions: str, owner=None) -> Rubric:
    """A new rubric, or the next version of an existing (task kind, name), written by
    `owner` (within their quota of rubrics)."""
    check(task_kind, instructions)
    check_quota(owner, Rubric)
    version = next_version(task_kind, name)
    if version > RUBRIC_VERSION_MAX:
        raise RubricInvalid(f"{name} has reached {RUBRIC_VERSION_MAX} versions.", field="name")
    return Rubric.objects.create(
        task_kind=task_kind, name=name, version=version, instructions=instructions, owner=owner
    )


@transaction.atomic
def revise(rubric: Rubric, *, instructions: str, owner=None) -> Rubric:
    """The rubric with new instructions: in place while no run used it, else as a new
    version (returned; the used one stays as it was)."""
    check(rubric.task_kind, instructions)
    if instructions == rubric.instructions:
        return rubric
    if is_used(rubric):
        return create(
            task_kind=rubric.task_kind,
            name=rubric.name,
            instructions=instructions,
            owner=owner or rubric.owner,
        )
    rubric.instructions = instructions
    rubric.save(update_fields=["instructions"])
    return rubric


def refuse_change_when_used(rubric: Rubric) -> None:
    if is_used(rubric):
        raise RubricFrozen(
            f"{rubric} is used by a judge run, so it cannot change; save the change as a "
            "new version instead."
        )
