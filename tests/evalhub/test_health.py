"""`/healthz` and the Content-Security-Policy."""

from unittest import mock

import pytest
from django.db import OperationalError

from evalhub.celery import app as celery_app

pytestmark = pytest.mark.django_db


def test_healthz_reports_the_database_and_the_broker(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["database"] == "ok" and response.json()["status"] == "ok"
    assert "broker" in response.json()


def test_healthz_answers_503_when_the_broker_is_unreachable(client):
    # Celery reads CELERY_BROKER_URL from the environment before its conf (CI sets it), so
    # the unreachable broker is given as the connection itself: a closed port.
    conf = celery_app.conf
    eager = conf.task_always_eager
    conf.task_always_eager = False
    closed = mock.patch.object(
        celery_app, "connection_for_write", lambda: celery_app.connection("redis://127.0.0.1:1/0")
    )
    try:
        with closed:
            response = client.get("/healthz")
    finally:
        conf.task_always_eager = eager
    assert response.status_code == 503
    assert response.json()["broker"].startswith("unreachable")


def test_healthz_answers_503_when_the_database_is_unreachable(client):
    with mock.patch("evalhub.views.health.connection.cursor", side_effect=OperationalError):
        response = client.get("/healthz")
    assert response.status_code == 503 and response.json()["database"].startswith("unreachable")


@pytest.mark.parametrize("url", ["/", "/systems/", "/accounts/login/", "/api/docs/"])
def test_every_page_has_a_content_security_policy(client, url):
    response = client.get(url)
    assert response.status_code == 200
    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "'unsafe-inline'" not in policy
