"""The worker's path: start link, one item at a time, validation, idempotency, completion."""

import pytest
from django.urls import reverse

from annotation.models import Assignment, Judgment, Worker
from tests import factories
from tests.annotation.builders import ab_campaign

pytestmark = pytest.mark.django_db


def start(client, campaign, query="worker=w1"):
    return client.get(f"{reverse('annotation:start', args=[campaign.slug])}?{query}")


def assignment_of(external_id):
    return Assignment.objects.select_related("batch").get(worker__external_id=external_id)


def submit(client, assignment, item, **data):
    url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
    return client.post(url, data)


def items_of(assignment):
    return list(assignment.batch.items.order_by("order_in_batch"))


def test_prolific_participant_gets_a_batch():
    from django.test import Client

    client = Client()
    c = ab_campaign(4, batch_size=2, provider="prolific")
    pid, study, session = (
        "5f1e2d3c4b5a69788796a5b4",
        "60aa11bb22cc33dd44ee55ff",
        "61ab12bc23cd34de45ef5601",
    )
    response = start(client, c, f"PROLIFIC_PID={pid}&STUDY_ID={study}&SESSION_ID={session}")
    worker = Worker.objects.get()
    assert (worker.provider, worker.external_id) == ("prolific", pid)
    assignment = Assignment.objects.get(worker=worker)
    assert response["Location"] == assignment.get_absolute_url()


def test_logged_in_user_is_a_worker(client):
    user = factories.user("ann")
    client.force_login(user)
    c = ab_campaign(2, batch_size=2)
    start(client, c, "")
    worker = Worker.objects.get()
    assert (worker.provider, worker.external_id, worker.user) == ("local", "user:ann", user)


def test_nobody_identified_sees_how_to_take_part(client):
    c = ab_campaign(2)
    response = start(client, c, "")
    assert response.status_code == 200
    assert "participant id" in response.content.decode()
    assert not Worker.objects.exists()


def test_unsafe_external_ids_are_refused(client):
    c = ab_campaign(2)
    start(client, c, "worker=%3Cscript%3E")
    assert not Worker.objects.exists()


def test_the_item_page_shows_progress_and_content_but_never_gold(client):
    c = ab_campaign(3, batch_size=4, gold=1)
    page = client.get(start(client, c)["Location"])
    html = page.content.decode()
    assert "Item 1 of 4" in html
    assert "explanation" not in html.lower() and "Response a answers the question" not in html
    assert "frame-ancestors 'self'" in page["Content-Security-Policy"]
    assert "X-Frame-Options" not in page


def test_the_item_page_keeps_the_sites_whole_content_security_policy(client):
    c = ab_campaign(3, batch_size=4)
    page = client.get(start(client, c)["Location"])
    directives = dict(
        part.strip().split(" ", 1) for part in page["Content-Security-Policy"].split(";")
    )
    assert directives["default-src"] == "'self'"
    assert directives["script-src"].split()[0] == "'self'"
    assert "unsafe-inline" not in directives["script-src"]
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'self'"


def test_incomplete_answer_gets_an_error_and_stores_nothing(client):
    c = ab_campaign(2, batch_size=2)
    start(client, c)
    assignment = assignment_of("link:w1")
    response = submit(client, assignment, items_of(assignment)[0])
    assert response.status_code == 400
    assert "Choose an answer for which response is better." in response.content.decode()
    assert not Judgment.objects.exists()


def test_a_double_submit_stores_one_judgment(client):
    c = ab_campaign(2, batch_size=2)
    start(client, c)
    assignment = assignment_of("link:w1")
    first = items_of(assignment)[0]
    submit(client, assignment, first, choice="left")
    again = submit(client, assignment, first, choice="right")
    assert again.status_code == 302
    assert Judgment.objects.filter(item=first).count() == 1
    assert Judgment.objects.get(item=first).payload["choice"] == first.content["left_is"]


def test_completing_the_batch_gives_the_completion_code(client):
    c = ab_campaign(2, batch_size=2)
    start(client, c)
    assignment = assignment_of("link:w1")
    for item in items_of(assignment):
        response = submit(client, assignment, item, choice="tie", client_ms="2500")
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED and len(assignment.completion_code) == 8
    assert response["Location"] == reverse("annotation:done", args=[assignment.public_id])
    assert assignment.completion_code in client.get(response["Location"]).content.decode()
    assert set(Judgment.objects.values_list("client_duration_ms", flat=True)) == {2500}


def test_completion_redirect_url_gets_the_code(client):
    c = ab_campaign(1, batch_size=1, completion_redirect_url="https://crowd.example/done?cc={code}")
    start(client, c)
    assignment = assignment_of("link:w1")
    submit(client, assignment, items_of(assignment)[0], choice="left")
    assignment.refresh_from_db()
    page = client.get(reverse("annotation:done", args=[assignment.public_id])).content.decode()
    assert f"https://crowd.example/done?cc={assignment.completion_code}" in page


def test_another_worker_cannot_see_or_answer_my_assignment(client):
    from django.test import Client

    c = ab_campaign(4, batch_size=2)
    start(client, c)
    mine = assignment_of("link:w1")
    other = Client()
    start(other, c, "worker=w2")
    assert other.get(mine.get_absolute_url()).status_code == 404
    assert submit(other, mine, items_of(mine)[0], choice="left").status_code == 404
    assert other.get(reverse("annotation:done", args=[mine.public_id])).status_code == 404
    assert not Judgment.objects.filter(assignment=mine).exists()


def test_an_item_of_another_batch_is_refused(client):
    c = ab_campaign(4, batch_size=2)
    start(client, c)
    mine = assignment_of("link:w1")
    foreign = c.items.exclude(batch=mine.batch).first()
    assert submit(client, mine, foreign, choice="left").status_code == 400
    assert not Judgment.objects.exists()


def test_submitting_needs_csrf(client):
    from django.test import Client

    c = ab_campaign(2, batch_size=2)
    strict = Client(enforce_csrf_checks=True)
    start(strict, c)
    assignment = assignment_of("link:w1")
    assert submit(strict, assignment, items_of(assignment)[0], choice="left").status_code == 403


def test_expired_assignment_cannot_be_answered(client):
    from datetime import timedelta

    from django.utils import timezone

    c = ab_campaign(2, batch_size=2)
    start(client, c)
    assignment = assignment_of("link:w1")
    Assignment.objects.filter(pk=assignment.pk).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    response = submit(client, assignment, items_of(assignment)[0], choice="left")
    assert (
        response.status_code == 409 and "time for this batch ran out" in response.content.decode()
    )


def test_no_more_work_is_said_plainly(client):
    c = ab_campaign(1, batch_size=1, redundancy=1)
    start(client, c)
    assignment = assignment_of("link:w1")
    submit(client, assignment, items_of(assignment)[0], choice="left")
    assignment.refresh_from_db()
    again = start(client, c).content.decode()
    assert "no more work for you" in again and assignment.completion_code in again


def test_paused_campaign_takes_no_one(client):
    c = ab_campaign(2, status="paused")
    assert "not accepting work" in start(client, c).content.decode()
    assert not Assignment.objects.filter(worker__isnull=False).exists()


def test_a_malformed_stored_gold_answer_is_logged_left_unscored_and_the_worker_goes_on(
    client, caplog
):
    # Issue 9: scoring must never fail in front of a worker.
    c = ab_campaign(2, batch_size=2, gold=1)
    c.items.filter(role="gold").update(gold={"no choice here": True})
    start(client, c)
    assignment = assignment_of("link:w1")
    items = items_of(assignment)
    gold = next(i for i in items if i.role == "gold")
    response = submit(client, assignment, gold, choice="left")
    assert response.status_code == 302
    following = client.get(response["Location"], follow=True)
    assert following.status_code == 200 and "item" in following.context
    judgment = Judgment.objects.get(item=gold)
    assert judgment.gold_correct is None and judgment.gold_mistakes is None
    assert "cannot be scored" in caplog.text


def test_the_task_page_says_the_batchs_time_limit_and_its_end(client):
    c = ab_campaign(2, time_limit_minutes=45)

    response = start(client, c, "worker=w1")

    html = client.get(response["Location"]).content.decode()
    expires = assignment_of("link:w1").expires_at
    assert 'data-testid="time-left"' in html and "Time for this batch: 45 min" in html
    assert f"{expires:%H:%M} UTC" in html


def test_a_blocked_worker_is_told_why(client):
    c = ab_campaign(2)
    Worker.objects.create(
        provider="local",
        external_id="link:w1",
        blocked=True,
        blocked_reason="Your answers did not match the attention checks.",
    )

    response = start(client, c, "worker=w1")

    page = response.content.decode()
    assert "cannot take new work in this campaign: Your answers did not match" in page
    assert not Assignment.objects.filter(campaign=c).exclude(status="open").exists()
