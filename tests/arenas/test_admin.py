"""Admin pages of the arenas app: every model has one, list pages cost the same few
queries whatever the size, and battles are records."""

import pytest

from annotation.items import add_items
from annotation.kinds.arena import battle_slots
from annotation.models import Campaign
from arenas.crowd_models import CrowdBattle, CrowdLaunch, GoldBattle
from arenas.models import (
    Arena,
    ArenaCategory,
    ArenaSystem,
    Battle,
    BattleAnswer,
    BattleTurn,
    Leaderboard,
    LeaderboardVariant,
    PairingState,
)
from tests import factories
from tests.admin_pages import (
    admin_url,
    assert_every_model_has_an_admin,
    assert_pages_answer,
    change_list_rows_with_flat_queries,
)
from tests.arenas.builders import arena, bot_system

pytestmark = pytest.mark.django_db

MODELS = [
    Arena,
    ArenaSystem,
    Battle,
    BattleTurn,
    BattleAnswer,
    Leaderboard,
    GoldBattle,
    CrowdLaunch,
    CrowdBattle,
    LeaderboardVariant,
    ArenaCategory,
    PairingState,
]
RECORDS = [
    Battle,
    BattleTurn,
    BattleAnswer,
    Leaderboard,
    CrowdLaunch,
    CrowdBattle,
    LeaderboardVariant,
    PairingState,
]


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
        LeaderboardVariant.objects.create(arena=made, key="style", result={"systems": []})
        ArenaCategory.objects.create(arena=made, name="maths", prompt_pattern="integral")
        PairingState.objects.create(arena=made, systems=[one.pk, two.pk], votes=1)
        crowd(made, battle, f"{prefix}-crowd-{i}")


def crowd(made, battle, slug):
    """A gold battle, a crowd launch with one slot, and the battle fought for it."""
    GoldBattle.objects.create(arena=made, prompt="2 + 2?", first="4", second="5", better="first")
    campaign = Campaign.objects.create(slug=slug, title=slug, task_kind="arena", redundancy=1)
    add_items(campaign, battle_slots(1), gold_per_batch=0)
    CrowdLaunch.objects.create(arena=made, campaign=campaign, battles_per_participant=1)
    CrowdBattle.objects.create(
        battle=battle, assignment=campaign.assignments.get(), item=campaign.items.get()
    )


@pytest.fixture
def superuser(client):
    client.force_login(factories.user("boss", staff=True))


def test_every_arenas_model_has_an_admin():
    assert_every_model_has_an_admin("arenas", MODELS)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_list_search_and_change_page_answer(client, superuser, model):
    populate()
    assert_pages_answer(client, model, search="t-")


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_lists_cost_the_same_queries_with_more_rows(
    client, superuser, model, django_assert_max_num_queries
):
    populate(1, prefix="a")
    rows, bigger = change_list_rows_with_flat_queries(
        client, model, lambda: populate(5, prefix="b"), django_assert_max_num_queries
    )
    assert bigger > rows


@pytest.mark.parametrize("model", RECORDS, ids=lambda m: m.__name__)
def test_records_are_never_added_changed_or_deleted_here(client, superuser, model):
    populate()
    obj = model.objects.first()
    assert client.get(admin_url(model, "add")).status_code == 403
    assert client.post(admin_url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
    assert model.objects.filter(pk=obj.pk).exists()
