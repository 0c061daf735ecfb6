"""The models' own rules: a judge's endpoint is its own and speaks OpenAI's protocol; run
settings and rubric versions stay in range in the database too."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from endpoints.models import BotEndpoint
from evalhub.errors import UserInputError
from judging.models import Judge, JudgeRun, Rubric
from tests import factories
from tests.judging import builders

pytestmark = pytest.mark.django_db


def test_a_judge_on_an_evalhub_protocol_endpoint_is_invalid():
    judge = builders.judge(None)
    BotEndpoint.objects.filter(pk=judge.endpoint_id).update(protocol="evalhub")
    judge.refresh_from_db()
    with pytest.raises(ValidationError) as invalid:
        judge.full_clean()
    # limit_choices_to refuses it, and clean() says why
    assert (
        "A judge needs an OpenAI-compatible chat completions endpoint."
        in (invalid.value.message_dict["endpoint"])
    )


def test_a_judge_on_a_systems_endpoint_is_invalid():
    owner = factories.user()
    judge = Judge(slug="j", name="J", owner=owner, endpoint=builders.endpoint(None, owner=owner))
    with pytest.raises(ValidationError) as invalid:
        judge.full_clean()
    assert (
        "A judge has an endpoint of its own, not a system's."
        in (invalid.value.message_dict["endpoint"])
    )


def test_an_endpoint_belongs_to_a_system_or_a_user_never_both_nor_neither():
    owner = factories.user()
    fields = {"protocol": "openai", "url": "https://llm.example.org/v1", "model_name": "m"}
    for owners in ({}, {"system": factories.system(owner=owner), "owner": owner}):
        with pytest.raises(IntegrityError), transaction.atomic():
            BotEndpoint.objects.create(**fields, **owners)
    assert not BotEndpoint.objects.exists()


def test_a_judges_endpoint_is_refused_removal_naming_the_judge():
    judge = builders.judge(None)
    with pytest.raises(UserInputError, match=f"still used by {judge.name}"):
        judge.endpoint.remove()
    assert BotEndpoint.objects.filter(pk=judge.endpoint_id).exists()


def test_deleting_a_user_deletes_their_judges_and_the_judges_endpoints():
    judge = builders.judge(None)
    judge.owner.delete()
    assert not Judge.objects.exists() and not BotEndpoint.objects.exists()


def test_renaming_a_judge_renames_its_endpoint():
    judge = builders.judge(None)
    judge.name = "Renamed judge"
    judge.save()
    assert BotEndpoint.objects.get(pk=judge.endpoint_id).name == "Renamed judge"


def test_deleting_a_judge_deletes_its_own_endpoint():
    judge = builders.judge(None)
    endpoint_pk = judge.endpoint_id
    judge.delete()
    assert not BotEndpoint.objects.filter(pk=endpoint_pk).exists()


@pytest.mark.parametrize(("field", "value"), [("concurrency", 17), ("max_attempts", 0)])
def test_run_settings_out_of_range_are_refused_by_the_database(field, value):
    judge = builders.judge(None)
    with pytest.raises(IntegrityError), transaction.atomic():
        JudgeRun.objects.create(
            judge=judge,
            rubric=builders.default_rubric("ab"),
            campaign=builders.ab(1),
            **{field: value},
        )
    assert not JudgeRun.objects.exists()


def test_a_rubric_version_is_unique_per_kind_and_name():
    rubric = builders.default_rubric("ab")
    with pytest.raises(IntegrityError), transaction.atomic():
        Rubric.objects.create(
            task_kind="ab", name=rubric.name, version=rubric.version, instructions="x"
        )
    assert Rubric.objects.filter(task_kind="ab", name=rubric.name).count() == 1


def test_progress_percent_counts_failed_items_as_finished():
    run = JudgeRun(items_total=8, items_done=3, items_failed=1)
    assert (run.items_finished, run.percent) == (4, 50)
    assert JudgeRun(items_total=0, status="done").percent == 100
