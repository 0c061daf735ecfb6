"""The crowdworker's pages cost a small, fixed number of queries, whatever the campaign's
size (issue 15: serving must not slow down as campaigns grow). Each page is measured on a
campaign of 2 batches and on one of 150, with groups, after other workers took batches."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.entry import SESSION_KEY
from annotation.models import Assignment, Judgment
from tests import factories
from tests.annotation.builders import ab_campaign

pytestmark = pytest.mark.django_db

SMALL, LARGE = 4, 300  # items, in batches of 2

# At most this many (the counts measured on SQLite and PostgreSQL, with the tests'
# database session store: one query per request more than with Redis sessions). A change
# that adds a query to every request fails here on purpose: look at what it reads.
START_QUERIES = 33  # a first visit: the worker is created, then a batch is claimed
ITEM_PAGE_QUERIES = 3  # assignment (with campaign, worker), session, batch items
SUBMIT_QUERIES = 6  # assignment, session, batch items, savepoint, INSERT, release
# Exactly this many for a returning, logged-in worker's batch fetch (start link and first
# item), savepoints included: a new batch (26 before the start link was trimmed), and the
# started one resumed (21 before).
BATCH_FETCH_QUERIES = 19
RESUMED_FETCH_QUERIES = 16


def busy_campaign(n_items):
    """A campaign some other workers are already working in."""
    c = ab_campaign(n_items, batch_size=2, groups=n_items // 2, redundancy=2)
    for n in range(3):
        Client().get(reverse("annotation:start", args=[c.slug]) + f"?worker=other{n}")
    return c


def logged_in(name):
    client = Client()
    client.force_login(factories.user(name))
    return client


def count(request) -> tuple[int, object]:
    with CaptureQueriesContext(connection) as queries:
        response = request()
    return len(queries), response


def start_counts(name, c):
    client = logged_in(name)
    n, response = count(lambda: client.get(reverse("annotation:start", args=[c.slug])))
    assignment = Assignment.objects.get(campaign=c, worker__external_id=f"user:{name}")
    return n, response, assignment, client


def test_the_start_link_costs_the_same_queries_at_any_campaign_size():
    small, large = busy_campaign(SMALL), busy_campaign(LARGE)
    n_small, response_small, a_small, _ = start_counts("ann", small)
    n_large, response_large, a_large, _ = start_counts("bob", large)
    assert response_small["Location"] == a_small.get_absolute_url()
    assert response_large["Location"] == a_large.get_absolute_url()
    assert a_large.status == Assignment.Status.STARTED
    assert n_small == n_large <= START_QUERIES


def test_the_item_page_costs_the_same_queries_at_any_campaign_size():
    counts = []
    for name, size in (("ann", SMALL), ("bob", LARGE)):
        _, _, assignment, client = start_counts(name, busy_campaign(size))
        n, page = count(lambda a=assignment, c=client: c.get(a.get_absolute_url()))
        assert page.status_code == 200 and "Item 1 of 2" in page.content.decode()
        counts.append(n)
    assert counts[0] == counts[1] <= ITEM_PAGE_QUERIES


def test_a_submit_costs_the_same_queries_at_any_campaign_size():
    counts = []
    for name, size in (("ann", SMALL), ("bob", LARGE)):
        _, _, assignment, client = start_counts(name, busy_campaign(size))
        item = assignment.batch.items.order_by("order_in_batch").first()
        url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
        n, response = count(lambda c=client, u=url: c.post(u, {"choice": "left"}))
        assert response["Location"] == assignment.get_absolute_url()
        assert Judgment.objects.filter(assignment=assignment, item=item).count() == 1
        counts.append(n)
    assert counts[0] == counts[1] <= SUBMIT_QUERIES


def test_the_last_submit_of_a_batch_closes_it_with_a_few_queries_more():
    _, _, assignment, client = start_counts("ann", busy_campaign(LARGE))
    first, last = assignment.batch.items.order_by("order_in_batch")
    client.post(
        reverse("annotation:submit-item", args=[assignment.public_id, first.pk]), {"choice": "left"}
    )
    url = reverse("annotation:submit-item", args=[assignment.public_id, last.pk])
    n, response = count(lambda: client.post(url, {"choice": "right"}))
    assert response["Location"] == reverse("annotation:done", args=[assignment.public_id])
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert n <= SUBMIT_QUERIES + 4  # count, close, read back; the finish task is queued


def test_a_judgment_does_not_write_the_session():
    # Nothing in the session changes between items: saving it would be a write to the
    # cache and the database on every request a crowdworker makes.
    _, _, assignment, client = start_counts("ann", busy_campaign(SMALL))
    item = assignment.batch.items.order_by("order_in_batch").first()
    url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
    with CaptureQueriesContext(connection) as queries:
        client.post(url, {"choice": "left"})
        page = client.get(assignment.get_absolute_url())
    assert page.status_code == 200 and "Item 2 of 2" in page.content.decode()
    assert session_writes([q["sql"] for q in queries.captured_queries]) == []
    assert "sessionid" not in page.cookies


def session_writes(statements: list[str]) -> list[str]:
    return [
        sql
        for sql in statements
        if "django_session" in sql and not sql.lstrip().upper().startswith("SELECT")
    ]


def test_a_repeated_start_link_does_not_write_the_session():
    # The session already names this worker: saving it again on each batch fetch would be
    # a write to the cache and the database.
    c = busy_campaign(SMALL)
    _, _, assignment, client = start_counts("ann", c)
    statements, response = start_again(client, c)
    assert response["Location"] == assignment.get_absolute_url()
    assert Assignment.objects.filter(campaign=c, worker=assignment.worker).count() == 1
    assert session_writes(statements) == []
    assert "sessionid" not in response.cookies


def test_a_new_identity_on_a_browser_gets_a_new_session_key():
    c = ab_campaign(SMALL, batch_size=2)
    client = Client()
    client.get(reverse("annotation:start", args=[c.slug]) + "?worker=first")
    first_key = client.session.session_key
    client.get(reverse("annotation:start", args=[c.slug]) + "?worker=second")
    assert client.session.session_key != first_key
    second = Assignment.objects.get(campaign=c, worker__external_id="link:second")
    assert client.session[SESSION_KEY] == str(second.worker.public_id)


def start_again(client, c) -> tuple[list[str], object]:
    """The SQL of a returning worker's start link, and its response."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("annotation:start", args=[c.slug]))
    return [q["sql"] for q in queries.captured_queries], response


def test_a_returning_workers_start_link_reads_the_worker_once():
    # The session names the worker the logged-in account arrives as: it is not read by
    # the session's id as well.
    c = busy_campaign(SMALL)
    _, _, assignment, client = start_counts("ann", c)
    statements, response = start_again(client, c)
    assert response["Location"] == assignment.get_absolute_url()
    worker_reads = [
        s for s in statements if s.startswith("SELECT") and 'FROM "annotation_worker"' in s
    ]
    assert len(worker_reads) == 1


def test_a_public_campaigns_start_link_does_not_look_for_invitations():
    c = busy_campaign(SMALL)
    _, _, assignment, client = start_counts("ann", c)
    statements, response = start_again(client, c)
    assert response["Location"] == assignment.get_absolute_url()
    assert not [s for s in statements if "annotation_invitation" in s]


def test_a_returning_workers_batch_fetch_costs_a_fixed_number_of_queries():
    # A worker back for their next batch: the start link (campaign, account, worker,
    # visibility, lock, expiry, what they hold, their systems, the open slot, its claim)
    # and the first item (session, assignment, batch items).
    c = busy_campaign(LARGE)
    _, _, first, client = start_counts("ann", c)
    Assignment.objects.filter(pk=first.pk).update(status=Assignment.Status.SUBMITTED)
    n_start, response = count(lambda: client.get(reverse("annotation:start", args=[c.slug])))
    second = Assignment.objects.get(campaign=c, worker=first.worker, status="started")
    assert response["Location"] == second.get_absolute_url() and second.pk != first.pk
    n_page, page = count(lambda: client.get(response["Location"]))
    assert page.status_code == 200 and "Item 1 of 2" in page.content.decode()
    assert n_start + n_page == BATCH_FETCH_QUERIES


def test_a_resumed_batch_fetch_costs_fewer_queries_still():
    c = busy_campaign(LARGE)
    _, _, assignment, client = start_counts("ann", c)
    n_start, response = count(lambda: client.get(reverse("annotation:start", args=[c.slug])))
    assert response["Location"] == assignment.get_absolute_url()
    n_page, page = count(lambda: client.get(response["Location"]))
    assert page.status_code == 200 and "Item 1 of 2" in page.content.decode()
    assert Assignment.objects.filter(campaign=c, worker=assignment.worker).count() == 1
    assert n_start + n_page == RESUMED_FETCH_QUERIES
