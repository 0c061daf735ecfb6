"""Staff review submitted work in bulk, and a researcher's paid launch goes live once staff
approve it, in the browser."""

from datetime import timedelta
from decimal import Decimal

import pytest

from annotation.crowd import PROVIDERS
from annotation.crowd.prolific import ProlificProvider
from annotation.models import Assignment, Campaign, LaunchRequest
from tests import factories
from tests.annotation.builders import ab_campaign
from tests.annotation.crowd.fake_prolific import FakeProlific
from tests.annotation.test_progress import NOW, judge, shown

pytestmark = pytest.mark.django_db(transaction=True)


def log_in(page, username, password):
    page.goto("/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state()


def test_staff_approve_submitted_work_in_bulk(page):
    c = ab_campaign(2, batch_size=2, redundancy=2)
    for w in ("w0", "w1"):
        for item in shown(c):
            judge(item, w, at=NOW - timedelta(minutes=5), ms=2000)
    factories.user("boss", staff=True, password="Review-Boss-1")
    log_in(page, "boss", "Review-Boss-1")
    page.goto(f"/manage/campaigns/{c.slug}/")
    page.get_by_role("link", name="Review submitted work").click()
    page.get_by_label("Choose w0").check()
    page.get_by_label("Choose w1").check()
    page.get_by_label("Action").select_option("approve")
    page.get_by_role("button", name="Apply to chosen").click()
    page.get_by_text("Approve: 2 done.").wait_for()
    assert page.get_by_text("No submitted work waits for review.").is_visible()
    assert page.get_by_test_id("review-log").inner_text().count("Approved") == 2
    assert Assignment.objects.filter(campaign=c, status="approved").count() == 2


def test_a_researchers_paid_launch_goes_live_once_staff_approve(page, settings, monkeypatch):
    monkeypatch.setitem(PROVIDERS, "prolific", ProlificProvider(sleep=lambda s: None))
    with FakeProlific() as fake:
        settings.EVALHUB_PROLIFIC_API_URL = fake.url
        settings.EVALHUB_PROLIFIC_TOKEN = "sekrit"
        settings.EVALHUB_PUBLIC_URL = "https://evalhub.example.org"
        owner = factories.user("researcher", password="Research-1-pw")
        factories.user("boss", staff=True, password="Review-Boss-1")
        c = ab_campaign(
            4,
            batch_size=2,
            redundancy=1,
            status="draft",
            provider="prolific",
            reward_per_batch=Decimal("1.50"),
            owner=owner,
        )
        log_in(page, "researcher", "Research-1-pw")
        page.goto(f"/manage/campaigns/{c.slug}/")
        assert page.get_by_role("button", name="Launch", exact=True).count() == 0
        page.get_by_role("button", name="Request launch").click()
        page.get_by_text("Launch requested").wait_for()
        assert "Waiting for staff" in page.get_by_test_id("launch-request").inner_text()

        page.get_by_role("button", name="Log out").click()
        log_in(page, "boss", "Review-Boss-1")
        page.goto(f"/manage/campaigns/{c.slug}/")
        page.get_by_label("Approving launches it now and pays workers").check()
        page.get_by_role("button", name="Approve and launch").click()
        page.get_by_text("Approved: the campaign is launched.").wait_for()
        assert page.get_by_test_id("status").inner_text() == "Live"
        c = Campaign.objects.get(pk=c.pk)
        assert (c.status, c.platform_ref) == ("live", "study1")
        assert LaunchRequest.objects.get(campaign=c).decided_by.username == "boss"
        assert fake.calls("POST", "studies/study1/transition/")
