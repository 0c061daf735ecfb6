"""Admin pages of the arenas app: every model has one, list pages cost the same few
queries whatever the size, and battles are records."""

import pytest
from django.apps import apps
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from arenas.models import Arena, ArenaSystem, Battle, BattleAnswer, BattleTurn, Leaderboard
from tests import factories
from tests.arenas.builders import arena, bot_system

pytestmark = pytest.mark.django_db

MODELS = [Arena, ArenaSystem, Battle, BattleTurn, BattleAnswer, Leaderboard]
RECORDS = [Battle, BattleTurn, BattleAnswer, Leaderboard]


def url(model, action="changelist", *args):
    return reverse(f"admin:arenas_{model._meta.model_name}_{action}", args=args)


def populate(n=1, prefix="t"):
    owner = factories.user()
    for i in range(n):
        one, two = bot_system(owner), bot_system(owner)
        made = arena(owner, systems=[one, two], slug=f"{prefix}-arena-{i}")
        battle = Battle.objects.create(
            arena=made, system_a=one, system_b=two, voter_platform="site", question_id="q"
        )
        turn = BattleTurn.objects.create(battle=battle, number=1, prompt="hi")
        for side in "ab":
            BattleAnswer.objects.create(turn=turn, side=side, status="done", text="hello")
        Leaderboard.objects.create(arena=made, result={"systems": []})


@pytest.fixture
def superuser(client):
    client.force_login(factories.user("boss", staff=True))


def test_every_arenas_model_has_an_admin():
    models = set(apps.get_app_config("arenas").get_models())
    assert models == set(MODELS)
    assert all(model in admin.site._registry for model in models)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_list_search_and_change_page_answer(client, superuser, model):
    populate()
    changelist = client.get(url(model))
    search = client.get(url(model) + "?q=t-")
    change = client.get(url(model, "change", model.objects.first().pk))
    assert (changelist.status_code, search.status_code, change.status_code) == (200, 200, 200)
    assert changelist.context["cl"].result_count == model.objects.count()


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_lists_cost_the_same_queries_with_more_rows(
    client, superuser, model, django_assert_max_num_queries
):
    populate(1, prefix="a")
    with CaptureQueriesContext(connection) as small:
        rows = client.get(url(model)).context["cl"].result_count
    populate(5, prefix="b")
    with django_assert_max_num_queries(len(small.captured_queries)):
        bigger = client.get(url(model)).context["cl"].result_count
    assert bigger > rows


@pytest.mark.parametrize("model", RECORDS, ids=lambda m: m.__name__)
def test_records_are_never_added_changed_or_deleted_here(client, superuser, model):
    populate()
    obj = model.objects.first()
    assert client.get(url(model, "add")).status_code == 403
    assert client.post(url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
    assert model.objects.filter(pk=obj.pk).exists()
