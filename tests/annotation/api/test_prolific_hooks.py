"""Prolific's hook (annotation/api/prolific_hooks.py): events the local stand-in
(tests/annotation/crowd/fake_prolific.py) signs and POSTs to the live server, after the
launch subscribed to them."""

import httpx
import pytest

from annotation.crowd import PROVIDERS
from annotation.crowd.prolific import ProlificProvider
from annotation.models import Assignment
from tests.annotation.crowd.test_prolific import PUBLIC, prolific_campaign, taken

from ..crowd.fake_prolific import FakeProlific

pytestmark = pytest.mark.django_db(transaction=True)
WORKSPACE = "63722982f9cc073ecc730f6b"
SECRET = "cGNqFPb6y0RT3XO9XVSessBDYIbHQ"


@pytest.fixture
def fake(settings, monkeypatch, live_server):
    monkeypatch.setitem(PROVIDERS, "prolific", ProlificProvider(sleep=lambda s: None))
    with FakeProlific() as server:
        settings.EVALHUB_PROLIFIC_API_URL = server.url
        settings.EVALHUB_PROLIFIC_TOKEN = "sekrit"
        settings.EVALHUB_PUBLIC_URL = PUBLIC
        settings.EVALHUB_PROLIFIC_WORKSPACE_ID = WORKSPACE
        settings.EVALHUB_PROLIFIC_HOOK_SECRET = SECRET
        server.hook_secrets[WORKSPACE] = SECRET
        server.forward[PUBLIC] = live_server.url
        yield server


@pytest.fixture
def launched(fake):
    """A live study with one submission awaiting review (S1) and one under way (S2)."""
    campaign = prolific_campaign()
    PROVIDERS["prolific"].launch(campaign, confirm=True)
    campaign.refresh_from_db()
    submitted = taken(campaign, "P1", "S1")
    started = taken(campaign, "P2", "S2", status="started")
    fake.add_submissions(
        campaign.platform_ref,
        [
            {"id": "S1", "participant_id": "P1", "status": "AWAITING REVIEW"},
            {"id": "S2", "participant_id": "P2", "status": "ACTIVE"},
        ],
    )
    return campaign, submitted, started


def status(assignment):
    assignment.refresh_from_db()
    return assignment.status


def test_the_launch_subscribes_the_workspace_once(fake, launched):
    [subscription] = fake.subscriptions.values()
    assert subscription["event_type"] == "submission.status.change"
    assert subscription["target_url"] == f"{PUBLIC}/api/crowd/prolific/hooks/"
    assert subscription["workspace_id"] == WORKSPACE and subscription["is_enabled"]
    # A second campaign finds the subscription and makes none.
    PROVIDERS["prolific"].launch(prolific_campaign(), confirm=True)
    assert len(fake.subscriptions) == 1
    assert len(fake.calls("POST", "hooks/subscriptions/")) == 1


def test_an_approval_is_applied_within_the_request(fake, launched):
    campaign, submitted, _ = launched
    [answer] = fake.emit("S1", "APPROVED")
    assert answer.status_code == 200
    assert answer.json()["approved"] == 1
    assert status(submitted) == "approved"


def test_a_return_frees_the_slot_within_the_request(fake, launched):
    campaign, _, started = launched
    open_before = Assignment.objects.filter(campaign=campaign, status="open").count()
    [answer] = fake.emit("S2", "RETURNED")
    assert answer.json()["returned"] == 1
    assert status(started) == "returned"
    assert Assignment.objects.filter(campaign=campaign, status="open").count() == open_before + 1


def test_the_same_event_twice_is_handled_once(fake, launched):
    campaign, _, started = launched
    fake.emit("S2", "RETURNED")
    open_after_first = Assignment.objects.filter(campaign=campaign, status="open").count()
    [again] = fake.emit("S2", "RETURNED")
    assert again.status_code == 200 and again.json()["returned"] == 0
    assert status(started) == "returned"
    assert Assignment.objects.filter(campaign=campaign, status="open").count() == open_after_first


def test_the_poll_after_a_hook_changes_nothing(fake, launched):
    campaign, submitted, started = launched
    fake.emit("S1", "APPROVED")
    fake.emit("S2", "RETURNED")
    reviewed_at = Assignment.objects.get(pk=submitted.pk).reviewed_at
    rows = Assignment.objects.filter(campaign=campaign).count()
    report = PROVIDERS["prolific"].sync(campaign)
    assert (report.approved, report.returned, report.unmatched) == (0, 0, [])
    assert Assignment.objects.get(pk=submitted.pk).reviewed_at == reviewed_at
    assert Assignment.objects.filter(campaign=campaign).count() == rows


def test_a_bad_signature_is_refused_and_changes_nothing(fake, launched):
    _, submitted, _ = launched
    [answer] = fake.emit("S1", "APPROVED", secret="not the workspace's")
    assert answer.status_code == 403
    assert answer.json() == {
        "errors": [{"line": None, "message": "X-Prolific-Request-Signature does not match."}],
        "error_count": 1,
    }
    assert status(submitted) == "submitted"


def test_an_old_timestamp_is_refused_even_correctly_signed(fake, launched, settings):
    _, submitted, _ = launched
    stale = 1_700_000_000  # November 2023, far outside the window
    [answer] = fake.emit("S1", "APPROVED", timestamp=stale)
    assert answer.status_code == 403
    assert "outside the accepted window" in answer.json()["errors"][0]["message"]
    assert status(submitted) == "submitted"


def test_an_unsigned_request_is_refused(fake, launched, live_server):
    _, submitted, _ = launched
    answer = httpx.post(
        f"{live_server.url}/api/crowd/prolific/hooks/",
        json={"resource_id": "S1", "event_type": "submission.status.change", "status": "APPROVED"},
    )
    assert answer.status_code == 403
    assert answer.json()["error_count"] == 1
    assert status(submitted) == "submitted"


def test_hooks_are_rate_limited_per_address(fake, launched, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "prolific_hooks": "2/minute",
        },
    }
    _, submitted, _ = launched
    answers = [fake.emit("S1", "APPROVED")[0].status_code for _ in range(3)]
    assert answers == [200, 200, 429]
    assert status(submitted) == "approved"


def test_a_signed_event_without_a_submission_is_refused_with_its_field(fake, launched):
    _, submitted, _ = launched
    [subscription] = fake.subscriptions.values()
    answer = fake.deliver(subscription, {"event_type": "submission.status.change"})
    assert answer.status_code == 400
    assert answer.json()["errors"] == [
        {"field": "resource_id", "message": "This field is required."}
    ]
    assert status(submitted) == "submitted"
