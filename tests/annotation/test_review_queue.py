"""The review of submitted work: rows with quality figures, bulk decisions, their log."""

from datetime import timedelta
from decimal import Decimal

import boto3
import pytest
from botocore.stub import ANY, Stubber
from django.contrib.admin.models import LogEntry

from annotation.crowd import PROVIDERS
from annotation.crowd.mturk import MTurkProvider
from annotation.models import Assignment, Campaign, CrowdAction, Qualification, Worker
from annotation.review_queue import ReviewInvalid, decide, review_log, review_rows
from tests import factories
from tests.annotation.builders import ab_campaign
from tests.annotation.test_progress import NOW, judge, shown

pytestmark = pytest.mark.django_db


@pytest.fixture
def boss():
    return factories.user("boss", staff=True)


@pytest.fixture
def stub(monkeypatch):
    client = boto3.client(
        "mturk", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t"
    )
    monkeypatch.setitem(
        PROVIDERS, "mturk", MTurkProvider(client_factory=lambda s: client, sleep=lambda s: None)
    )
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


def submitted(n_workers: int = 2, **fields) -> Campaign:
    """A campaign of one batch of 2 items, judged by `n_workers` link workers (submitted)."""
    c = ab_campaign(2, batch_size=2, redundancy=n_workers, **fields)
    for w in range(n_workers):
        for item in shown(c):
            judge(item, f"w{w}", at=NOW - timedelta(minutes=5), ms=3000 + 1000 * w)
    return c


def assignments(c):
    return list(Assignment.objects.filter(campaign=c, status="submitted").order_by("pk"))


def test_rows_carry_the_workers_figures_and_training_outcome():
    c = submitted(2, requires_training=False)
    rows = review_rows(c)
    assert [r.assignment.worker.external_id for r in rows] == ["w0", "w1"]
    first = rows[0].figures
    assert first.judgments == 2 and first.median_seconds == 3.0
    assert first.agreement.hits == 2 and first.agreement.total == 2
    assert rows[0].training == ""


def test_training_outcomes_are_shown_when_the_campaign_trains(monkeypatch):
    c = submitted(2)
    monkeypatch.setattr("annotation.review_queue.training_key", lambda campaign: "ab:test")
    Campaign.objects.filter(pk=c.pk).update(requires_training=True)
    c.refresh_from_db()
    w0, w1 = Worker.objects.get(external_id="w0"), Worker.objects.get(external_id="w1")
    Qualification.objects.create(worker=w0, key="ab:test", passed=True, attempts=1)
    Qualification.objects.create(worker=w1, key="ab:test", passed=False, attempts=2)
    assert [r.training for r in review_rows(c)] == ["passed", "not passed (2 attempts)"]


def test_bulk_approve_decides_each_and_logs_who(boss):
    c = submitted(2)
    outcome = decide(c, [a.public_id for a in assignments(c)], "approve", actor=boss)
    assert len(outcome.done) == 2 and not outcome.failed
    assert set(
        Assignment.objects.filter(campaign=c)
        .exclude(status="open")
        .values_list("status", flat=True)
    ) == {"approved"}
    assert LogEntry.objects.filter(user=boss, change_message="Approved").count() == 2
    assert [e["who"] for e in review_log(c)] == ["boss", "boss"]


def test_a_rejection_without_a_reason_decides_nothing(boss):
    c = submitted(1)
    with pytest.raises(ReviewInvalid, match="reason"):
        decide(c, [assignments(c)[0].public_id], "reject", actor=boss, reason=" ")
    assert assignments(c)[0].status == "submitted"
    assert not LogEntry.objects.exists()


def test_another_campaigns_assignment_is_refused(boss):
    c, other = submitted(1), submitted(1)
    with pytest.raises(ReviewInvalid, match="not this campaign's"):
        decide(c, [assignments(other)[0].public_id], "approve", actor=boss)
    assert assignments(other)[0].status == "submitted"


def test_a_bonus_to_a_link_worker_fails_for_that_row_only(boss):
    c = submitted(1)
    outcome = decide(
        c,
        [assignments(c)[0].public_id],
        "bonus",
        actor=boss,
        reason="Great",
        amount="0.50",
        key="k",
    )
    assert not outcome.done and "crowd platform" in outcome.failed[0][1]


def test_block_blocks_the_worker_with_the_reason(boss):
    c = submitted(1)
    decide(c, [assignments(c)[0].public_id], "block", actor=boss, reason="Clicked at random")
    worker = Worker.objects.get(external_id="w0")
    assert worker.blocked and worker.blocked_reason == "Clicked at random"
    assert LogEntry.objects.get(user=boss).change_message == "Blocked: Clicked at random"


def on_mturk(c):
    Campaign.objects.filter(pk=c.pk).update(provider="mturk")
    for n, a in enumerate(assignments(c)):
        Worker.objects.filter(pk=a.worker_id).update(provider="mturk", external_id=f"AW{n}")
        Assignment.objects.filter(pk=a.pk).update(provider_ref=f"ASG{n}")
    c.refresh_from_db()
    return c


def test_mturk_approvals_and_bonuses_go_to_the_platform_and_the_ledger(boss, stub):
    c = on_mturk(submitted(1, reward_per_batch=Decimal("0.50")))
    [a] = assignments(c)
    stub.add_response(
        "approve_assignment", {}, {"AssignmentId": "ASG0", "OverrideRejection": False}
    )
    decide(c, [a.public_id], "approve", actor=boss)
    stub.add_response(
        "send_bonus",
        {},
        {
            "WorkerId": "AW0",
            "BonusAmount": "0.25",
            "AssignmentId": "ASG0",
            "Reason": "Careful work",
            "UniqueRequestToken": ANY,
        },
    )
    decide(c, [a.public_id], "bonus", actor=boss, reason="Careful work", amount="0.25", key="r1")
    # The same bonus round again never pays twice.
    decide(c, [a.public_id], "bonus", actor=boss, reason="Careful work", amount="0.25", key="r1")
    actions = CrowdAction.objects.filter(campaign=c).order_by("created")
    assert [(x.action, x.state, x.actor) for x in actions] == [
        ("approve", "done", boss),
        ("bonus", "done", boss),
    ]
    assert Assignment.objects.get(pk=a.pk).status == "approved"
