"""Admin pages of the tournaments app: every model has one, list pages cost the same few
queries whatever the size, plans are records, settings freeze once used."""

import pytest

from tests import factories
from tests.admin_pages import (
    admin_url,
    assert_every_model_has_an_admin,
    assert_pages_answer,
    change_list_rows_with_flat_queries,
)
from tests.annotation.builders import ab_campaign
from tournaments.models import PartnerSet, PlannedDialogue, Tournament

pytestmark = pytest.mark.django_db

MODELS = [Tournament, PartnerSet, PlannedDialogue]


def populate(n=2, prefix="t"):
    """`n` of everything: tournaments with a plan, a partner set."""
    owner = factories.user()
    systems = [factories.system(owner, slug=f"{prefix}-bot-{i}") for i in range(n)]
    partners = PartnerSet.objects.create(slug=f"{prefix}-partners", name="Partners")
    partners.systems.set(systems)
    for i, system in enumerate(systems):
        tournament = Tournament.objects.create(
            slug=f"{prefix}-{i}",
            name=f"Tournament {prefix} {i}",
            kind=Tournament.Kind.SPOT_THE_BOT,
            owner=owner,
            schedule=Tournament.Schedule.BIPARTITE_PLAY,
            partner_set=partners,
        )
        tournament.systems.set(systems)
        for k in range(3):
            PlannedDialogue.objects.create(
                tournament=tournament, key=f"{i}-{k}", speakers=[system.slug], index=k, seed=k
            )
    return systems


@pytest.fixture
def superuser(client):
    user = factories.user("boss", staff=True)
    client.force_login(user)
    return user


def test_every_tournaments_model_has_an_admin():
    assert_every_model_has_an_admin("tournaments", MODELS)


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
        client, model, lambda: populate(6, prefix="b"), django_assert_max_num_queries
    )
    assert bigger > rows


def test_the_plan_is_a_record(client, superuser):
    populate()
    planned = PlannedDialogue.objects.first()
    assert client.get(admin_url(PlannedDialogue, "add")).status_code == 403
    response = client.post(
        admin_url(PlannedDialogue, "change", planned.pk), {"status": "complete", "attempts": 0}
    )
    planned.refresh_from_db()
    assert response.status_code == 403 and planned.status == PlannedDialogue.Status.PENDING
    collecting = Tournament.objects.filter(pk=planned.tournament_id)
    collecting.update(status=Tournament.Status.COLLECTING)
    delete = client.post(admin_url(PlannedDialogue, "delete", planned.pk), {"post": "yes"})
    assert delete.status_code == 403 and PlannedDialogue.objects.filter(pk=planned.pk).exists()


def test_a_tournament_being_planned_is_deleted_with_its_plan(client, superuser):
    populate(1)
    tournament = Tournament.objects.get()
    response = client.post(admin_url(Tournament, "delete", tournament.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not Tournament.objects.exists() and not PlannedDialogue.objects.exists()


def test_a_tournament_past_planning_is_not_deleted_nor_its_schedule_edited(client, superuser):
    populate(1)
    tournament = Tournament.objects.get()
    tournament.status = Tournament.Status.COLLECTING
    tournament.save()
    page = client.get(admin_url(Tournament, "change", tournament.pk)).content.decode()
    assert 'name="name"' in page and 'name="published"' in page
    for frozen in ("kind", "schedule", "seed", "conversations_per_pair", "status"):
        assert f'name="{frozen}"' not in page
    assert (
        client.post(admin_url(Tournament, "delete", tournament.pk), {"post": "yes"}).status_code
        == 403
    )
    assert Tournament.objects.filter(pk=tournament.pk).exists()


def test_a_tournament_with_a_campaign_keeps_the_settings_it_was_built_with(client, superuser):
    populate(1)
    tournament = Tournament.objects.get()
    tournament.campaign = ab_campaign(2)
    tournament.status = Tournament.Status.ANNOTATING
    tournament.save()
    page = client.get(admin_url(Tournament, "change", tournament.pk)).content.decode()
    for frozen in ("segment_lengths", "human_share", "batch_size", "systems", "campaign"):
        assert f'name="{frozen}"' not in page


def test_a_partner_set_in_use_is_fixed(client, superuser):
    populate(1)
    used = PartnerSet.objects.get()
    unused = PartnerSet.objects.create(slug="spare", name="Spare")
    used_page = client.get(admin_url(PartnerSet, "change", used.pk)).content.decode()
    unused_page = client.get(admin_url(PartnerSet, "change", unused.pk)).content.decode()
    assert 'name="slug"' not in used_page and 'name="version"' not in used_page
    assert 'name="systems"' in unused_page and 'name="slug"' in unused_page


def test_editing_a_used_partner_set_saves_a_new_version(client, superuser):
    systems = populate(1)
    used = PartnerSet.objects.get()
    extra = factories.system(None, slug="t-extra")
    response = client.post(
        admin_url(PartnerSet, "change", used.pk),
        {"name": "Partners", "description": "", "systems": [systems[0].pk, extra.pk]},
        follow=True,
    )
    assert response.status_code == 200
    assert "saved as version 2" in response.content.decode()
    versions = {p.version: p for p in PartnerSet.objects.filter(slug=used.slug)}
    assert sorted(versions) == [1, 2]
    assert list(versions[1].systems.values_list("slug", flat=True)) == ["t-bot-0"]
    assert sorted(versions[2].systems.values_list("slug", flat=True)) == ["t-bot-0", "t-extra"]
    assert Tournament.objects.get().partner_set == versions[1]


def test_editing_an_unused_partner_set_changes_it_in_place(client, superuser):
    spare = PartnerSet.objects.create(slug="spare", name="Spare")
    bot = factories.system(None, slug="spare-bot")
    client.post(
        admin_url(PartnerSet, "change", spare.pk),
        {"slug": "spare", "version": 1, "name": "Spare", "description": "", "systems": [bot.pk]},
    )
    assert PartnerSet.objects.get().systems.get() == bot
