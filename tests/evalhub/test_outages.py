"""Redis stopped in the middle of a study (a private one, tests/services.py): logins and the
workers already at work go on, with sessions in the database; a new identity (a start link's
newcomer, a sign-up) gets a 503 page, or the API's error shape, until Redis is back; nothing
stored is lost (evalhub/outages.py, evalhub/sessions.py, evalhub/ratelimit.py)."""

import json
import time
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.test import Client, RequestFactory
from django.urls import reverse

from annotation.models import Assignment, Judgment, Worker
from evalhub.models import Conversation
from evalhub.outages import ServiceUnavailable, ServiceUnavailableMiddleware
from tests import factories
from tests.annotation.builders import ab_campaign
from tests.evalhub.test_seed_uploads import API as SEEDS_API
from tests.evalhub.test_seed_uploads import api_as, jsonl, seed

pytestmark = pytest.mark.django_db


def start(client, campaign, **params):
    return client.get(f"{reverse('annotation:start', args=[campaign.slug])}?{urlencode(params)}")


def judge(client, assignment, item):
    url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
    return client.post(url, {"choice": "tie"})


def sign_up(client, username):
    password = "A-long-pass-123"
    return client.post(
        reverse("signup"),
        {"username": username, "email": f"{username}@example.org"}
        | {"password1": password, "password2": password},
    )


def test_redis_stopped_mid_study(redis_cache, settings):
    settings.AXES_ENABLED = True
    factories.user("ann", password="ann-right-pass")
    c = ab_campaign(6, batch_size=3, redundancy=2)
    worker = Client()
    assert start(worker, c, worker="w1").status_code == 302
    assignment = Assignment.objects.get(worker__external_id="link:w1")
    items = list(assignment.batch.items.order_by("order_in_batch"))
    assert judge(worker, assignment, items[0]).status_code == 302

    redis_cache.stop()

    # A researcher logs in, and stays logged in.
    researcher = Client()
    login = researcher.post(reverse("login"), {"username": "ann", "password": "ann-right-pass"})
    assert login.status_code == 302
    assert researcher.get(reverse("account")).context["user"].username == "ann"
    # The worker at work goes on: the item page, the next judgment, their start link again.
    assert worker.get(assignment.get_absolute_url()).status_code == 200
    assert judge(worker, assignment, items[1]).status_code == 302
    again = start(worker, c, worker="w1")
    assert again.status_code == 302 and again["Location"] == assignment.get_absolute_url()
    # A researcher's upload (limited per researcher) is taken uncounted.
    upload = api_as(User.objects.get(username="ann")).post(
        SEEDS_API, {"file": jsonl(seed(1))}, format="multipart"
    )
    assert upload.status_code == 201
    # A new identity waits: a clear 503 page, no worker minted, no account made.
    newcomer = start(Client(), c, worker="w2")
    assert newcomer.status_code == 503 and newcomer["Retry-After"] == "60"
    assert "Try again in a few minutes" in newcomer.content.decode()
    refused = sign_up(Client(), "bob")
    assert refused.status_code == 503 and "a service EvalHub needs is down" in refused.text

    # Nothing stored is lost: judgments, workers, accounts, uploads, sessions in the database.
    assert Conversation.objects.filter(domain="orchard").count() == 1
    assert Judgment.objects.filter(assignment=assignment).count() == 2
    assert set(Worker.objects.values_list("external_id", flat=True)) == {"link:w1"}
    assert set(User.objects.values_list("username", flat=True)) == {"ann"}
    assert Session.objects.filter(session_key=researcher.session.session_key).exists()
    assert Session.objects.filter(session_key=worker.session.session_key).exists()

    redis_cache.start()  # back, empty

    # Everyone carries on where they were, and newcomers are taken again.
    done = judge(worker, assignment, items[2])
    assert done["Location"] == reverse("annotation:done", args=[assignment.public_id])
    assert researcher.get(reverse("account")).context["user"].username == "ann"
    assert start(Client(), c, worker="w2").status_code == 302
    assert sign_up(Client(), "bob").status_code == 302
    assert Judgment.objects.filter(assignment=assignment).count() == 3


def test_a_hung_redis_holds_a_request_only_until_its_timeout(redis_cache, settings):
    c = ab_campaign(2, batch_size=2)
    worker = Client()
    assert start(worker, c, worker="w1").status_code == 302
    assignment = Assignment.objects.get(worker__external_id="link:w1")
    redis_cache.pause()
    began = time.monotonic()
    page = worker.get(assignment.get_absolute_url())
    waited = time.monotonic() - began
    print("WAITED", waited)
    assert page.status_code == 200
    # The session's first read waits out the timeout, and nothing more asks the hung Redis.
    timeout = settings.EVALHUB_REDIS_CACHE_OPTIONS["socket_timeout"]
    assert timeout <= waited < 2 * timeout


def test_the_api_answers_a_service_outage_in_its_error_shape():
    request = RequestFactory().post("/api/anything/")
    middleware = ServiceUnavailableMiddleware(lambda request: None)
    response = middleware.process_exception(request, ServiceUnavailable("Try later."))
    assert response.status_code == 503 and response["Retry-After"] == "60"
    assert json.loads(response.content) == {
        "errors": [{"line": None, "message": "Try later."}],
        "error_count": 1,
    }


def test_other_errors_are_left_to_django():
    request = RequestFactory().get("/work/x/")
    middleware = ServiceUnavailableMiddleware(lambda request: None)
    assert middleware.process_exception(request, KeyError("x")) is None
