"""A submit posted by the task page's script (``X-EvalHub-In-Place: 1``) is answered with
the next page itself, in one round trip (annotation/views/in_place.py)."""

import pytest
from django.urls import reverse

from annotation.models import Assignment, Judgment
from tests.annotation.builders import ab_campaign
from tests.annotation.chat_setup import bot_system, chat_campaign, say
from tests.annotation.chat_setup import items as chat_items
from tests.annotation.chat_setup import start as start_chat
from tests.annotation.chat_setup import url as chat_url
from tests.annotation.test_views_worker import assignment_of, items_of, start
from tests.endpoints import openai_fake
from tests.endpoints.openai_fake import FakePool

pytestmark = pytest.mark.django_db

IN_PLACE = {"HTTP_X_EVALHUB_IN_PLACE": "1"}


def started(client, campaign):
    start(client, campaign)
    assignment = assignment_of("link:w1")
    return assignment, items_of(assignment)


def submit_in_place(client, assignment, item, **data):
    url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
    return client.post(url, data, **IN_PLACE)


def test_the_answer_is_the_next_items_page_at_the_assignments_address(client):
    assignment, items = started(client, ab_campaign(3, batch_size=3))
    response = submit_in_place(client, assignment, items[0], choice="left")
    page = response.content.decode()
    assert response.status_code == 200
    assert response["X-EvalHub-Location"] == assignment.get_absolute_url()
    assert "Item 2 of 3" in page
    assert reverse("annotation:submit-item", args=[assignment.public_id, items[1].pk]) in page
    assert list(Judgment.objects.values_list("item", flat=True)) == [items[0].pk]


def test_the_next_item_keeps_the_task_pages_content_security_policy(client):
    assignment, items = started(client, ab_campaign(2, batch_size=2))
    response = submit_in_place(client, assignment, items[0], choice="left")
    policy = response["Content-Security-Policy"]
    assert "frame-ancestors 'self'" in policy and "script-src 'self'" in policy
    assert Judgment.objects.count() == 1


def test_an_incomplete_answer_shows_the_same_item_with_the_message_and_stores_nothing(client):
    assignment, items = started(client, ab_campaign(2, batch_size=2))
    response = submit_in_place(client, assignment, items[0])
    assert response.status_code == 400
    assert response["X-EvalHub-Location"] == assignment.get_absolute_url()
    assert "Item 1 of 2" in response.content.decode() and 'class="errors"' in (
        response.content.decode()
    )
    assert not Judgment.objects.exists()


def test_the_same_answer_posted_twice_stores_one_judgment(client):
    assignment, items = started(client, ab_campaign(3, batch_size=3))
    submit_in_place(client, assignment, items[0], choice="left")
    again = submit_in_place(client, assignment, items[0], choice="right")
    assert again.status_code == 200 and "Item 2 of 3" in again.content.decode()
    assert Judgment.objects.filter(item=items[0]).count() == 1


def test_another_workers_assignment_is_not_found_in_place_either(client):
    from django.test import Client

    assignment, items = started(client, ab_campaign(4, batch_size=2))
    other = Client()
    start(other, assignment.campaign, "worker=w2")
    response = submit_in_place(other, assignment, items[0], choice="left")
    assert response.status_code == 404 and "X-EvalHub-Location" not in response
    assert not Judgment.objects.exists()


def test_a_plain_post_is_still_answered_with_a_redirect(client):
    assignment, items = started(client, ab_campaign(2, batch_size=2))
    url = reverse("annotation:submit-item", args=[assignment.public_id, items[0].pk])
    response = client.post(url, {"choice": "left"})
    assert response.status_code == 302 and response["Location"] == assignment.get_absolute_url()
    assert "X-EvalHub-Location" not in response
    assert Judgment.objects.count() == 1


def test_an_expired_batch_sends_the_script_to_the_explanation(client):
    from datetime import timedelta

    from django.utils import timezone

    assignment, items = started(client, ab_campaign(2, batch_size=2))
    Assignment.objects.filter(pk=assignment.pk).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    response = submit_in_place(client, assignment, items[0], choice="left")
    assert response.status_code == 409 and "ran out" in response.content.decode()
    assert not Judgment.objects.exists()


def test_a_chat_item_is_reached_by_navigating_to_it(client):
    with FakePool() as fakes:
        systems = [bot_system(fakes.start(openai_fake.counting), slug=f"bot-{n}") for n in (1, 2)]
        campaign = chat_campaign(systems, config={"dimensions": ["quality"]})
        assignment = start_chat(client, campaign)
        first = chat_items(assignment)[0]
        say(client, assignment, first, "one", 0)
        say(client, assignment, first, "two", 2)
        client.post(chat_url("end", assignment, first, json=True))
        response = submit_in_place(client, assignment, first, rating_quality="4")
    assert response.status_code == 204
    assert response["X-EvalHub-Redirect"] == assignment.get_absolute_url()
    assert Judgment.objects.get(assignment=assignment).payload["ratings"] == {"quality": 4}


def test_the_last_answer_is_the_completion_page_in_place(client):
    assignment, items = started(client, ab_campaign(2, batch_size=2))
    submit_in_place(client, assignment, items[0], choice="left")
    response = submit_in_place(client, assignment, items[1], choice="tie")
    assignment.refresh_from_db()
    assert response.status_code == 200
    assert response["X-EvalHub-Location"] == reverse("annotation:done", args=[assignment.public_id])
    assert assignment.status == Assignment.Status.SUBMITTED
    assert assignment.completion_code in response.content.decode()
    assert Judgment.objects.filter(assignment=assignment).count() == 2


def test_a_completion_page_that_returns_to_the_platform_is_navigated_to(client):
    campaign = ab_campaign(2, batch_size=2, completion_redirect_url="https://example.org/back")
    assignment, items = started(client, campaign)
    submit_in_place(client, assignment, items[0], choice="left")
    response = submit_in_place(client, assignment, items[1], choice="tie")
    assignment.refresh_from_db()
    assert response.status_code == 204
    assert response["X-EvalHub-Redirect"] == reverse("annotation:done", args=[assignment.public_id])
    assert assignment.status == Assignment.Status.SUBMITTED
