"""`manage.py crowd ...` against a stubbed MTurk client and the fake Prolific server,
and the periodic sync task."""

from decimal import Decimal
from io import StringIO

import boto3
import pytest
from botocore.stub import Stubber
from django.core.management import CommandError, call_command

from annotation import tasks
from annotation.crowd import PROVIDERS
from annotation.crowd.mturk import MTurkProvider
from annotation.crowd.prolific import ProlificProvider
from annotation.models import Assignment, Campaign, CrowdAction, Worker
from tests.annotation.builders import ab_campaign

from .crowd.fake_prolific import FakeProlific

pytestmark = pytest.mark.django_db
PUBLIC = "https://evalhub.example.org"


@pytest.fixture(autouse=True)
def _public_url(settings):
    settings.EVALHUB_PUBLIC_URL = PUBLIC


@pytest.fixture
def stub(monkeypatch):
    client = boto3.client(
        "mturk", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t"
    )
    monkeypatch.setitem(
        PROVIDERS,
        "mturk",
        MTurkProvider(client_factory=lambda sandbox: client, sleep=lambda s: None),
    )
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def fake(settings, monkeypatch):
    monkeypatch.setitem(PROVIDERS, "prolific", ProlificProvider(sleep=lambda s: None))
    with FakeProlific() as server:
        settings.EVALHUB_PROLIFIC_API_URL = server.url
        settings.EVALHUB_PROLIFIC_TOKEN = "sekrit"
        yield server


def crowd(*args) -> str:
    out = StringIO()
    call_command("crowd", *args, stdout=out)
    return out.getvalue()


def campaign(**fields):
    fields = {
        "batch_size": 2,
        "redundancy": 2,
        "reward_per_batch": Decimal("0.40"),
        "status": "draft",
        **fields,
    }
    return ab_campaign(4, **fields)


def test_a_campaign_on_its_link_needs_a_provider():
    c = campaign()
    with pytest.raises(CommandError, match="shared link only"):
        crowd("estimate", c.slug)


def test_estimate_on_mturk_prints_costs_and_balance(stub):
    c = campaign()
    stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
    out = crowd("estimate", c.slug, "--provider", "mturk", "--sandbox")
    assert "4 paid submissions x 0.40 USD = 1.60 USD" in out
    assert "platform fees: 0.32 USD" in out and "total: 1.92 USD" in out
    assert "account balance: 10000.00 USD (enough)" in out
    c.refresh_from_db()
    assert (c.provider, c.platform_sandbox) == ("mturk", True)


def test_launch_on_the_mturk_sandbox_goes_live(stub):
    c = campaign(provider="mturk")
    stub.add_response(
        "create_qualification_type", {"QualificationType": {"QualificationTypeId": "B"}}, None
    )
    stub.add_response("create_hit_type", {"HITTypeId": "HT"}, None)
    stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "H1"}}, None)
    stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "H2"}}, None)
    out = crowd("launch", c.slug, "--sandbox")
    c.refresh_from_db()
    assert (c.status, c.platform_ref) == ("live", "HT")
    assert "live on mturk sandbox (HT)" in out
    assert sorted(c.batches.values_list("platform_ref", flat=True)) == ["H1", "H2"]


def test_a_production_launch_without_yes_is_refused_and_nothing_is_sent(stub):
    c = campaign(provider="mturk")
    with pytest.raises(CommandError, match="confirm it"):
        crowd("launch", c.slug, "--production")
    c.refresh_from_db()
    assert (c.status, c.platform_sandbox, c.platform_ref) == ("draft", False, "")


def test_launch_on_prolific_with_yes_then_sync_pay_and_finish(fake):
    c = campaign()
    with pytest.raises(CommandError, match="pays real money"):
        crowd("launch", c.slug, "--provider", "prolific")
    crowd("launch", c.slug, "--provider", "prolific", "--yes")
    c.refresh_from_db()
    assert (c.status, c.provider, c.platform_ref) == ("live", "prolific", "study1")

    slot = Assignment.objects.filter(campaign=c, worker__isnull=True).first()
    slot.worker = Worker.objects.create(provider="prolific", external_id="P1")
    slot.provider_ref, slot.status = "S1", "submitted"
    slot.save()
    fake.add_submissions(
        "study1", [{"id": "S1", "participant_id": "P1", "status": "AWAITING REVIEW"}]
    )
    assert "submitted 1, approved 0" in crowd("sync", c.slug)

    with pytest.raises(CommandError, match="add --yes"):
        crowd("pay", c.slug)
    assert "approved 1 assignments" in crowd("pay", c.slug, "--yes")
    slot.refresh_from_db()
    assert slot.status == "approved"
    assert fake.submissions["study1"][0]["status"] == "APPROVED"

    assert "finished and cleaned up" in crowd("finish", c.slug)
    c.refresh_from_db()
    assert c.status == "finished" and fake.studies["study1"]["status"] == "COMPLETED"
    assert list(CrowdAction.objects.order_by("created").values_list("action", flat=True)) == [
        "create_study",
        "publish",
        "approve",
    ]


def test_an_unknown_campaign_is_named():
    with pytest.raises(CommandError, match="No campaign 'nope'"):
        crowd("sync", "nope")


def test_the_periodic_task_syncs_live_platform_campaigns(fake):
    live = campaign(provider="prolific", status="live", platform_ref="study1")
    campaign(provider="prolific", status="draft")  # not launched: nothing to sync
    campaign(status="live")  # on its link only
    fake.add_submissions(
        "study1", [{"id": "SX", "participant_id": "PX", "status": "AWAITING REVIEW"}]
    )
    assert list(tasks.campaigns_to_sync()) == [live]
    assert tasks.sync_crowd_campaigns.delay().get() == 1
    assert fake.calls("GET", "submissions/")[0]["query"] == {"study": "study1"}
    assert tasks.sync_crowd_campaign(live.pk).endswith("unmatched 1")  # a preview
    Campaign.objects.filter(pk=live.pk).update(status="finished")
    assert list(tasks.campaigns_to_sync()) == []


def test_beat_runs_the_crowd_sync_periodically(settings):
    from evalhub.celery import app

    entries = {entry["task"]: entry["schedule"] for entry in app.conf.beat_schedule.values()}
    assert entries["annotation.tasks.sync_crowd_campaigns"] == settings.EVALHUB_CROWD_SYNC_SECONDS
    app.loader.import_default_modules()
    assert "annotation.tasks.sync_crowd_campaigns" in app.tasks
