"""Admin pages of the judging app: every model has one, list pages cost the same few
queries whatever the size, runs, rubrics and judgments are records."""

import pytest
from django.apps import apps
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from judging.models import AutomaticJudgment, Judge, JudgeRun, Rubric
from tests import factories
from tests.judging import builders

pytestmark = pytest.mark.django_db

MODELS = [Judge, Rubric, JudgeRun, AutomaticJudgment]


def url(model, action="changelist", *args):
    return reverse(f"admin:judging_{model._meta.model_name}_{action}", args=args)


def populate(n=2):
    for _ in range(n):
        judge = builders.judge(None)
        campaign = builders.ab(2)
        run = JudgeRun.objects.create(
            judge=judge, rubric=builders.default_rubric("ab"), campaign=campaign
        )
        for item in campaign.items.all():
            AutomaticJudgment.objects.create(
                run=run, item=item, status="ok", payload={"choice": "a", "left": "a"}
            )


@pytest.fixture
def superuser(client):
    user = factories.user("boss", staff=True)
    client.force_login(user)
    return user


def test_every_judging_model_has_an_admin():
    models = set(apps.get_app_config("judging").get_models())
    assert models == set(MODELS)
    assert all(model in admin.site._registry for model in models)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_list_search_and_change_page_answer(client, superuser, model):
    populate()
    changelist = client.get(url(model))
    search = client.get(url(model) + "?q=judge")
    change = client.get(url(model, "change", model.objects.first().pk))
    assert (changelist.status_code, search.status_code, change.status_code) == (200, 200, 200)
    assert changelist.context["cl"].result_count == model.objects.count()


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_lists_cost_the_same_queries_with_more_rows(
    client, superuser, model, django_assert_max_num_queries
):
    populate(1)
    with CaptureQueriesContext(connection) as small:
        rows = client.get(url(model)).context["cl"].result_count
    populate(4)
    with django_assert_max_num_queries(len(small.captured_queries)):
        bigger = client.get(url(model)).context["cl"].result_count
    assert bigger > rows or model is Rubric


@pytest.mark.parametrize("model", [Rubric, JudgeRun, AutomaticJudgment], ids=lambda m: m.__name__)
def test_records_are_not_added_changed_or_deleted(client, superuser, model):
    populate(1)
    row = model.objects.first()
    assert client.get(url(model, "add")).status_code == 403
    assert client.post(url(model, "delete", row.pk), {"post": "yes"}).status_code == 403
    assert model.objects.filter(pk=row.pk).exists()
