"""Rubric versions: a used rubric never changes; a change makes the next version."""

import pytest

from evalhub import limits
from judging import rubric_versions
from judging.defaults import DEFAULT_NAME, install_default_rubrics
from judging.models import JudgeRun, Rubric
from judging.rubrics import rubric_module
from tests.judging import builders

pytestmark = pytest.mark.django_db

TEXT = "$context | $response_1 | $response_2 | $answer_format"


def test_a_new_name_starts_at_version_one_and_a_known_name_goes_on():
    first = rubric_versions.create(task_kind="ab", name="mine", instructions=TEXT)
    second = rubric_versions.create(task_kind="ab", name="mine", instructions=TEXT + "!")
    other_kind = rubric_versions.create(
        task_kind="comparative",
        name="mine",
        instructions="$conversation_1 $conversation_2 $dimensions $answer_format",
    )
    assert (first.version, second.version, other_kind.version) == (1, 2, 1)


def test_an_unused_rubric_is_revised_in_place():
    rubric = rubric_versions.create(task_kind="ab", name="mine", instructions=TEXT)
    revised = rubric_versions.revise(rubric, instructions=TEXT + " Be fair.")
    assert revised.pk == rubric.pk and Rubric.objects.get(pk=rubric.pk).version == 1
    assert Rubric.objects.get(pk=rubric.pk).instructions == TEXT + " Be fair."


def test_a_used_rubric_is_revised_as_the_next_version():
    rubric = rubric_versions.create(task_kind="ab", name="mine", instructions=TEXT)
    JudgeRun.objects.create(judge=builders.judge(None), rubric=rubric, campaign=builders.ab(1))
    revised = rubric_versions.revise(rubric, instructions=TEXT + " Be fair.")
    assert revised.pk != rubric.pk and revised.version == 2
    assert Rubric.objects.get(pk=rubric.pk).instructions == TEXT


def test_a_used_rubric_refuses_a_direct_change():
    rubric = rubric_versions.create(task_kind="ab", name="mine", instructions=TEXT)
    JudgeRun.objects.create(judge=builders.judge(None), rubric=rubric, campaign=builders.ab(1))
    rubric.instructions = "something else"
    with pytest.raises(rubric_versions.RubricFrozen, match="used by a judge run"):
        rubric.save()
    assert Rubric.objects.get(pk=rubric.pk).instructions == TEXT


def test_a_kind_without_judges_is_refused_naming_the_field():
    with pytest.raises(rubric_versions.RubricInvalid) as refused:
        rubric_versions.create(task_kind="chat", name="x", instructions=TEXT)
    assert refused.value.problems[0].field == "task_kind"
    assert not Rubric.objects.filter(name="x").exists()


def test_installing_the_defaults_again_changes_nothing():
    builders.default_rubric("ab")
    before = Rubric.objects.filter(name=DEFAULT_NAME).count()
    assert install_default_rubrics() == []
    assert Rubric.objects.filter(name=DEFAULT_NAME).count() == before == 6  # five kinds, arenas


def test_a_changed_shipped_text_becomes_the_next_default_version(monkeypatch):
    old = builders.default_rubric("likert")
    monkeypatch.setattr(rubric_module("likert"), "DEFAULT", old.instructions + "\nBe strict.")
    [created] = install_default_rubrics()
    assert (created.task_kind, created.version) == ("likert", old.version + 1)
    assert Rubric.objects.get(pk=old.pk).instructions == old.instructions


def test_instructions_over_their_limit_are_refused_by_the_service():
    long = TEXT + "x" * limits.INSTRUCTIONS_CHARS
    with pytest.raises(rubric_versions.RubricInvalid) as refused:
        rubric_versions.create(task_kind="ab", name="long", instructions=long)
    (problem,) = refused.value.shown
    assert problem.field == "instructions"
    assert problem.message == (
        f"The instructions have {len(long):,} characters; at most "
        f"{limits.INSTRUCTIONS_CHARS:,} are allowed."
    )
    assert not Rubric.objects.filter(name="long").exists()
