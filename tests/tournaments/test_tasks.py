"""The sweep of dialogues whose lease lapsed (tournaments/tasks.py)."""

from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from tests import factories
from tournaments.models import PlannedDialogue, Tournament
from tournaments.tasks import reclaim_lapsed_dialogues

pytestmark = pytest.mark.django_db

Status = PlannedDialogue.Status


def planned(tournament, key, status, minutes_ago, lease=None):
    row = PlannedDialogue.objects.create(
        tournament=tournament, key=key, speakers=["a", "b"], index=0, seed=1, status=status
    )
    PlannedDialogue.objects.filter(pk=row.pk).update(
        updated=timezone.now() - timedelta(minutes=minutes_ago)
    )
    if lease is not None:
        factories.lease(f"collection:{row.pk}", lapsed=lease == "lapsed")
    return row.pk


def test_dialogues_whose_lease_lapsed_are_queued_again(settings):
    settings.EVALHUB_MAINTENANCE_INTERVAL_SECONDS = 600
    owner = factories.user("owner")
    cup = Tournament.objects.create(
        slug="cup", name="Cup", kind="spot_the_bot", owner=owner, status="collecting"
    )
    dead = planned(cup, "dead", Status.RUNNING, 1, lease="lapsed")
    lost = planned(cup, "lost", Status.PENDING, 30)
    planned(cup, "alive", Status.RUNNING, 30, lease="live")
    planned(cup, "just-queued", Status.PENDING, 1)
    planned(cup, "done", Status.COMPLETE, 30)
    planned(cup, "failed", Status.FAILED, 30)  # waits for a researcher's retry
    idle = Tournament.objects.create(
        slug="idle", name="Idle", kind="spot_the_bot", owner=owner, status="planning"
    )
    planned(idle, "not-started", Status.PENDING, 30)
    with mock.patch("tournaments.tasks.enqueue", return_value=True) as enqueue:
        assert reclaim_lapsed_dialogues() == 2
    assert sorted(call.args[1] for call in enqueue.call_args_list) == sorted([dead, lost])
    assert PlannedDialogue.objects.get(pk=dead).status == Status.RUNNING  # the task claims it
