"""Admin pages of the webhooks app: every model has one, list pages cost the same few
queries whatever the size, and a subscription's secret never reaches a browser."""

import pytest

from tests import factories
from tests.admin_pages import (
    admin_url,
    assert_every_model_has_an_admin,
    assert_pages_answer,
    change_list_rows_with_flat_queries,
)
from webhooks.models import Attempt, Delivery, Subscription
from webhooks.services import create_subscription

pytestmark = pytest.mark.django_db

MODELS = [Subscription, Delivery, Attempt]


def populate(n=2, prefix="t"):
    """`n` subscriptions, each with a delivery of one attempt; their secrets."""
    owner = factories.user()
    secrets = []
    for i in range(n):
        made, secret = create_subscription(
            owner, f"https://{prefix}-{i}.example.org/", ["analysis.ready"]
        )
        sent = Delivery.objects.create(
            subscription=made, message_id=f"msg_{prefix}{i}", event="analysis.ready", body="{}"
        )
        Attempt.objects.create(
            delivery=sent, number=1, at=sent.created, outcome="ok", status_code=200, latency_ms=9
        )
        secrets.append(secret)
    return secrets


@pytest.fixture
def superuser(client):
    user = factories.user("boss", staff=True)
    client.force_login(user)
    return user


def test_every_webhooks_model_has_an_admin():
    assert_every_model_has_an_admin("webhooks", MODELS)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_list_search_and_change_page_answer(client, superuser, model):
    populate()
    assert_pages_answer(client, model, search="t-")


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_change_lists_cost_the_same_queries_with_more_rows(
    client, superuser, model, django_assert_max_num_queries
):
    populate(1, prefix="a")
    rows, bigger = change_list_rows_with_flat_queries(
        client, model, lambda: populate(6, prefix="b"), django_assert_max_num_queries
    )
    assert bigger > rows


def test_the_secret_never_reaches_the_admin(client, superuser):
    [secret] = populate(1)
    made = Subscription.objects.get()
    page = client.get(admin_url(Subscription, "change", made.pk)).content.decode()
    assert secret not in page
