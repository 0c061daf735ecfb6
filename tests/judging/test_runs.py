"""Starting, pausing and resuming judge runs, and which items a run judges."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Item
from judging import runs, sending, tasks
from judging.models import AutomaticJudgment, JudgeRun
from tests import factories
from tests.judging import builders

pytestmark = pytest.mark.django_db


def start(judge, campaign, **options):
    return runs.start(judge.owner, judge, builders.default_rubric("ab"), campaign, **options)


def test_a_run_counts_only_task_items_shown_to_workers():
    judge = builders.judge(None)
    campaign = builders.ab(3, gold=1, owner=judge.owner)
    Item.objects.create(
        campaign=campaign, position=99, content={"context": ["x"]}, auto_payload={"choice": "tie"}
    )
    run = start(judge, campaign)
    assert (run.status, run.items_total) == ("queued", 3)
    assert list(runs.pending_items(run)) == list(
        campaign.items.filter(role="task", auto_payload__isnull=True).order_by("position")
    )


def test_a_campaign_without_task_items_is_refused():
    judge = builders.judge(None)
    campaign = builders.campaign_without_items(owner=judge.owner)
    with pytest.raises(runs.RunInvalid, match="no task items"):
        start(judge, campaign)
    assert not JudgeRun.objects.exists()


def test_a_judge_on_an_evalhub_protocol_endpoint_cannot_run():
    judge = builders.judge(None)
    judge.endpoint.protocol = "evalhub"
    judge.endpoint.save()
    with pytest.raises(runs.RunInvalid, match="OpenAI-compatible"):
        start(judge, builders.ab(1, owner=judge.owner))


def test_staff_may_run_their_judge_on_any_campaign():
    staff = factories.user(staff=True)
    judge = builders.judge(None, owner=staff)
    run = start(judge, builders.ab(1, owner=factories.user()))
    assert run.campaign.owner != staff and run.status == "queued"


@pytest.mark.parametrize(
    "settings_", [{"concurrency": 0}, {"max_attempts": 9}, {"concurrency": "2"}]
)
def test_settings_out_of_range_are_refused_naming_them(settings_):
    judge = builders.judge(None)
    with pytest.raises(runs.RunInvalid) as refused:
        start(judge, builders.ab(1, owner=judge.owner), **settings_)
    assert refused.value.problems[0].field == next(iter(settings_))
    assert not JudgeRun.objects.exists()


def test_a_done_run_resumes_only_when_items_were_added():
    judge = builders.judge(None)
    campaign = builders.ab(1, owner=judge.owner)
    run = start(judge, campaign)
    AutomaticJudgment.objects.create(run=run, item=campaign.items.get(), status="ok")
    JudgeRun.objects.filter(pk=run.pk).update(status="done")
    run.refresh_from_db()
    with pytest.raises(runs.RunInvalid, match="judged by this run already"):
        runs.resume(run)
    Item.objects.create(campaign=campaign, position=50, content=dict(campaign.items.get().content))
    assert runs.resume(run).status == "queued"


def test_a_done_run_cannot_be_paused():
    judge = builders.judge(None)
    run = start(judge, builders.ab(1, owner=judge.owner))
    JudgeRun.objects.filter(pk=run.pk).update(status="done")
    with pytest.raises(runs.RunInvalid, match="A done run cannot be paused"):
        runs.pause(run)
    assert run.status == "done"


def test_the_sweep_sends_dead_and_lost_runs_again(monkeypatch):
    judge = builders.judge(None)
    old = timezone.now() - timedelta(hours=1)
    campaign = builders.ab(1, owner=judge.owner)
    dead = start(judge, campaign)
    lost = start(judge, campaign)
    alive = start(judge, campaign)
    paused = start(judge, campaign)
    just_queued = start(judge, campaign)
    JudgeRun.objects.filter(pk=dead.pk).update(status="running", heartbeat=timezone.now())
    factories.lease(f"judge-run:{dead.pk}", lapsed=True)
    JudgeRun.objects.filter(pk=lost.pk).update(created=old)
    JudgeRun.objects.filter(pk=alive.pk).update(status="running", heartbeat=old)
    factories.lease(f"judge-run:{alive.pk}")
    JudgeRun.objects.filter(pk=paused.pk).update(status="paused", heartbeat=old)
    sent = []
    monkeypatch.setattr(tasks, "enqueue", lambda task, pk: sent.append(pk) or True)
    assert tasks.reclaim_lapsed_judge_runs() == 2
    assert sorted(sent) == sorted([dead.pk, lost.pk])
    assert just_queued.pk not in sent


def test_resume_acts_at_once_on_a_running_run_whose_lease_lapsed(
    monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    monkeypatch.setattr(sending, "send", lambda run: sent.append(run.pk) or True)
    judge = builders.judge(None)
    run = start(judge, builders.ab(1, owner=judge.owner))
    JudgeRun.objects.filter(pk=run.pk).update(status="running", heartbeat=timezone.now())
    factories.lease(f"judge-run:{run.pk}", lapsed=True)
    with django_capture_on_commit_callbacks(execute=True):
        assert runs.resume(run).status == "queued"
    assert JudgeRun.objects.get(pk=run.pk).status == "queued" and sent == [run.pk]


def test_resume_refuses_a_running_run_whose_worker_is_alive(monkeypatch):
    monkeypatch.setattr(sending, "send", lambda run: True)
    judge = builders.judge(None)
    run = start(judge, builders.ab(1, owner=judge.owner))
    JudgeRun.objects.filter(pk=run.pk).update(status="running")
    factories.lease(f"judge-run:{run.pk}")
    with pytest.raises(runs.RunInvalid, match="A running run cannot be resumed"):
        runs.resume(run)
    assert JudgeRun.objects.get(pk=run.pk).status == "running"


def test_the_task_judges_a_queued_run(fake):
    from tests.judging import fake_judges

    server = fake(fake_judges.answers({"better": "tie"}))
    judge = builders.judge(server)
    run = start(judge, builders.ab(2, owner=judge.owner))
    assert tasks.run_judge.delay(run.pk).get() == "done"
    run.refresh_from_db()
    assert (run.status, run.items_done) == ("done", 2)
    assert tasks.run_judge.delay(run.pk).get() == "skipped"  # idempotent
