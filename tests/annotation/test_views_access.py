"""Whether an assignment still takes answers: the one check the item pages and the chat
stage share (annotation/views/access.py)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.allocation import next_assignment
from annotation.models import Assignment, Worker
from annotation.views.access import why_unusable
from tests.annotation.builders import ab_campaign

pytestmark = pytest.mark.django_db


def started():
    worker = Worker.objects.create(provider="local", external_id="link:w1")
    return next_assignment(ab_campaign(), worker)


def test_a_started_assignment_in_time_is_usable():
    assignment = started()
    assert assignment.status == Assignment.Status.STARTED
    assert why_unusable(assignment) is None


def test_a_submitted_assignment_is_done():
    assignment = started()
    assignment.status = Assignment.Status.SUBMITTED
    assert why_unusable(assignment) == "done"


def test_an_assignment_past_its_time_says_so():
    assignment = started()
    assignment.expires_at = timezone.now() - timedelta(seconds=1)
    assert why_unusable(assignment).startswith("The time for this batch ran out.")


def test_a_returned_assignment_is_no_longer_the_workers():
    assignment = started()
    assignment.status = Assignment.Status.OPEN
    assert why_unusable(assignment).startswith("This batch is no longer yours")
