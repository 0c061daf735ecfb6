"""MTurk through botocore's Stubber on a real client: every request is checked against
the service model, and each test states the exact requests it expects."""

import os
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from decimal import Decimal

import boto3
import pytest
from botocore.stub import ANY, Stubber
from django.urls import reverse

from annotation.crowd.base import ConfirmationRequired, PlatformRefused
from annotation.crowd.mturk import (
    PRODUCTION_ENDPOINT,
    SANDBOX_ENDPOINT,
    MTurkProvider,
    external_question,
    make_client,
    request_token,
)
from annotation.models import Assignment, Campaign, CrowdAction, Worker
from tests.annotation.builders import ab_campaign

pytestmark = pytest.mark.django_db
PUBLIC = "https://evalhub.example.org"
NS = "{http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd}"


@pytest.fixture(autouse=True)
def _public_url(settings):
    settings.EVALHUB_PUBLIC_URL = PUBLIC
    settings.EVALHUB_MTURK_ENDPOINT_URL = ""


@pytest.fixture
def client():
    return boto3.client(
        "mturk",
        region_name="us-east-1",
        endpoint_url=SANDBOX_ENDPOINT,
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )


@pytest.fixture
def stub(client):
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def sleeps():
    return []


@pytest.fixture
def provider(client, sleeps):
    return MTurkProvider(client_factory=lambda sandbox: client, sleep=sleeps.append)


def mturk_campaign(**fields):
    fields = {
        "batch_size": 2,
        "redundancy": 3,
        "reward_per_batch": Decimal("0.50"),
        "provider": "mturk",
        "status": "draft",
        "time_limit_minutes": 30,
        **fields,
    }
    return ab_campaign(4, **fields)


def qualifications(block="BLOCKQ"):
    return [
        {
            "QualificationTypeId": "000000000000000000L0",
            "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [95],
            "ActionsGuarded": "DiscoverPreviewAndAccept",
        },
        {
            "QualificationTypeId": "00000000000000000040",
            "Comparator": "GreaterThanOrEqualTo",
            "IntegerValues": [100],
            "ActionsGuarded": "DiscoverPreviewAndAccept",
        },
        {
            "QualificationTypeId": block,
            "Comparator": "DoesNotExist",
            "ActionsGuarded": "DiscoverPreviewAndAccept",
        },
    ]


def hit_params(batch, hit_type="HT1"):
    return {
        "HITTypeId": hit_type,
        "MaxAssignments": 3,
        "LifetimeInSeconds": 7 * 24 * 3600,
        "Question": ANY,
        "RequesterAnnotation": str(batch.pk),
        "UniqueRequestToken": request_token(
            "evalhub-hit", batch.campaign.pk, batch.campaign.slug, batch.pk
        ),
    }


def expect_block_type(stub, campaign):
    stub.add_response(
        "create_qualification_type",
        {"QualificationType": {"QualificationTypeId": "BLOCKQ"}},
        {
            "Name": f"EvalHub {campaign.slug}: blocked by quality control",
            "Keywords": "evalhub",
            "Description": "Workers holding this qualification may not work on this campaign.",
            "QualificationTypeStatus": "Active",
        },
    )


def expect_hit_type(stub, campaign, requirements=None):
    stub.add_response(
        "create_hit_type",
        {"HITTypeId": "HT1"},
        {
            "AutoApprovalDelayInSeconds": 3 * 24 * 3600,
            "AssignmentDurationInSeconds": 1800,
            "Reward": "0.50",
            "Title": campaign.title,
            "Keywords": "chatbot, evaluation, dialogue",
            "Description": campaign.title,
            "QualificationRequirements": requirements or qualifications(),
        },
    )


def test_clients_use_the_sandbox_or_production_endpoint_with_retries(settings):
    sandbox, production = make_client(True), make_client(False)
    assert sandbox.meta.endpoint_url == SANDBOX_ENDPOINT
    assert production.meta.endpoint_url == PRODUCTION_ENDPOINT
    assert sandbox.meta.config.retries == {"total_max_attempts": 6, "mode": "adaptive"}
    settings.EVALHUB_MTURK_ENDPOINT_URL = "http://127.0.0.1:9999"
    assert make_client(False).meta.endpoint_url == "http://127.0.0.1:9999"


def test_the_external_question_is_escaped_xml_with_a_frame_height():
    xml = external_question("https://x.org/work/c/?provider=mturk&batch=7", 800)
    root = ET.fromstring(xml)
    assert root.tag == f"{NS}ExternalQuestion"
    assert root.find(f"{NS}ExternalURL").text == "https://x.org/work/c/?provider=mturk&batch=7"
    assert root.find(f"{NS}FrameHeight").text == "800"
    assert "&amp;batch=7" in xml


def test_launch_creates_one_hit_type_and_one_hit_per_batch(provider, stub):
    campaign = mturk_campaign()
    batches = list(campaign.batches.order_by("position"))
    expect_block_type(stub, campaign)
    expect_hit_type(stub, campaign)
    for n, batch in enumerate(batches):
        stub.add_response(
            "create_hit_with_hit_type", {"HIT": {"HITId": f"HIT{n}"}}, hit_params(batch)
        )
    provider.launch(campaign)

    campaign.refresh_from_db()
    assert campaign.platform_ref == "HT1"
    assert campaign.provider_config["block_qualification_type_id"] == "BLOCKQ"
    assert [b.platform_ref for b in campaign.batches.order_by("position")] == ["HIT0", "HIT1"]
    actions = CrowdAction.objects.filter(action="create_hit").order_by("created")
    assert [a.state for a in actions] == ["done", "done"]
    assert actions[0].response["HITId"] == "HIT0"
    assert actions[0].amount == Decimal("1.80")  # 3 x (0.50 + 20%)
    # The question sent for the first batch: the batch's task URL under the public URL.
    question = actions[0].request["Question"]
    url = ET.fromstring(question).find(f"{NS}ExternalURL").text
    path = reverse("annotation:start", args=[campaign.slug])
    assert url == f"{PUBLIC}{path}?provider=mturk&batch={batches[0].pk}"


def test_optional_locales_and_training_qualification_join_the_requirements(provider, stub):
    campaign = mturk_campaign(
        provider_config={
            "locales": ["US", "GB"],
            "require_training_qualification": True,
            "block_qualification_type_id": "BLOCKQ",
            "training_qualification_type_id": "TRAINQ",
        }
    )
    requirements = qualifications()
    requirements[2:2] = [
        {
            "QualificationTypeId": "00000000000000000071",
            "Comparator": "In",
            "LocaleValues": [{"Country": "US"}, {"Country": "GB"}],
            "ActionsGuarded": "DiscoverPreviewAndAccept",
        },
        {
            "QualificationTypeId": "TRAINQ",
            "Comparator": "Exists",
            "ActionsGuarded": "DiscoverPreviewAndAccept",
        },
    ]
    expect_hit_type(stub, campaign, requirements)
    assert provider.hit_type(campaign) == "HT1"


def test_a_failed_create_then_success_makes_one_hit_with_the_same_token(provider, stub):
    campaign = mturk_campaign(platform_ref="HT1")
    batch = campaign.batches.order_by("position").first()
    params = hit_params(batch)
    stub.add_client_error(
        "create_hit_with_hit_type", "ServiceFault", "Try later", 500, expected_params=params
    )
    stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "HIT0"}}, params)
    assert provider.create_hit(batch, "HT1") == "HIT0"
    # Once created, a second launch of the same batch sends nothing (no response queued).
    assert provider.create_hit(batch, "HT1") == "HIT0"
    assert CrowdAction.objects.filter(action="create_hit").count() == 1
    batch.refresh_from_db()
    assert batch.platform_ref == "HIT0"


def test_a_token_already_used_finds_the_hit_instead_of_making_another(provider, stub):
    campaign = mturk_campaign(platform_ref="HT1")
    batch = campaign.batches.order_by("position").first()
    stub.add_client_error(
        "create_hit_with_hit_type",
        "RequestError",
        "The value of UniqueRequestToken has already been used.",
        400,
        expected_params=hit_params(batch),
    )
    stub.add_response(
        "list_hits",
        {
            "HITs": [{"HITId": "OTHER", "HITTypeId": "HT1", "RequesterAnnotation": "999999"}],
            "NextToken": "p2",
        },
        {"MaxResults": 100},
    )
    stub.add_response(
        "list_hits",
        {"HITs": [{"HITId": "HIT0", "HITTypeId": "HT1", "RequesterAnnotation": str(batch.pk)}]},
        {"MaxResults": 100, "NextToken": "p2"},
    )
    assert provider.create_hit(batch, "HT1") == "HIT0"
    assert CrowdAction.objects.get(action="create_hit").state == "done"


def test_a_refused_create_is_logged_as_failed_and_may_be_retried(provider, stub):
    campaign = mturk_campaign(platform_ref="HT1")
    batch = campaign.batches.order_by("position").first()
    stub.add_client_error(
        "create_hit_with_hit_type",
        "RequestError",
        "Reward too low",
        400,
        expected_params=hit_params(batch),
    )
    with pytest.raises(PlatformRefused, match="Reward too low"):
        provider.create_hit(batch, "HT1")
    action = CrowdAction.objects.get(action="create_hit")
    assert action.state == "failed" and "Reward too low" in action.error
    stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "HIT0"}}, hit_params(batch))
    assert provider.create_hit(batch, "HT1") == "HIT0"
    action.refresh_from_db()
    assert action.state == "done"


def test_throttling_is_retried_with_backoff(provider, stub, sleeps):
    campaign = mturk_campaign()
    stub.add_client_error("get_account_balance", "ThrottlingException", "Rate exceeded", 400)
    stub.add_client_error("get_account_balance", "ThrottlingException", "Rate exceeded", 400)
    stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
    estimate = provider.estimate(campaign)
    assert sleeps == [1.0, 2.0]
    assert estimate.balance == Decimal("10000.00")


def test_the_estimate_uses_the_fee_schedule(provider, stub):
    campaign = mturk_campaign()
    stub.add_response("get_account_balance", {"AvailableBalance": "2.00"}, {})
    estimate = provider.estimate(campaign)
    # 2 batches x 3 assignments x $0.50, plus 20%.
    assert (estimate.places, estimate.rewards, estimate.fees) == (
        6,
        Decimal("3.00"),
        Decimal("0.60"),
    )
    assert estimate.total == Decimal("3.60") and estimate.affordable is False

    Campaign.objects.filter(pk=campaign.pk).update(redundancy=10)
    campaign.refresh_from_db()
    stub.add_response("get_account_balance", {"AvailableBalance": "100.00"}, {})
    estimate = provider.estimate(campaign)
    # 10 or more assignments per HIT: 40%.
    assert (estimate.rewards, estimate.fees, estimate.affordable) == (
        Decimal("10.00"),
        Decimal("4.00"),
        True,
    )


def test_a_production_launch_needs_confirmation_and_money(provider, stub):
    campaign = mturk_campaign(platform_sandbox=False)
    with pytest.raises(ConfirmationRequired):
        provider.launch(campaign)
    stub.add_response("get_account_balance", {"AvailableBalance": "1.00"}, {})
    with pytest.raises(Exception, match="Not enough money"):
        provider.launch(campaign, confirm=True)
    assert not CrowdAction.objects.exists()
    campaign.refresh_from_db()
    assert campaign.platform_ref == ""


def submitted(campaign, batch, n, worker_id, ref, status="submitted"):
    slot = Assignment.objects.filter(batch=batch, worker__isnull=True).first()
    worker = Worker.objects.create(provider="mturk", external_id=worker_id)
    slot.worker, slot.provider_ref, slot.status = worker, ref, status
    slot.save()
    return slot


def test_sync_reads_every_page_and_records_the_platform_review(provider, stub):
    campaign = mturk_campaign(platform_ref="HT1", status="live")
    batch = campaign.batches.order_by("position").first()
    campaign.batches.filter(pk=batch.pk).update(platform_ref="HIT0")
    a1 = submitted(campaign, batch, 1, "W1", "A1")
    a2 = submitted(campaign, batch, 2, "W2", "A2")
    statuses = ["Submitted", "Approved", "Rejected"]
    stub.add_response(
        "list_assignments_for_hit",
        {
            "Assignments": [
                {
                    "AssignmentId": "A1",
                    "WorkerId": "W1",
                    "HITId": "HIT0",
                    "AssignmentStatus": "Submitted",
                }
            ],
            "NextToken": "next",
        },
        {"HITId": "HIT0", "MaxResults": 100, "AssignmentStatuses": statuses},
    )
    stub.add_response(
        "list_assignments_for_hit",
        {
            "Assignments": [
                {
                    "AssignmentId": "A2",
                    "WorkerId": "W2",
                    "HITId": "HIT0",
                    "AssignmentStatus": "Approved",
                },
                {
                    "AssignmentId": "A9",
                    "WorkerId": "W9",
                    "HITId": "HIT0",
                    "AssignmentStatus": "Submitted",
                },
            ]
        },
        {"HITId": "HIT0", "MaxResults": 100, "AssignmentStatuses": statuses, "NextToken": "next"},
    )
    report = provider.sync(campaign)
    assert (report.submitted, report.approved, report.unmatched) == (1, 1, ["A9"])
    a1.refresh_from_db(), a2.refresh_from_db()
    assert (a1.status, a2.status) == ("submitted", "approved")
    assert a2.reviewed_at is not None


def test_approve_reject_and_bonus_send_exact_requests_once(provider, stub):
    campaign = mturk_campaign(platform_ref="HT1", status="live")
    batch = campaign.batches.order_by("position").first()
    good = submitted(campaign, batch, 1, "W1", "A1")
    bad = submitted(campaign, batch, 2, "W2", "A2")
    stub.add_response(
        "approve_assignment",
        {},
        {"AssignmentId": "A1", "OverrideRejection": False, "RequesterFeedback": "Thanks!"},
    )
    stub.add_response(
        "reject_assignment",
        {},
        {"AssignmentId": "A2", "RequesterFeedback": "Failed 3 of 3 checks."},
    )
    token = request_token("evalhub-bonus", "quality-1")
    stub.add_response(
        "send_bonus",
        {},
        {
            "WorkerId": "W1",
            "BonusAmount": "0.25",
            "AssignmentId": "A1",
            "Reason": "Careful work",
            "UniqueRequestToken": token,
        },
    )
    provider.approve(good, feedback="Thanks!")
    provider.reject(bad, "Failed 3 of 3 checks.")
    provider.bonus(good, Decimal("0.25"), "Careful work", key="quality-1")
    provider.bonus(good, Decimal("0.25"), "Careful work", key="quality-1")  # nothing sent
    bonus = CrowdAction.objects.get(action="bonus")
    assert (bonus.state, bonus.amount, bonus.worker_id) == ("done", Decimal("0.30"), good.worker_id)
    assert set(CrowdAction.objects.values_list("action", flat=True)) == {
        "approve",
        "reject",
        "bonus",
    }


def test_block_unblock_notify_expire_and_delete(provider, stub):
    campaign = mturk_campaign(
        platform_ref="HT1", provider_config={"block_qualification_type_id": "BLOCKQ"}
    )
    campaign.batches.update(platform_ref="HIT0")
    Campaign.objects.filter(pk=campaign.pk).update(redundancy=3)
    worker = Worker.objects.create(provider="mturk", external_id="W1")
    stub.add_response(
        "associate_qualification_with_worker",
        {},
        {
            "QualificationTypeId": "BLOCKQ",
            "WorkerId": "W1",
            "IntegerValue": 1,
            "SendNotification": False,
        },
    )
    stub.add_response(
        "disassociate_qualification_from_worker",
        {},
        {"QualificationTypeId": "BLOCKQ", "WorkerId": "W1", "Reason": "Unblocked"},
    )
    stub.add_response("create_worker_block", {}, {"WorkerId": "W1", "Reason": "Spam"})
    stub.add_response("delete_worker_block", {}, {"WorkerId": "W1", "Reason": "Appeal accepted"})
    stub.add_response(
        "notify_workers",
        {"NotifyWorkersFailureStatuses": []},
        {"Subject": "New batches", "MessageText": "More work is up.", "WorkerIds": ["W1"]},
    )
    epoch = datetime.fromtimestamp(0, UTC)
    for _ in range(2):
        stub.add_response("update_expiration_for_hit", {}, {"HITId": "HIT0", "ExpireAt": epoch})
    for _ in range(2):
        stub.add_response("delete_hit", {}, {"HITId": "HIT0"})
    provider.block(worker, "Low agreement", campaign=campaign)
    provider.unblock(worker, campaign=campaign)
    provider.block(worker, "Spam", campaign=campaign, hard=True)
    provider.unblock(worker, campaign=campaign, hard=True, reason="Appeal accepted")
    provider.message(campaign, [worker], "New batches", "More work is up.")
    provider.finish(campaign)
    provider.cleanup(campaign)


def test_mturk_workers_are_identified_by_worker_and_assignment_ids(rf):
    provider = MTurkProvider()
    request = rf.get(
        "/",
        {
            "workerId": "AW1",
            "assignmentId": "AS1",
            "hitId": "H1",
            "turkSubmitTo": "https://workersandbox.mturk.com",
        },
    )
    arrival = provider.identify(request)
    assert (arrival.provider, arrival.external_id) == ("mturk", "AW1")
    assert arrival.extra == {
        "assignment_id": "AS1",
        "hit_id": "H1",
        "turk_submit_to": "https://workersandbox.mturk.com",
    }
    preview = rf.get("/", {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "H1"})
    preview.user = type("Anon", (), {"is_authenticated": False})()
    assert provider.identify(preview) is None


def _aws_credentials() -> bool:
    return boto3.session.Session().get_credentials() is not None


@pytest.mark.mturk_sandbox
@pytest.mark.skipif(
    not _aws_credentials(), reason="no AWS credentials: the MTurk sandbox test was not run"
)
def test_the_sandbox_answers_with_its_play_money_balance():
    """Runs against the real MTurk sandbox (no money moves) when credentials are present."""
    client = make_client(sandbox=True)
    assert Decimal(client.get_account_balance()["AvailableBalance"]) > 0
    assert os.environ.get("EVALHUB_MTURK_ENDPOINT_URL", "") in ("", SANDBOX_ENDPOINT)


def test_passing_training_grants_the_campaigns_custom_qualification(provider, stub):
    campaign = mturk_campaign()
    worker = Worker.objects.create(provider="mturk", external_id="W1")
    stub.add_response(
        "create_qualification_type",
        {"QualificationType": {"QualificationTypeId": "TRAINQ"}},
        {
            "Name": f"EvalHub {campaign.slug}: training passed",
            "Keywords": "evalhub",
            "Description": "Granted to workers who passed this campaign's training.",
            "QualificationTypeStatus": "Active",
        },
    )
    stub.add_response(
        "associate_qualification_with_worker",
        {},
        {
            "QualificationTypeId": "TRAINQ",
            "WorkerId": "W1",
            "IntegerValue": 1,
            "SendNotification": False,
        },
    )
    provider.grant_training(worker, campaign=campaign)
    campaign.refresh_from_db()
    assert campaign.provider_config["training_qualification_type_id"] == "TRAINQ"
