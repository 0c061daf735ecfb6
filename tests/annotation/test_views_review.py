"""The staff review page: submitted work with quality figures and platform ids, bulk
decisions, a required reason to reject, and the log of who decided what."""

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from annotation.models import Assignment, Worker
from tests import factories
from tests.annotation.test_review_queue import assignments, submitted

pytestmark = pytest.mark.django_db


def url(c):
    return reverse("annotation:manage-campaign-review", args=[c.slug])


@pytest.fixture
def staff(client):
    client.force_login(factories.user("boss", staff=True))
    return client


def test_only_staff_review(client):
    c = submitted(1)
    client.force_login(factories.user("researcher"))
    assert client.get(url(c)).status_code == 403
    assert client.post(url(c), {"action": "approve", "key": "k"}).status_code == 403


def test_the_page_lists_submitted_work_with_figures_and_platform_ids(staff):
    c = submitted(2)
    a = assignments(c)[0]
    Worker.objects.filter(pk=a.worker_id).update(provider="mturk", external_id="AWORKER")
    Assignment.objects.filter(pk=a.pk).update(provider_ref="ASG-77")
    html = staff.get(url(c)).content.decode()
    assert "AWORKER" in html and "ASG-77" in html and "w1" in html
    assert "3.0" in html  # median seconds per item of w0


def test_bulk_approve_from_the_page(staff):
    c = submitted(2)
    ids = [str(a.public_id) for a in assignments(c)]
    response = staff.post(url(c), {"action": "approve", "assignments": ids, "key": "k1"})
    assert response.status_code == 302
    assert not Assignment.objects.filter(campaign=c, status="submitted").exists()
    assert Assignment.objects.filter(campaign=c, status="approved").count() == 2
    html = staff.get(url(c)).content.decode()
    assert "No submitted work waits for review." in html
    assert html.count("Approved") >= 2 and "boss" in html


def test_a_reject_without_a_reason_is_refused_on_the_page(staff):
    c = submitted(1)
    ids = [str(assignments(c)[0].public_id)]
    response = staff.post(url(c), {"action": "reject", "assignments": ids, "key": "k"})
    assert response.status_code == 400
    assert "needs a reason" in response.content.decode()
    assert Assignment.objects.get(public_id=ids[0]).status == "submitted"
    assert not LogEntry.objects.exists()
