"""The provider interface's shared parts: the ledger of platform calls, cost estimates,
review decisions and the status change's use of the provider hooks."""

from decimal import Decimal

import pytest

from annotation.campaigns import TransitionRefused, change_status
from annotation.crowd import PROVIDERS, get_provider
from annotation.crowd.base import CostEstimate, CrowdError, PlatformRefused
from annotation.crowd.ledger import CallInDoubt, once
from annotation.crowd.review import approve, block, pay_submitted, reject
from annotation.models import Assignment, CrowdAction, Worker
from tests.annotation.builders import ab_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    return ab_campaign(4, batch_size=2, redundancy=2, reward_per_batch=Decimal("1.25"))


def test_a_key_that_succeeded_is_never_sent_again(campaign, django_user_model):
    staff = django_user_model.objects.create_user("ada", is_staff=True)
    calls = []

    def pay():
        calls.append(1)
        return {"paid": True, "at": campaign.created}  # a datetime, as boto3 answers carry

    first = once(
        campaign=campaign,
        action="bonus",
        key="k1",
        request={"x": 1},
        call=pay,
        actor=staff,
        amount=Decimal("2"),
    )
    again = once(campaign=campaign, action="bonus", key="k1", request={"x": 1}, call=pay)
    assert calls == [1]
    assert first["paid"] and again["paid"]
    record = CrowdAction.objects.get()
    assert (record.state, record.actor, record.amount, record.request) == (
        "done",
        staff,
        Decimal("2.00"),
        {"x": 1},
    )
    assert record.response["at"] == str(campaign.created) and record.finished is not None


def test_a_refused_call_is_logged_and_may_be_retried(campaign):
    def refuse():
        raise PlatformRefused("insufficient funds")

    with pytest.raises(PlatformRefused):
        once(
            campaign=campaign,
            action="bonus",
            key="k2",
            request={},
            call=refuse,
            safe_to_retry=False,
        )
    record = CrowdAction.objects.get()
    assert (record.state, record.error) == ("failed", "insufficient funds")
    assert once(
        campaign=campaign, action="bonus", key="k2", request={}, call=lambda: {"ok": 1}
    ) == {"ok": 1}
    record.refresh_from_db()
    assert record.state == "done"


def test_an_unknown_outcome_of_an_unsafe_call_blocks_a_second_send(campaign):
    def timeout():
        raise TimeoutError("read timed out")

    with pytest.raises(TimeoutError):
        once(
            campaign=campaign,
            action="bonus",
            key="k3",
            request={},
            call=timeout,
            safe_to_retry=False,
        )
    with pytest.raises(CallInDoubt, match="check the platform"):
        once(campaign=campaign, action="bonus", key="k3", request={}, call=lambda: {})
    assert CrowdAction.objects.get().state == "pending"


def test_the_local_link_costs_its_rewards_and_no_fees(campaign):
    estimate = get_provider("local").estimate(campaign)
    assert estimate == CostEstimate("", 4, Decimal("1.25"), Decimal("5.00"), Decimal("0.00"))
    assert estimate.total == Decimal("5.00") and estimate.affordable is None


def test_each_platform_has_its_provider_and_unknown_keys_fall_back_to_the_link():
    assert {key: p.key for key, p in PROVIDERS.items()} == {
        "local": "local",
        "mturk": "mturk",
        "prolific": "prolific",
    }
    assert get_provider("nope").key == "local"


def test_a_platform_refusal_during_launch_is_a_refused_transition(campaign, settings):
    settings.EVALHUB_PROLIFIC_TOKEN = "t"
    campaign.provider, campaign.status = "prolific", "draft"
    campaign.save()
    with pytest.raises(TransitionRefused, match="pays real money"):
        change_status(campaign, "launch")
    campaign.refresh_from_db()
    assert campaign.status == "draft"


def _submitted(campaign, external_id):
    slot = Assignment.objects.filter(campaign=campaign, worker__isnull=True).first()
    slot.worker = Worker.objects.create(provider="local", external_id=external_id)
    slot.status = "submitted"
    slot.save()
    return slot


def test_link_assignments_are_reviewed_in_evalhub_only(campaign):
    good, bad = _submitted(campaign, "link:a"), _submitted(campaign, "link:b")
    approve(good)
    with pytest.raises(CrowdError, match="needs a reason"):
        reject(bad, "  ")
    reject(bad, "Random answers")
    good.refresh_from_db(), bad.refresh_from_db()
    assert (good.status, bad.status) == ("approved", "rejected")
    assert good.reviewed_at and bad.reviewed_at
    assert not CrowdAction.objects.exists()
    with pytest.raises(CrowdError, match="Only a submitted"):
        reject(good, "changed my mind")


def test_pay_approves_every_submitted_assignment_and_block_marks_the_worker(campaign):
    first, second = _submitted(campaign, "link:a"), _submitted(campaign, "link:b")
    assert pay_submitted(campaign) == 2
    assert set(
        Assignment.objects.filter(pk__in=[first.pk, second.pk]).values_list("status", flat=True)
    ) == {"approved"}
    block(first.worker, "Spam", campaign=campaign)
    first.worker.refresh_from_db()
    assert (first.worker.blocked, first.worker.blocked_reason) == (True, "Spam")
