"""Admin pages of the judging app: every model has one, list pages cost the same few
queries whatever the size, runs, rubrics and judgments are records."""

import pytest

from judging.models import AutomaticJudgment, Judge, JudgeRun, Rubric
from tests import factories
from tests.admin_pages import (
    admin_url,
    assert_every_model_has_an_admin,
    assert_pages_answer,
    change_list_rows_with_flat_queries,
)
from tests.judging import builders

pytestmark = pytest.mark.django_db

MODELS = [Judge, Rubric, JudgeRun, AutomaticJudgment]


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
    assert_every_model_has_an_admin("judging", MODELS)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_list_search_and_change_page_answer(client, superuser, model):
    populate()
    assert_pages_answer(client, model, search="judge")


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_lists_cost_the_same_queries_with_more_rows(
    client, superuser, model, django_assert_max_num_queries
):
    populate(1)
    rows, bigger = change_list_rows_with_flat_queries(
        client, model, lambda: populate(4), django_assert_max_num_queries
    )
    assert bigger > rows or model is Rubric


@pytest.mark.parametrize("model", [Rubric, JudgeRun, AutomaticJudgment], ids=lambda m: m.__name__)
def test_records_are_not_added_changed_or_deleted(client, superuser, model):
    populate(1)
    row = model.objects.first()
    assert client.get(admin_url(model, "add")).status_code == 403
    assert client.post(admin_url(model, "delete", row.pk), {"post": "yes"}).status_code == 403
    assert model.objects.filter(pk=row.pk).exists()
