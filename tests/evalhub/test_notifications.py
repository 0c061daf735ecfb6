"""Notices on the site and by email: the service, each user's choices, the events wired
(submission scored or failed, campaign complete, tournament results ready), and the pages."""

import pytest
from django.core import mail
from django.urls import reverse

from analysis.runs.tasks import analyze_tournament
from annotation.models import Assignment
from annotation.services import submit_if_complete
from evalhub import tasks
from evalhub.models import Notice, NoticeKind, NoticePreference
from evalhub.notifications import notify, notify_staff, set_preferences
from tests import factories
from tests.analysis import builders as analysis_builders
from tests.annotation.builders import ab_campaign
from tests.annotation.test_progress import NOW, judge, shown

pytestmark = pytest.mark.django_db

SCORED = NoticeKind.SUBMISSION_SCORED


def test_a_notice_is_stored_and_emailed_after_commit(django_capture_on_commit_callbacks):
    user = factories.user("ann")
    with django_capture_on_commit_callbacks(execute=True):
        notice = notify(user, SCORED, "Your submission was scored.", "/systems/x/")
    assert Notice.objects.get() == notice and notice.read_at is None
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["ann@example.org"]
    assert (
        "Your submission was scored." in mail.outbox[0].body
        and "/systems/x/" in mail.outbox[0].body
    )


def test_a_rolled_back_event_sends_no_email(django_capture_on_commit_callbacks):
    user = factories.user()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        notify(user, SCORED, "scored")
    assert len(callbacks) == 1 and mail.outbox == []  # sent only when the commit happens


def test_each_user_chooses_site_and_email_per_kind(django_capture_on_commit_callbacks):
    user = factories.user()
    set_preferences(user, {SCORED: (False, False), NoticeKind.SUBMISSION_FAILED: (True, False)})
    with django_capture_on_commit_callbacks(execute=True):
        assert notify(user, SCORED, "scored") is None
        assert notify(user, NoticeKind.SUBMISSION_FAILED, "failed") is not None
    assert list(Notice.objects.values_list("kind", flat=True)) == ["submission_failed"]
    assert mail.outbox == []


def test_the_same_event_is_told_once(django_capture_on_commit_callbacks):
    user = factories.user()
    with django_capture_on_commit_callbacks(execute=True):
        notify(user, SCORED, "scored", once_key="k1")
        assert notify(user, SCORED, "scored", once_key="k1") is None
    assert Notice.objects.count() == 1 and len(mail.outbox) == 1


def test_notify_staff_tells_every_staff_user():
    factories.user(staff=True)
    factories.user(staff=True)
    factories.user()
    assert notify_staff(NoticeKind.LAUNCH_REQUESTED, "A launch was requested.") == 2
    assert Notice.objects.filter(user__is_staff=True).count() == 2


def test_a_scored_submission_tells_its_owner(django_capture_on_commit_callbacks):
    owner = factories.user()
    submission = factories.submission(
        factories.system(owner, name="Chatty"), factories.prompt_set(2)
    )
    with django_capture_on_commit_callbacks(execute=True):
        tasks.compute_submission_metrics(submission.pk)
        tasks.compute_submission_metrics(submission.pk)  # a retry tells nobody again
    notice = Notice.objects.get(user=owner)
    assert notice.kind == SCORED and "Chatty" in notice.text
    assert notice.url == submission.get_absolute_url()
    assert len(mail.outbox) == 1


def test_a_failed_submission_tells_its_owner(monkeypatch):
    owner = factories.user()
    submission = factories.submission(factories.system(owner), factories.prompt_set(2))

    def broken(*args):
        raise ValueError("boom")

    monkeypatch.setattr(tasks, "compute_text_metrics", broken)
    with pytest.raises(ValueError):
        tasks.compute_submission_metrics(submission.pk)
    notice = Notice.objects.get(user=owner)
    assert notice.kind == NoticeKind.SUBMISSION_FAILED and "boom" in notice.text


def _submit_all():
    Assignment.objects.update(status=Assignment.Status.STARTED)
    for assignment in Assignment.objects.order_by("pk"):
        assert submit_if_complete(assignment, assignment.judgments.count())


def test_a_campaign_tells_its_owner_when_its_last_batch_is_submitted(
    django_capture_on_commit_callbacks,
):
    owner = factories.user(staff=True)
    c = ab_campaign(4, redundancy=1, batch_size=2, owner=owner)
    for item in shown(c):
        judge(item, "w1", at=NOW)
    # The campaign finishes (and tells its owner) once the last submission commits.
    with django_capture_on_commit_callbacks(execute=True):
        _submit_all()
    notice = Notice.objects.get(user=owner)
    assert notice.kind == NoticeKind.CAMPAIGN_COMPLETE and c.title in notice.text


def test_an_unfinished_campaign_tells_nobody():
    owner = factories.user(staff=True)
    c = ab_campaign(4, redundancy=2, batch_size=2, owner=owner)
    for item in shown(c):
        judge(item, "w1", at=NOW)  # one judgment of the two wanted
    _submit_all()
    assert not Notice.objects.exists()


def test_a_tournaments_owner_hears_its_results_are_ready():
    tournament = analysis_builders.spot_the_bot_tournament()
    owner = factories.user()
    type(tournament).objects.filter(pk=tournament.pk).update(owner=owner)
    tournament.refresh_from_db()
    run = analyze_tournament(tournament, analysis_builders.FAST, synchronous=True)
    assert run.status == "succeeded"
    notice = Notice.objects.get(user=owner)
    assert notice.kind == NoticeKind.TOURNAMENT_RESULTS
    assert notice.url == tournament.get_absolute_url()


def test_the_notices_page_lists_and_marks_read(client):
    user = factories.user()
    notify(user, SCORED, "Your submission was scored.", "/systems/x/")
    notify(factories.user(), SCORED, "Someone else's.")
    client.force_login(user)
    page = client.get(reverse("notices")).content.decode()
    assert "Your submission was scored." in page and "Someone else" not in page
    assert "Notices (1)" in page
    response = client.post(reverse("notices-read"))
    assert response.status_code == 302
    assert not Notice.objects.filter(user=user, read_at__isnull=True).exists()
    assert "Notices (1)" not in client.get(reverse("notices")).content.decode()


def test_the_account_page_saves_the_choices(client):
    user = factories.user()
    client.force_login(user)
    page = client.get(reverse("account")).content.decode()
    assert "A submission of mine was scored" in page
    data = {f"{kind}_site": "on" for kind in NoticeKind.values}
    data.pop(f"{SCORED}_site")  # unticked: no site notice of scored submissions
    response = client.post(reverse("notice-preferences"), data)
    assert response.status_code == 302
    pref = NoticePreference.objects.get(user=user, kind=SCORED)
    assert (pref.on_site, pref.by_email) == (False, False)
    assert NoticePreference.objects.get(user=user, kind="submission_failed").on_site is True


def test_the_notice_pages_need_a_login_and_a_post(client):
    assert client.get(reverse("notices")).status_code == 302
    client.force_login(factories.user())
    assert client.get(reverse("notices-read")).status_code == 405
    assert client.get(reverse("notice-preferences")).status_code == 405
