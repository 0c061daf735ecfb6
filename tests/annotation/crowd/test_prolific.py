"""Prolific against a local fake of its API (tests/annotation/crowd/fake_prolific.py)."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.crowd.base import ConfirmationRequired, CrowdError, PlatformRefused
from annotation.crowd.ledger import CallInDoubt
from annotation.crowd.prolific import ProlificProvider
from annotation.models import Assignment, CrowdAction, Worker
from tests.annotation.builders import ab_campaign

from .fake_prolific import FakeProlific

pytestmark = pytest.mark.django_db
PUBLIC = "https://evalhub.example.org"
REASON = "You answered the attention checks wrongly in three of three cases, " * 2


@pytest.fixture
def fake(settings):
    with FakeProlific() as server:
        settings.EVALHUB_PROLIFIC_API_URL = server.url
        settings.EVALHUB_PROLIFIC_TOKEN = "sekrit"
        settings.EVALHUB_PUBLIC_URL = PUBLIC
        settings.EVALHUB_PROLIFIC_SERVICE_FEE = 0.5
        yield server


@pytest.fixture
def sleeps():
    return []


@pytest.fixture
def provider(sleeps):
    return ProlificProvider(sleep=sleeps.append)


def prolific_campaign(**fields):
    fields = {
        "batch_size": 2,
        "redundancy": 3,
        "reward_per_batch": Decimal("0.50"),
        "provider": "prolific",
        "status": "draft",
        "time_limit_minutes": 40,
        "provider_config": {"minutes_per_batch": 8},
        **fields,
    }
    return ab_campaign(4, **fields)


def taken(campaign, pid, session, status="submitted", submitted_at=None):
    slot = Assignment.objects.filter(campaign=campaign, worker__isnull=True).first()
    slot.worker = Worker.objects.create(provider="prolific", external_id=pid)
    slot.provider_ref, slot.status = session, status
    slot.started_at = timezone.now() - timedelta(minutes=10)
    slot.submitted_at = submitted_at or (timezone.now() if status != "started" else None)
    slot.save()
    return slot


def test_a_launch_needs_confirmation_and_sends_nothing_without_it(fake, provider):
    campaign = prolific_campaign()
    with pytest.raises(ConfirmationRequired, match="6 paid submissions"):
        provider.launch(campaign)
    assert fake.requests == [] and not CrowdAction.objects.exists()


def test_launch_creates_the_study_and_publishes_it_once(fake, provider):
    campaign = prolific_campaign()
    provider.launch(campaign, confirm=True)
    campaign.refresh_from_db()
    code = campaign.provider_config["completion_code"]
    path = reverse("annotation:start", args=[campaign.slug])
    [create] = fake.calls("POST", "studies/")
    assert create["authorization"] == "Token sekrit"
    assert create["json"] == {
        "name": campaign.title,
        "internal_name": f"EvalHub {campaign.slug}",
        "description": campaign.title,
        "external_study_url": (
            f"{PUBLIC}{path}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
            "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
        ),
        "prolific_id_option": "url_parameters",
        "completion_codes": [
            {"code": code, "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]}
        ],
        "total_available_places": 6,  # 2 batches x redundancy 3
        "estimated_completion_time": 8,
        "maximum_allowed_time": 40,
        "reward": 50,  # pence
        "device_compatibility": ["desktop"],
    }
    assert fake.calls("POST", "studies/study1/transition/")[0]["json"] == {"action": "PUBLISH"}
    assert campaign.platform_ref == "study1" and fake.studies["study1"]["status"] == "ACTIVE"
    publish = CrowdAction.objects.get(action="publish")
    assert (publish.state, publish.amount) == ("done", Decimal("4.50"))  # 3.00 + 50% fee
    # A repeated launch (a retried command) sends nothing more.
    provider.launch(campaign, confirm=True)
    assert len(fake.requests) == 2


def test_the_estimate_uses_reward_and_service_fee(fake, provider):
    estimate = provider.estimate(prolific_campaign())
    assert (estimate.places, estimate.rewards, estimate.fees, estimate.total) == (
        6,
        Decimal("3.00"),
        Decimal("1.50"),
        Decimal("4.50"),
    )


def test_the_completion_time_is_measured_when_not_configured(fake, provider):
    campaign = prolific_campaign(provider_config={})
    assert provider.minutes_per_batch(campaign) == 10  # a quarter of the 40-minute limit
    taken(campaign, "P1", "S1")  # started 10 minutes before submitting
    assert provider.minutes_per_batch(campaign) == 10


def test_validation_errors_name_the_field(fake, provider):
    with pytest.raises(PlatformRefused, match="400 Request validation failed: name: This field"):
        provider.api.send("POST", "studies/", json={"reward": 0})


def test_a_429_is_retried_after_the_time_prolific_asks(fake, provider, sleeps):
    campaign = prolific_campaign(platform_ref="study9")
    fake.fail("GET", "submissions/", 429, times=2, headers={"Retry-After": "3"})
    assert provider.sync(campaign).unmatched == []
    assert sleeps == [3.0, 3.0]
    assert len(fake.calls("GET", "submissions/")) == 3


def test_a_5xx_is_retried_for_reads_but_never_for_a_pay(fake, provider):
    campaign = prolific_campaign(platform_ref="study1", status="live")
    fake.fail("GET", "submissions/", 503)
    provider.sync(campaign)
    assert len(fake.calls("GET", "submissions/")) == 2

    assignment = taken(campaign, "P1", "S1")
    fake.add_submissions("study1", [{"id": "S1", "participant_id": "P1", "status": "APPROVED"}])
    fake.fail("POST", "bulk-bonus-payments/bonus1/pay/", 502)
    with pytest.raises(CrowdError, match="502"):
        provider.bonus(assignment, Decimal("1.00"), "Careful work", key="b1")
    assert len(fake.calls("POST", "bulk-bonus-payments/bonus1/pay/")) == 1
    assert CrowdAction.objects.get(action="bonus").state == "pending"
    # Whether the money moved is unknown: a second try is refused, not sent.
    with pytest.raises(CallInDoubt, match="check the platform"):
        provider.bonus(assignment, Decimal("1.00"), "Careful work", key="b1")
    assert fake.paid == []


def test_sync_reads_every_page_and_matches_by_session_id(fake, provider):
    campaign = prolific_campaign(platform_ref="study1", status="live", redundancy=25)
    rows = []
    for n in range(45):
        status = ["AWAITING REVIEW", "APPROVED", "REJECTED"][n % 3]
        taken(campaign, f"P{n}", f"S{n}")
        rows.append({"id": f"S{n}", "participant_id": f"P{n}", "status": status})
    returned = taken(campaign, "PR", "SR", status="started")
    rows.append({"id": "SR", "participant_id": "PR", "status": "RETURNED"})
    rows.append({"id": "PREVIEW", "participant_id": "researcher", "status": "AWAITING REVIEW"})
    fake.add_submissions("study1", rows)
    open_before = Assignment.objects.filter(campaign=campaign, status="open").count()

    report = provider.sync(campaign)

    assert len(fake.calls("GET", "submissions/")) == 3  # 47 rows, 20 per page
    assert (report.submitted, report.approved, report.rejected, report.returned) == (15, 15, 15, 1)
    assert report.unmatched == ["PREVIEW"]
    statuses = dict(
        Assignment.objects.filter(campaign=campaign)
        .exclude(provider_ref="")
        .values_list("provider_ref", "status")
    )
    assert (statuses["S0"], statuses["S1"], statuses["S2"]) == ("submitted", "approved", "rejected")
    returned.refresh_from_db()
    assert returned.status == "returned"
    assert Assignment.objects.filter(campaign=campaign, status="open").count() == open_before + 1


def test_sync_approves_what_waited_longer_than_the_auto_approval_delay(fake, provider):
    campaign = prolific_campaign(
        platform_ref="study1", status="live", provider_config={"auto_approve_after_hours": 24}
    )
    old = taken(campaign, "P1", "S1", submitted_at=timezone.now() - timedelta(hours=30))
    new = taken(campaign, "P2", "S2")
    fake.add_submissions(
        "study1",
        [
            {"id": "S1", "participant_id": "P1", "status": "AWAITING REVIEW"},
            {"id": "S2", "participant_id": "P2", "status": "AWAITING REVIEW"},
        ],
    )
    report = provider.sync(campaign)
    old.refresh_from_db(), new.refresh_from_db()
    assert (old.status, new.status, report.approved) == ("approved", "submitted", 1)
    assert fake.calls("POST", "submissions/S1/transition/")[0]["json"] == {"action": "APPROVE"}
    assert not fake.calls("POST", "submissions/S2/transition/")


def test_approve_reject_and_bonus(fake, provider):
    campaign = prolific_campaign(platform_ref="study1", status="live")
    good, bad = taken(campaign, "P1", "S1"), taken(campaign, "P2", "S2")
    fake.add_submissions(
        "study1",
        [
            {"id": "S1", "participant_id": "P1", "status": "AWAITING REVIEW"},
            {"id": "S2", "participant_id": "P2", "status": "AWAITING REVIEW"},
        ],
    )
    provider.approve(good)
    with pytest.raises(CrowdError, match="at least 100 characters"):
        provider.reject(bad, "Too short.")
    provider.reject(bad, REASON, category="FAILED_CHECK")
    assert fake.calls("POST", "submissions/S2/transition/")[0]["json"] == {
        "action": "REJECT",
        "message": REASON,
        "rejection_category": "FAILED_CHECK",
    }
    provider.bonus(good, Decimal("0.75"), "Careful work", key="quality-P1")
    provider.bonus(good, Decimal("0.75"), "Careful work", key="quality-P1")
    assert fake.calls("POST", "submissions/bonus-payments/")[0]["json"] == {
        "study_id": "study1",
        "csv_bonuses": "P1,0.75\n",
    }
    assert fake.paid == ["bonus1"]
    bonus = CrowdAction.objects.get(action="bonus")
    assert (bonus.amount, bonus.worker_id) == (Decimal("1.13"), good.worker_id)
    assert fake.submissions["study1"][0]["status"] == "APPROVED"
    assert fake.submissions["study1"][1]["status"] == "REJECTED"


def test_a_bonus_for_someone_not_in_the_study_is_refused_with_prolifics_reason(fake, provider):
    campaign = prolific_campaign(platform_ref="study1", status="live")
    stranger = taken(campaign, "PX", "SX")
    with pytest.raises(PlatformRefused, match="csv_bonuses: Unknown participant ids"):
        provider.bonus(stranger, Decimal("1"), "Thanks", key="k")
    assert CrowdAction.objects.get(action="bonus_setup").state == "failed"
    assert fake.paid == []


def test_block_list_through_a_participant_group_and_messages(fake, provider):
    campaign = prolific_campaign(platform_ref="study1")
    worker = Worker.objects.create(provider="prolific", external_id="P1")
    provider.block(worker, "Failed every check", campaign=campaign)
    assert fake.groups == {"group1": {"P1"}}
    campaign.refresh_from_db()
    assert campaign.provider_config["block_group_id"] == "group1"
    assert provider.study_body(campaign)["filters"] == [
        {"filter_id": "participant_group_blocklist", "selected_values": ["group1"]}
    ]
    provider.unblock(worker, campaign=campaign)
    assert fake.groups == {"group1": set()}
    provider.message(campaign, [worker], "Thanks", "Your bonus is on its way.")
    assert fake.messages == [
        {"recipient_id": "P1", "study_id": "study1", "body": "Thanks\n\nYour bonus is on its way."}
    ]


def test_pause_resume_and_finish_transition_the_study(fake, provider):
    campaign = prolific_campaign()
    provider.launch(campaign, confirm=True)
    campaign.refresh_from_db()
    provider.pause(campaign)
    campaign.status = "paused"
    provider.launch(campaign)  # resuming costs nothing new: no confirmation
    provider.finish(campaign)
    actions = [r["json"]["action"] for r in fake.calls("POST", "studies/study1/transition/")]
    assert actions == ["PUBLISH", "PAUSE", "START", "STOP"]
    assert fake.studies["study1"]["status"] == "COMPLETED"


def test_finishers_are_sent_to_prolific_with_the_study_code(fake, provider):
    campaign = prolific_campaign(provider_config={"completion_code": "C0DE1234"})
    assignment = taken(campaign, "P1", "S1")
    assert provider.completion_url(campaign, assignment) == (
        "https://app.prolific.com/submissions/complete?cc=C0DE1234"
    )


# Issue 23, finding 15: a completion code passed around is never approved -------------------


def test_sync_rejects_a_submission_with_no_finished_assignment(fake, provider):
    campaign = prolific_campaign(platform_ref="study1", status="live")
    taken(campaign, "P1", "S1")  # finished here
    unfinished = taken(campaign, "P2", "S2", status="started")
    fake.add_submissions(
        "study1",
        [
            {"id": "S1", "participant_id": "P1", "status": "AWAITING REVIEW"},
            {"id": "S2", "participant_id": "P2", "status": "AWAITING REVIEW"},
            {"id": "S3", "participant_id": "P3", "status": "AWAITING REVIEW"},
        ],
    )

    report = provider.sync(campaign)

    assert report.unmatched == ["S2", "S3"] and report.submitted == 1
    statuses = {r["id"]: r["status"] for r in fake.submissions["study1"]}
    assert statuses == {"S1": "AWAITING REVIEW", "S2": "REJECTED", "S3": "REJECTED"}
    [call] = fake.calls("POST", "submissions/S3/transition/")
    assert call["json"]["action"] == "REJECT" and call["json"]["rejection_category"] == "NO_DATA"
    rejections = CrowdAction.objects.filter(action="reject_unmatched", state="done")
    assert sorted(rejections.values_list("request__submission", flat=True)) == ["S2", "S3"]
    unfinished.refresh_from_db()
    assert unfinished.status == "started"  # the local assignment is left to expire
    # A second sync sends nothing again.
    provider.sync(campaign)
    assert len(fake.calls("POST", "submissions/S3/transition/")) == 1


def test_the_review_page_lists_the_rejected_unmatched_submissions(fake, provider, client):
    from tests import factories

    campaign = prolific_campaign(platform_ref="study1", status="live")
    fake.add_submissions(
        "study1", [{"id": "S9", "participant_id": "P9", "status": "AWAITING REVIEW"}]
    )
    provider.sync(campaign)
    client.force_login(factories.user("boss", staff=True))
    page = client.get(reverse("annotation:manage-campaign-review", args=[campaign.slug]))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-testid="unmatched-submissions"' in html and "S9" in html and "P9" in html
    assert CrowdAction.objects.get(action="reject_unmatched").state == "done"


# Issue 28, point 4: hooks (the receiving end: tests/annotation/api/test_prolific_hooks.py)


def test_a_launch_without_a_hook_workspace_subscribes_nothing(fake, provider):
    campaign = prolific_campaign()
    provider.launch(campaign, confirm=True)
    assert not [r for r in fake.requests if r["path"].startswith("hooks/")]
    assert fake.studies["study1"]["status"] == "ACTIVE"


def test_a_refused_subscription_does_not_stop_the_launch(fake, provider, settings):
    settings.EVALHUB_PROLIFIC_WORKSPACE_ID = "workspace-without-a-secret"
    settings.EVALHUB_PROLIFIC_HOOK_SECRET = "s3cret"
    campaign = prolific_campaign()
    provider.launch(campaign, confirm=True)
    assert len(fake.calls("POST", "hooks/subscriptions/")) == 1  # refused: no secret there
    assert fake.subscriptions == {}
    assert fake.studies["study1"]["status"] == "ACTIVE"
    assert CrowdAction.objects.get(action="publish").state == "done"
