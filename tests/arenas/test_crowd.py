"""Launching an arena on a crowd platform (arenas/crowd.py, `launch`) through the existing
providers: Prolific against its local fake, MTurk through botocore's Stubber; the cost
estimate with fees against the budget, staff approval where money is spent."""

from decimal import Decimal

import pytest
from botocore.stub import ANY

from annotation.campaigns import decide_launch
from annotation.models import Assignment, Batch, Campaign, CrowdAction, Item, LaunchRequest
from arenas.crowd import CrowdRefused, launch
from arenas.crowd_models import CrowdLaunch
from tests import factories
from tests.arenas.crowd_setup import PUBLIC, crowd_arena, mturk_stubber, prolific_fake, setup

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake_prolific(settings, monkeypatch):
    with prolific_fake(settings, monkeypatch) as server:
        yield server


@pytest.fixture
def mturk_stub(settings, monkeypatch):
    with mturk_stubber(settings, monkeypatch) as stubber:
        yield stubber


def nothing_created():
    return not (
        Campaign.objects.exists()
        or Item.objects.exists()
        or CrowdLaunch.objects.exists()
        or LaunchRequest.objects.exists()
        or CrowdAction.objects.exists()
    )


def test_staff_launch_on_prolific_publishes_one_study_of_participant_batches(fake_prolific):
    made = crowd_arena()
    boss = factories.user("boss", staff=True)
    launched = launch(made, setup(), boss, confirm=True)

    campaign = launched.campaign
    assert (campaign.status, campaign.task_kind, campaign.provider) == ("live", "arena", "prolific")
    assert (campaign.redundancy, campaign.batch_size, campaign.max_batches_per_worker) == (1, 4, 1)
    batches = list(Batch.objects.filter(campaign=campaign))
    assert len(batches) == 3
    for batch in batches:
        roles = sorted(batch.items.values_list("role", flat=True))
        assert roles == ["gold", "task", "task", "task"]
    assert Assignment.objects.filter(campaign=campaign, status="open").count() == 3
    study = fake_prolific.studies[campaign.platform_ref]
    assert (study["status"], study["total_available_places"], study["reward"]) == ("ACTIVE", 3, 100)
    assert study["external_study_url"].startswith(f"{PUBLIC}/work/{campaign.slug}/?PROLIFIC_PID=")
    publish = CrowdAction.objects.get(action="publish")
    assert publish.amount == Decimal("4.50")  # 3 x 1.00 plus Prolific's 50% fee (the test's)
    assert launched.request is None and launched.launch.arena == made


def test_an_owner_launch_that_pays_waits_for_staff_and_approval_publishes_it(fake_prolific):
    made = crowd_arena()
    launched = launch(made, setup(), made.owner)

    assert launched.request.state == "pending" and launched.campaign.status == "draft"
    assert fake_prolific.requests == []
    decide_launch(launched.campaign, factories.user("boss", staff=True), approve=True)
    launched.campaign.refresh_from_db()
    assert launched.campaign.status == "live"
    assert [s["status"] for s in fake_prolific.studies.values()] == ["ACTIVE"]


def test_an_over_budget_launch_is_refused_with_nothing_created(fake_prolific):
    made = crowd_arena()
    boss = factories.user("boss", staff=True)
    with pytest.raises(CrowdRefused, match="would cost 4.50 GBP .* more than the budget of 4.00"):
        launch(made, setup(budget=Decimal("4.00")), boss, confirm=True)
    assert nothing_created()
    assert fake_prolific.requests == []


def test_a_launch_in_a_language_the_site_lacks_is_refused_with_nothing_created(fake_prolific):
    made = crowd_arena()
    boss = factories.user("boss", staff=True)
    with pytest.raises(CrowdRefused, match="language: Choose one of the site's languages"):
        launch(made, setup(language="fr"), boss, confirm=True)
    assert nothing_created()
    assert fake_prolific.requests == []


def test_a_launch_in_spanish_gives_its_participants_spanish_words(fake_prolific):
    made = crowd_arena(name="Arena de olas")
    boss = factories.user("boss", staff=True)
    campaign = launch(made, setup(language="es"), boss, confirm=True).campaign
    campaign.refresh_from_db()
    assert campaign.language == "es"
    assert campaign.title == "Arena de olas: batallas de chatbots"
    assert campaign.instructions == (
        "Escribe mensajes a dos chatbots anónimos y vota cuál ha respondido mejor, 4 veces."
    )


def test_an_owner_over_budget_asks_nobody_and_creates_nothing(fake_prolific):
    made = crowd_arena()
    with pytest.raises(CrowdRefused, match="more than the budget"):
        launch(made, setup(budget=Decimal("1.00")), made.owner)
    assert nothing_created()


def test_staff_must_confirm_paying_before_anything_is_created(fake_prolific):
    made = crowd_arena()
    with pytest.raises(CrowdRefused, match="pays real money"):
        launch(made, setup(), factories.user("boss", staff=True))
    assert nothing_created()


@pytest.mark.parametrize(
    ("fields", "gold", "words"),
    [
        ({"gold_per_batch": 4}, True, "Fewer gold battles than battles per participant"),
        ({"gold_per_batch": 1}, False, "no gold battles yet"),
        ({"battles_per_participant": 51}, True, "battles_per_participant"),
        ({"participants": 0}, True, "participants"),
        ({"reward_per_participant": Decimal("0")}, True, "more than 0"),
        ({"provider": "local"}, True, "Choose Prolific or MTurk"),
    ],
)
def test_bad_settings_are_refused_with_nothing_created(fake_prolific, fields, gold, words):
    made = crowd_arena() if gold else crowd_arena(gold=())
    with pytest.raises(CrowdRefused, match=words):
        launch(made, setup(**fields), factories.user("boss", staff=True), confirm=True)
    assert nothing_created()


def test_an_arena_without_two_systems_cannot_launch(fake_prolific):
    made = crowd_arena()
    made.entries.first().delete()
    with pytest.raises(CrowdRefused, match="two systems"):
        launch(made, setup(), factories.user("boss", staff=True), confirm=True)
    assert nothing_created()


def test_somebody_who_does_not_manage_the_arena_cannot_launch_it(fake_prolific):
    made = crowd_arena()
    with pytest.raises(CrowdRefused, match="owner and staff"):
        launch(made, setup(), factories.user("stranger"))
    assert nothing_created()


def test_an_mturk_sandbox_launch_by_the_owner_makes_one_hit_per_participant(mturk_stub):
    made = crowd_arena()
    mturk_stub.add_response(
        "create_qualification_type", {"QualificationType": {"QualificationTypeId": "BLOCKQ"}}
    )
    mturk_stub.add_response("create_hit_type", {"HITTypeId": "HT1"})
    for n in range(2):
        params = {
            "HITTypeId": "HT1",
            "MaxAssignments": 1,  # one participant per batch
            "LifetimeInSeconds": 7 * 24 * 3600,
            "Question": ANY,
            "RequesterAnnotation": ANY,
            "UniqueRequestToken": ANY,
        }
        mturk_stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": f"HIT{n}"}}, params)
    launched = launch(made, setup(provider="mturk", participants=2), made.owner)

    campaign = launched.campaign
    assert campaign.status == "live" and campaign.platform_ref == "HT1"
    hits = sorted(Batch.objects.filter(campaign=campaign).values_list("platform_ref", flat=True))
    assert hits == ["HIT0", "HIT1"]
    created = CrowdAction.objects.filter(action="create_hit").order_by("created")
    assert [a.request["MaxAssignments"] for a in created] == [1, 1]
    assert created[0].amount == Decimal("1.20")  # 1.00 plus MTurk's 20% commission


def test_an_mturk_production_launch_over_budget_is_refused_after_pricing_only(mturk_stub):
    made = crowd_arena()
    mturk_stub.add_response("get_account_balance", {"AvailableBalance": "500.00"}, {})
    with pytest.raises(CrowdRefused, match="would cost 3.60 USD"):
        launch(
            made,
            setup(provider="mturk", platform_sandbox=False, budget=Decimal("3.00")),
            factories.user("boss", staff=True),
            confirm=True,
        )
    assert nothing_created()


def test_screening_reaches_the_mturk_hit_type(mturk_stub):
    made = crowd_arena()
    mturk_stub.add_response(
        "create_qualification_type", {"QualificationType": {"QualificationTypeId": "BLOCKQ"}}
    )
    guarded = "DiscoverPreviewAndAccept"
    requirements = [
        {
            "QualificationTypeId": "000000000000000000L0",
            "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [98],
            "ActionsGuarded": guarded,
        },
        {
            "QualificationTypeId": "00000000000000000040",
            "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [100],
            "ActionsGuarded": guarded,
        },
        {
            "QualificationTypeId": "00000000000000000071",
            "Comparator": "In",
            "LocaleValues": [{"Country": "US"}, {"Country": "GB"}],
            "ActionsGuarded": guarded,
        },
        {"QualificationTypeId": "BLOCKQ", "Comparator": "DoesNotExist", "ActionsGuarded": guarded},
    ]
    expected = {
        "AutoApprovalDelayInSeconds": ANY,
        "AssignmentDurationInSeconds": 1800,
        "Reward": "1.00",
        "Title": ANY,
        "Keywords": ANY,
        "Description": ANY,
        "QualificationRequirements": requirements,
    }
    mturk_stub.add_response("create_hit_type", {"HITTypeId": "HT1"}, expected)
    mturk_stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "HIT0"}})
    screening = {"min_approval_rate": 98, "locales": ["US", "GB"]}
    launched = launch(
        made, setup(provider="mturk", participants=1, screening=screening), made.owner
    )
    assert launched.campaign.provider_config == {
        **screening,
        "block_qualification_type_id": "BLOCKQ",  # remembered by the provider
    }


def test_screening_reaches_the_prolific_study(fake_prolific):
    made = crowd_arena()
    screening = {"device_compatibility": ["desktop", "mobile"]}
    boss = factories.user("boss", staff=True)
    campaign = launch(made, setup(screening=screening), boss, confirm=True).campaign
    study = fake_prolific.studies[campaign.platform_ref]
    assert study["device_compatibility"] == ["desktop", "mobile"]


def test_screening_out_of_range_is_refused_with_nothing_created(fake_prolific):
    made = crowd_arena()
    with pytest.raises(CrowdRefused, match="min_approval_rate"):
        launch(
            made,
            setup(provider="mturk", screening={"min_approval_rate": 101}),
            made.owner,
        )
    assert nothing_created()
