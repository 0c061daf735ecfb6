"""End to end on the platforms: an MTurk HIT (stubbed API) previewed, accepted, completed
and posted back to a local fake externalSubmit, then approved by sync; the same for a
Prolific participant through the redirect."""

import threading
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import boto3
import pytest
from botocore.stub import Stubber

from annotation.crowd import PROVIDERS
from annotation.crowd.mturk import MTurkProvider
from annotation.crowd.prolific import ProlificProvider
from annotation.models import Assignment, Judgment
from tests.annotation.builders import ab_campaign
from tests.annotation.crowd.fake_prolific import FakeProlific

pytestmark = pytest.mark.django_db(transaction=True)

# Prolific's participant and submission ids are 24 hexadecimal digits.
PID = "5f1e2d3c4b5a69788796a5b4"
SESSION = "61ab12bc23cd34de45ef5601"


class FakeExternalSubmit:
    """MTurk's /mturk/externalSubmit on 127.0.0.1: records what the task page posts."""

    def __init__(self):
        self.posts = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                fake.posts.append((self.path, parse_qs(self.rfile.read(length).decode())))
                body = b"<p>HIT submitted</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def complete_batch(page, items):
    for n in range(1, items + 1):
        page.get_by_text(f"Item {n} of {items}").wait_for()
        page.locator("label.tie").click()
        page.get_by_role("button", name="Finish" if n == items else "Next").click()


def test_an_mturk_worker_previews_accepts_completes_and_is_approved_by_sync(
    page, live_server, settings, monkeypatch
):
    submit = FakeExternalSubmit()
    settings.EVALHUB_PUBLIC_URL = "https://evalhub.example.org"
    settings.EVALHUB_MTURK_SUBMIT_ORIGINS = [submit.origin]
    client = boto3.client(
        "mturk", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t"
    )
    provider = MTurkProvider(client_factory=lambda sandbox: client, sleep=lambda s: None)
    monkeypatch.setitem(PROVIDERS, "mturk", provider)
    campaign = ab_campaign(
        2, batch_size=2, redundancy=1, provider="mturk", reward_per_batch=Decimal("0.50")
    )
    batch = campaign.batches.get()
    try:
        with Stubber(client) as stub:
            stub.add_response(
                "create_qualification_type", {"QualificationType": {"QualificationTypeId": "B"}}
            )
            stub.add_response("create_hit_type", {"HITTypeId": "HT"})
            stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "HIT1"}})
            provider.launch(campaign)

            base = f"/work/{campaign.slug}/?provider=mturk&batch={batch.pk}"
            page.goto(f"{base}&assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=HIT1")
            page.get_by_text("This is a preview").wait_for()
            assert not Assignment.objects.exclude(status="open").exists()

            page.goto(
                f"{base}&assignmentId=ASG1&hitId=HIT1&workerId=AW1&turkSubmitTo={submit.origin}"
            )
            complete_batch(page, 2)
            page.get_by_text("HIT submitted").wait_for()
            assignment = Assignment.objects.get(provider_ref="ASG1")
            assert Judgment.objects.filter(assignment=assignment).count() == 2
            [(path, form)] = submit.posts
            assert path == "/mturk/externalSubmit" and form["assignmentId"] == ["ASG1"]

            stub.add_response(
                "list_assignments_for_hit",
                {
                    "Assignments": [
                        {
                            "AssignmentId": "ASG1",
                            "WorkerId": "AW1",
                            "HITId": "HIT1",
                            "AssignmentStatus": "Approved",
                        }
                    ]
                },
            )
            provider.sync(campaign)
        assignment.refresh_from_db()
        assert assignment.status == "approved"
    finally:
        submit.close()


def test_a_prolific_participant_is_redirected_with_the_code_and_approved_by_sync(
    page, live_server, settings, monkeypatch
):
    monkeypatch.setitem(PROVIDERS, "prolific", ProlificProvider(sleep=lambda s: None))
    with FakeProlific() as fake:
        settings.EVALHUB_PROLIFIC_API_URL = fake.url
        settings.EVALHUB_PROLIFIC_TOKEN = "sekrit"
        settings.EVALHUB_PUBLIC_URL = "https://evalhub.example.org"
        campaign = ab_campaign(
            2, batch_size=2, redundancy=1, provider="prolific", status="draft", reward_per_batch=1
        )
        PROVIDERS["prolific"].launch(campaign, confirm=True)
        campaign.refresh_from_db()
        campaign.status = "live"
        campaign.save(update_fields=["status"])
        code = campaign.provider_config["completion_code"]
        page.route(
            "https://app.prolific.com/**",
            lambda route: route.fulfill(status=200, body="<p>Prolific: thanks</p>"),
        )
        page.goto(f"/work/{campaign.slug}/?PROLIFIC_PID={PID}&STUDY_ID=study1&SESSION_ID={SESSION}")
        complete_batch(page, 2)
        page.get_by_text("Prolific: thanks").wait_for(timeout=20_000)
        assert page.url == f"https://app.prolific.com/submissions/complete?cc={code}"

        fake.add_submissions(
            "study1", [{"id": SESSION, "participant_id": PID, "status": "APPROVED"}]
        )
        assert PROVIDERS["prolific"].sync(campaign).approved == 1
        assert Assignment.objects.get(provider_ref=SESSION).status == "approved"
