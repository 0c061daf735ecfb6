"""Text limits (evalhub/limits.py, evalhub/fields.py): every text field a user writes has a
maximum length that the model's validation, its forms and the API's serializers enforce."""

import pytest
from django.apps import apps
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator
from django.db import models

from evalhub import limits
from evalhub.forms import SystemForm
from evalhub.models import System
from tests import factories

PROJECT_APPS = {
    "evalhub",
    "endpoints",
    "webhooks",
    "annotation",
    "tournaments",
    "judging",
    "analysis",
}

# Text fields only EvalHub writes (errors it caught, a judge's raw reply already cut to
# EVALHUB_JUDGE_MAX_REPLY_CHARS): no user types them.
WRITTEN_BY_EVALHUB = {
    "annotation.CrowdAction.error",
    "webhooks.Delivery.body",
    "judging.JudgeRun.last_error",
    "judging.AutomaticJudgment.raw_text",
    "judging.AutomaticJudgment.error",
    "tournaments.PlannedDialogue.last_error",
    "analysis.AnalysisRun.error",
    "analysis.AnalysisRun.stability_error",
}


def text_fields():
    for model in apps.get_models():
        if model._meta.app_label not in PROJECT_APPS:
            continue
        for field in model._meta.get_fields():
            if isinstance(field, models.TextField):
                yield f"{model._meta.label}.{field.name}", field


def test_every_text_field_a_user_writes_has_a_limit_its_validation_enforces():
    unbounded = [
        name
        for name, field in text_fields()
        if name not in WRITTEN_BY_EVALHUB
        and not (
            field.max_length
            and any(
                isinstance(v, MaxLengthValidator) and v.limit_value == field.max_length
                for v in field.validators
            )
        )
    ]
    assert unbounded == []


def test_the_list_of_fields_evalhub_writes_names_only_text_fields_that_exist():
    assert {name for name, _ in text_fields()} >= WRITTEN_BY_EVALHUB


@pytest.mark.django_db
def test_the_model_refuses_a_description_over_its_limit():
    system = System(slug="long-bot", name="Long", description="x" * (limits.DESCRIPTION_CHARS + 1))
    with pytest.raises(ValidationError) as refused:
        system.full_clean()
    assert set(refused.value.message_dict) == {"description"}
    assert System.objects.count() == 0


@pytest.mark.django_db
def test_a_model_form_inherits_the_limit():
    form = SystemForm(
        {
            "slug": "long-bot",
            "name": "Long",
            "visibility": "public",
            "description": "x" * (limits.DESCRIPTION_CHARS + 1),
        }
    )
    assert not form.is_valid()
    assert list(form.errors) == ["description"]
    # The browser is told too.
    assert f'maxlength="{limits.DESCRIPTION_CHARS}"' in str(form["description"])


@pytest.mark.django_db
def test_a_description_at_its_limit_is_stored():
    owner = factories.user("writer")
    form = SystemForm(
        {
            "slug": "full-bot",
            "name": "Full",
            "visibility": "public",
            "description": "x" * limits.DESCRIPTION_CHARS,
        }
    )
    assert form.is_valid(), form.errors
    form.instance.owner = owner
    assert len(form.save().description) == limits.DESCRIPTION_CHARS


def test_the_reference_lists_every_limit_with_its_value():
    table = limits.reference_markdown()
    for name in limits.APPLIES_TO:
        assert f"| `{name}` | {getattr(limits, name):,} |" in table
