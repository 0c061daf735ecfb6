"""The owner's crowd page (arenas/views/crowd.py): gold battles added and removed, a launch
asked for through the form (staff's approval where it pays), refusals shown on the page
with nothing stored, and nobody else's arena."""

import pytest
from django.urls import reverse

from annotation.models import Campaign, LaunchRequest
from arenas.crowd_models import CrowdLaunch, GoldBattle
from tests import factories
from tests.arenas.crowd_setup import crowd_arena, prolific_fake

pytestmark = pytest.mark.django_db

LAUNCH = {
    "provider": "prolific",
    "participants": "3",
    "battles_per_participant": "4",
    "gold_per_batch": "1",
    "reward_per_participant": "1.00",
    "budget": "10.00",
    "time_limit_minutes": "30",
}


@pytest.fixture
def fake_prolific(settings, monkeypatch):
    with prolific_fake(settings, monkeypatch) as server:
        yield server


def test_the_owner_sees_the_page_and_others_do_not(client):
    made = crowd_arena()
    url = reverse("arenas:crowd", args=[made.slug])
    assert client.get(url).status_code == 302  # log in first
    client.force_login(factories.user("stranger"))
    assert client.get(url).status_code == 403
    client.force_login(made.owner)
    page = client.get(url)
    assert page.status_code == 200 and "What is 2 + 2?" in page.content.decode()


def test_the_owner_adds_and_removes_a_gold_battle(client):
    made = crowd_arena(gold=())
    client.force_login(made.owner)
    answer = client.post(
        reverse("arenas:crowd-gold", args=[made.slug]),
        {"prompt": "Is water wet?", "first": "Yes.", "second": "Purple.", "better": "first"},
    )
    assert answer.status_code == 302
    gold = GoldBattle.objects.get(arena=made)
    assert (gold.prompt, gold.better) == ("Is water wet?", "first")
    client.post(reverse("arenas:crowd-gold-remove", args=[made.slug, gold.pk]))
    assert not GoldBattle.objects.exists()


def test_a_gold_battle_with_a_nul_or_no_better_answer_is_refused(client):
    made = crowd_arena(gold=())
    client.force_login(made.owner)
    url = reverse("arenas:crowd-gold", args=[made.slug])
    bad = {"prompt": "Is\x00 water wet?", "first": "Yes.", "second": "No.", "better": "first"}
    assert client.post(url, bad).status_code == 400
    unsaid = {"prompt": "Is water wet?", "first": "Yes.", "second": "No.", "better": ""}
    answer = client.post(url, unsaid)
    assert answer.status_code == 400 and "This field is required." in answer.content.decode()
    assert not GoldBattle.objects.exists()


def test_an_owner_launch_that_pays_waits_for_staff(client, fake_prolific):
    made = crowd_arena()
    client.force_login(made.owner)
    answer = client.post(reverse("arenas:crowd-launch", args=[made.slug]), LAUNCH, follow=True)
    assert "waits for staff&#x27;s approval" in answer.content.decode()
    launch = CrowdLaunch.objects.get(arena=made)
    assert (launch.campaign.status, launch.battles_per_participant) == ("draft", 4)
    assert LaunchRequest.objects.get().campaign == launch.campaign
    assert fake_prolific.requests == []


def test_a_launch_over_budget_is_shown_on_the_form_and_nothing_is_stored(client, fake_prolific):
    made = crowd_arena()
    client.force_login(made.owner)
    answer = client.post(
        reverse("arenas:crowd-launch", args=[made.slug]), {**LAUNCH, "budget": "2.00"}
    )
    assert answer.status_code == 400
    assert "more than the budget of 2.00" in answer.content.decode()
    assert not Campaign.objects.exists() and not CrowdLaunch.objects.exists()


def test_a_setting_out_of_range_is_refused_by_the_form(client, fake_prolific):
    made = crowd_arena()
    client.force_login(made.owner)
    answer = client.post(
        reverse("arenas:crowd-launch", args=[made.slug]),
        {**LAUNCH, "battles_per_participant": "51"},
    )
    assert answer.status_code == 400 and "less than or equal to 50" in answer.content.decode()
    assert not Campaign.objects.exists()


def test_staff_run_a_launch_from_its_campaigns_pages(client, fake_prolific):
    from arenas.crowd import launch
    from tests.arenas.crowd_setup import setup

    made = crowd_arena()
    boss = factories.user("boss", staff=True)
    campaign = launch(made, setup(), boss, confirm=True).campaign
    client.force_login(boss)
    for name in ("manage-campaign", "manage-campaign-review", "quality-workers"):
        page = client.get(reverse(f"annotation:{name}", args=[campaign.slug]))
        assert page.status_code == 200, name
    preview = client.get(reverse("annotation:manage-campaign-preview", args=[campaign.slug, 0]))
    assert preview.status_code == 200 and "two anonymous chatbots" in preview.content.decode()
    listed = client.get(reverse("arenas:crowd", args=[made.slug])).content.decode()
    assert campaign.slug in listed and "Live" in listed


def test_the_form_turns_its_screening_fields_into_the_platforms_settings(client, fake_prolific):
    made = crowd_arena()
    client.force_login(made.owner)
    url = reverse("arenas:crowd-launch", args=[made.slug])
    client.post(url, {**LAUNCH, "devices": ["desktop", "tablet"], "locales": "us"})
    campaign = CrowdLaunch.objects.get().campaign
    # Prolific's devices; MTurk's countries are not Prolific's.
    assert campaign.provider_config == {"device_compatibility": ["desktop", "tablet"]}
    wrong = client.post(url, {**LAUNCH, "provider": "mturk", "locales": "US, USA"})
    assert wrong.status_code == 400 and "USA is not one" in wrong.content.decode()
    assert CrowdLaunch.objects.count() == 1


def test_the_form_sets_the_participants_language(client, fake_prolific):
    made = crowd_arena()
    client.force_login(made.owner)
    url = reverse("arenas:crowd-launch", args=[made.slug])
    form = client.get(reverse("arenas:crowd", args=[made.slug])).content.decode()
    assert "Participants&#x27; language" in form or "Participants' language" in form
    client.post(url, {**LAUNCH, "language": "de"})
    assert CrowdLaunch.objects.get().campaign.language == "de"
    wrong = client.post(url, {**LAUNCH, "language": "fr"})
    assert wrong.status_code == 400 and "fr is not one of the available choices" in (
        wrong.content.decode()
    )
    assert CrowdLaunch.objects.count() == 1


def test_a_form_without_the_language_launches_in_english(client, fake_prolific):
    made = crowd_arena()
    client.force_login(made.owner)
    client.post(reverse("arenas:crowd-launch", args=[made.slug]), LAUNCH)
    assert CrowdLaunch.objects.get().campaign.language == "en"
