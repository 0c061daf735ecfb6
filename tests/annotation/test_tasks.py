"""Celery tasks of annotation: MTurk's training qualification granted when a worker passes
a campaign's training (the periodic sync is tested with the crowd command)."""

import boto3
import pytest
from botocore.stub import Stubber

from annotation.crowd import PROVIDERS
from annotation.crowd.mturk import MTurkProvider
from annotation.models import Campaign, Worker
from tests.annotation.test_training import abc_campaign, train

pytestmark = pytest.mark.django_db


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


def mturk_worker():
    return Worker.objects.create(provider="mturk", external_id="AW1")


def test_passing_training_grants_the_mturk_qualification(stub, django_capture_on_commit_callbacks):
    c = abc_campaign(provider="mturk")
    Campaign.objects.filter(pk=c.pk).update(
        provider_config={"training_qualification_type_id": "TQ"}
    )
    c.refresh_from_db()
    stub.add_response(
        "associate_qualification_with_worker",
        {},
        {
            "QualificationTypeId": "TQ",
            "WorkerId": "AW1",
            "IntegerValue": 1,
            "SendNotification": False,
        },
    )
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        qualification = train(c, mturk_worker(), 3, 3, 0)
    assert qualification.passed and len(callbacks) == 1


def test_failing_training_grants_nothing(stub, django_capture_on_commit_callbacks):
    c = abc_campaign(provider="mturk")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        qualification = train(c, mturk_worker(), 0, 0, 3)
    assert not qualification.passed and not callbacks


def test_a_link_worker_passing_on_an_mturk_campaign_is_not_sent_to_mturk(
    stub, django_capture_on_commit_callbacks
):
    c = abc_campaign(provider="mturk")
    link = Worker.objects.create(provider="local", external_id="link:w1")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert train(c, link, 0, 0, 0).passed
    assert not callbacks
