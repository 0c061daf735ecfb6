"""What a platform participant sees: MTurk's preview, accept and post-back; Prolific's
redirect with the study's code; identities bound to their platform session."""

from decimal import Decimal
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import reverse

from annotation.entry import SESSION_KEY
from annotation.models import Assignment, Judgment, Worker
from tests.annotation.builders import ab_campaign

pytestmark = pytest.mark.django_db

# Prolific's ids are 24 hexadecimal digits (annotation/crowd/prolific.py checks them).
PID = "5f1e2d3c4b5a69788796a5b4"
STUDY = "60aa11bb22cc33dd44ee55ff"
SESSION = "61ab12bc23cd34de45ef5601"
SESSION_2 = "61ab12bc23cd34de45ef5602"
OTHER_SESSION = "61ab12bc23cd34de45ef56ff"


def start(client, campaign, **params):
    return client.get(f"{reverse('annotation:start', args=[campaign.slug])}?{urlencode(params)}")


def finish(client, assignment):
    response = None
    for item in assignment.batch.items.order_by("order_in_batch"):
        url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
        response = client.post(url, {"choice": "tie"})
    return client.get(response["Location"])


def mturk_campaign():
    return ab_campaign(
        4, batch_size=2, redundancy=2, provider="mturk", reward_per_batch=Decimal("1")
    )


def test_an_mturk_preview_shows_the_task_read_only_and_stores_nothing(client):
    c = mturk_campaign()
    second = c.batches.order_by("position")[1]
    page = start(client, c, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId="H2", batch=second.pk)
    html = page.content.decode()
    assert page.status_code == 200
    assert "This is a preview" in html and "<fieldset disabled>" in html
    assert second.items.order_by("order_in_batch").first().content["left"] in html
    assert "https://workersandbox.mturk.com" in page["Content-Security-Policy"]
    assert not Worker.objects.exists()
    assert not Assignment.objects.exclude(status="open").exists()
    assert SESSION_KEY not in client.session


def test_an_accepted_hit_gives_its_batch_and_posts_back_to_mturk_after_storing(client):
    c = mturk_campaign()
    second = c.batches.order_by("position")[1]
    response = start(
        client,
        c,
        assignmentId="ASG1",
        hitId="H2",
        workerId="AWORKER1",
        turkSubmitTo="https://workersandbox.mturk.com",
        batch=second.pk,
    )
    assignment = Assignment.objects.get(worker__external_id="AWORKER1")
    assert response["Location"] == assignment.get_absolute_url()
    assert (assignment.batch, assignment.provider_ref, assignment.worker.provider) == (
        second,
        "ASG1",
        "mturk",
    )
    html = finish(client, assignment).content.decode()
    assert Judgment.objects.filter(assignment=assignment).count() == 2
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in html
    assert 'name="assignmentId" value="ASG1"' in html
    assert "crowd_return.js" in html and "Do another batch" in html


def finished_hit_page(client, turk_submit_to):
    """The page after the last item of a HIT accepted with this `turkSubmitTo`."""
    c = mturk_campaign()
    first = c.batches.order_by("position")[0]
    start(
        client,
        c,
        assignmentId="ASG1",
        hitId="H1",
        workerId="AW1",
        turkSubmitTo=turk_submit_to,
        batch=first.pk,
    )
    return finish(client, Assignment.objects.get(provider_ref="ASG1"))


def test_a_forged_turk_submit_to_gets_no_post_back(client):
    html = finished_hit_page(client, turk_submit_to="https://evil.example").content.decode()
    assert "externalSubmit" not in html and "evil.example" not in html


def form_action(response):
    directives = dict(
        part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";")
    )
    return directives["form-action"].split()


def test_the_finished_page_may_post_back_to_mturk_and_nowhere_else(client):
    page = finished_hit_page(client, turk_submit_to="https://workersandbox.mturk.com")
    assert form_action(page) == ["'self'", "https://workersandbox.mturk.com/mturk/externalSubmit"]


def test_a_forged_turk_submit_to_adds_nothing_to_the_pages_form_action(client):
    page = finished_hit_page(client, turk_submit_to="https://evil.example")
    assert form_action(page) == ["'self'"]


def prolific_campaign():
    return ab_campaign(
        4,
        batch_size=2,
        provider="prolific",
        provider_config={"completion_code": "C0DE1234"},
    )


def test_a_prolific_finisher_is_redirected_with_the_study_code_and_offered_nothing_more(client):
    c = prolific_campaign()
    start(client, c, PROLIFIC_PID=PID, STUDY_ID=STUDY, SESSION_ID=SESSION)
    assignment = Assignment.objects.get(worker__external_id=PID)
    assert assignment.provider_ref == SESSION
    html = finish(client, assignment).content.decode()
    complete = "https://app.prolific.com/submissions/complete?cc=C0DE1234"
    assert f'<meta http-equiv="refresh" content="3;url={complete}">' in html
    assert "Do another batch" not in html


def test_a_returning_participant_sees_their_code_again_never_a_new_batch(client):
    c = prolific_campaign()
    start(client, c, PROLIFIC_PID=PID, STUDY_ID=STUDY, SESSION_ID=SESSION)
    assignment = Assignment.objects.get(worker__external_id=PID)
    finish(client, assignment)
    again = start(Client(), c, PROLIFIC_PID=PID, STUDY_ID=STUDY, SESSION_ID=SESSION)
    assert again["Location"] == reverse("annotation:done", args=[assignment.public_id])
    assert Assignment.objects.filter(worker__external_id=PID).count() == 1


def test_someone_else_with_a_participants_id_gets_neither_batch_nor_code(client):
    c = prolific_campaign()
    start(client, c, PROLIFIC_PID=PID, STUDY_ID=STUDY, SESSION_ID=SESSION)
    assignment = Assignment.objects.get(worker__external_id=PID)
    intruder = Client()
    refused = start(intruder, c, PROLIFIC_PID=PID, STUDY_ID=STUDY, SESSION_ID=OTHER_SESSION)
    assert refused.status_code == 403
    assert "another session" in refused.content.decode()
    assert SESSION_KEY not in intruder.session
    finish(client, assignment)
    assignment.refresh_from_db()
    assert assignment.completion_code
    refused = start(intruder, c, PROLIFIC_PID=PID, STUDY_ID=STUDY, SESSION_ID=OTHER_SESSION)
    assert refused.status_code == 403 and assignment.completion_code not in refused.content.decode()
    # The participant's own browser may come back with a new session id.
    assert (
        start(client, c, PROLIFIC_PID=PID, STUDY_ID=STUDY, SESSION_ID=SESSION_2).status_code == 302
    )
