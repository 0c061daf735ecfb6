"""Staff pages of quality control: the worker table of a campaign, block and unblock."""

import pytest
from django.contrib.admin.models import LogEntry
from django.test import Client
from django.urls import reverse

from annotation.allocation import next_assignment
from annotation.models import Judgment, Worker
from annotation.services import record_judgment, submit_if_complete
from tests import factories
from tests.annotation.builders import ab_campaign, batch_items

pytestmark = pytest.mark.django_db


def table_url(c, sort=None):
    url = reverse("annotation:quality-workers", args=[c.slug])
    return f"{url}?sort={sort}" if sort else url


def block_url(w):
    return reverse("annotation:quality-worker-block", args=[w.public_id])


def row_of(html: str, w) -> str:
    start = html.index(f'id="worker-{w.public_id}"')
    return html[start : html.index("</tr>", start)]


def worked(c, *names, choices=None):
    """Workers who each did one batch, answering `choices[name]` on every item."""
    from django.utils import timezone

    workers = []
    for name in names:
        w = Worker.objects.create(provider="local", external_id=f"link:{name}")
        a = next_assignment(c, w)
        items = batch_items(a)
        for item in items:
            choice = (choices or {}).get(name, "a")
            record_judgment(a, item, {"choice": choice, "left": "a"}, started_at=timezone.now())
        submit_if_complete(a, len(items))
        workers.append(w)
    return workers


@pytest.fixture
def staff_client(client):
    client.force_login(factories.user("boss", staff=True))
    return client


def test_anonymous_visitors_are_sent_to_log_in(client):
    c = ab_campaign(2)
    response = client.get(table_url(c))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_researchers_are_refused(client):
    c = ab_campaign(2)
    client.force_login(factories.user("researcher"))
    assert client.get(table_url(c)).status_code == 403


def test_staff_see_each_workers_figures(staff_client):
    # One gold item per batch, gold answer "a": a is right, b is wrong.
    c = ab_campaign(2, gold=1, batch_size=2, redundancy=2)
    a, b = worked(c, "ann", "bob", choices={"ann": "a", "bob": "b"})
    response = staff_client.get(table_url(c))
    assert response.status_code == 200
    html = response.content.decode()
    assert "link:ann" in html and "link:bob" in html
    row_a, row_b = row_of(html, a), row_of(html, b)
    # Judgments (task + gold), batches submitted, gold correct.
    assert '<td class="num">3</td>\n      <td class="num">1</td>' in row_a
    assert '100% <small class="muted">1/1</small>' in row_a
    assert '0% <small class="muted">0/1</small>' in row_b
    assert "Active" in row_a and 'value="block"' in row_a


def test_the_table_sorts_by_the_query_parameter(staff_client):
    c = ab_campaign(2, gold=1, batch_size=2, redundancy=2)
    worked(c, "ann", "bob", choices={"ann": "a", "bob": "b"})
    ascending = staff_client.get(table_url(c, "gold")).content.decode()
    assert ascending.index("link:bob") < ascending.index("link:ann")
    assert 'aria-sort="ascending"' in ascending and "?sort=-gold" in ascending
    descending = staff_client.get(table_url(c, "-gold")).content.decode()
    assert descending.index("link:ann") < descending.index("link:bob")


def test_the_page_makes_the_same_queries_for_more_workers(staff_client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = []
    for n in (2, 6):
        c = ab_campaign(2 * n, gold=1, batch_size=2, redundancy=1)
        worked(c, *[f"w{n}-{i}" for i in range(n)])
        with CaptureQueriesContext(connection) as queries:
            assert staff_client.get(table_url(c)).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1] <= 8


def test_blocking_works_and_the_worker_gets_no_new_work(staff_client):
    c = ab_campaign(6, batch_size=2, max_batches_per_worker=3)
    (w,) = worked(c, "spammer")
    response = staff_client.post(
        block_url(w),
        {"action": "block", "reason": "Answers in one second", "campaign": c.slug, "sort": "gold"},
    )
    assert response.status_code == 302
    assert response["Location"] == table_url(c, "gold")
    w.refresh_from_db()
    assert (w.blocked, w.blocked_reason) == (True, "Answers in one second")
    assert LogEntry.objects.get(object_id=str(w.pk)).change_message.startswith("Blocked")
    page = staff_client.get(response["Location"]).content.decode()
    assert "link:spammer is blocked" in page and "Answers in one second" in page
    # Through the worker's own start link: refused, no new batch.
    worker_client = Client()
    start = reverse("annotation:start", args=[c.slug]) + "?worker=spammer"
    assert "cannot take new work" in worker_client.get(start).content.decode()
    assert w.assignments.count() == 1
    assert Judgment.objects.filter(worker=w).count() == 2


def test_unblocking_gives_work_again(staff_client):
    c = ab_campaign(6, batch_size=2, max_batches_per_worker=3)
    (w,) = worked(c, "forgiven")
    staff_client.post(block_url(w), {"action": "block", "reason": "x", "campaign": c.slug})
    response = staff_client.post(
        block_url(w), {"action": "unblock", "reason": "", "campaign": c.slug}
    )
    assert response.status_code == 302
    w.refresh_from_db()
    assert (w.blocked, w.blocked_reason) == (False, "")
    worker_client = Client()
    start = reverse("annotation:start", args=[c.slug]) + "?worker=forgiven"
    assert worker_client.get(start).status_code == 302
    assert w.assignments.count() == 2


def test_blocking_needs_a_reason_shown_next_to_the_field(staff_client):
    c = ab_campaign(2, batch_size=2)
    (w,) = worked(c, "w")
    response = staff_client.post(
        block_url(w), {"action": "block", "reason": "   ", "campaign": c.slug, "sort": "-gold"}
    )
    assert response.status_code == 400
    row = row_of(response.content.decode(), w)
    assert 'aria-invalid="true"' in row and "Say why this worker is blocked" in row
    assert 'name="sort" value="-gold"' in row
    w.refresh_from_db()
    assert not w.blocked


def test_it_only_allows_post(staff_client):
    c = ab_campaign(2, batch_size=2)
    (w,) = worked(c, "w")
    assert staff_client.get(block_url(w), {"action": "block", "reason": "x"}).status_code == 405
    w.refresh_from_db()
    assert not w.blocked


def test_only_staff_may_block(client):
    c = ab_campaign(2, batch_size=2)
    (w,) = worked(c, "w")
    data = {"action": "block", "reason": "x", "campaign": c.slug}
    anonymous = client.post(block_url(w), data)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    client.force_login(factories.user("researcher"))
    assert client.post(block_url(w), data).status_code == 403
    w.refresh_from_db()
    assert not w.blocked


def test_blocking_needs_csrf():
    c = ab_campaign(2, batch_size=2)
    (w,) = worked(c, "w")
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(factories.user("boss", staff=True))
    data = {"action": "block", "reason": "x", "campaign": c.slug}
    assert strict.post(block_url(w), data).status_code == 403
    w.refresh_from_db()
    assert not w.blocked


def test_it_handles_missing_workers_and_campaigns(staff_client):
    import uuid

    c = ab_campaign(2, batch_size=2)
    (w,) = worked(c, "w")
    missing = reverse("annotation:quality-worker-block", args=[uuid.uuid4()])
    data = {"action": "block", "reason": "x", "campaign": c.slug}
    assert staff_client.post(missing, data).status_code == 404
    assert staff_client.get(table_url(c).replace(c.slug, "no-such-campaign")).status_code == 404
    assert staff_client.post(block_url(w), {**data, "campaign": "no-such"}).status_code == 404
    assert staff_client.post(block_url(w), {"action": "block", "reason": "x"}).status_code == 400
    w.refresh_from_db()
    assert not w.blocked


def test_the_table_shows_each_workers_training_attempts_and_outcome(staff_client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.annotation.test_training import abc_campaign, train
    from tests.annotation.test_training import worker as trainee

    # The gate to training is the start link: allocation itself serves anyone, as it
    # does a worker who took a batch before the campaign required training.
    c = abc_campaign(training=2, n_task=4, config={"training_conversations": 1})
    passed, failed, never = trainee("ann"), trainee("bob"), trainee("cat")
    train(c, passed, 3)
    train(c, passed, 0)
    train(c, failed, 3)
    for w in (passed, failed, never):
        assert next_assignment(c, w) is not None
    with CaptureQueriesContext(connection) as queries:
        html = staff_client.get(table_url(c)).content.decode()
    assert "passed <small" in row_of(html, passed) and ">2 attempts<" in row_of(html, passed)
    assert "failed <small" in row_of(html, failed) and ">1 attempt<" in row_of(html, failed)
    assert "not trained <small" in row_of(html, never) and ">0 attempts<" in row_of(html, never)
    qualification_queries = [q for q in queries if "annotation_qualification" in q["sql"]]
    assert len(qualification_queries) == 1
    # A kind without training shows no outcome.
    ab = ab_campaign(2, batch_size=2)
    (w,) = worked(ab, "dan")
    assert '<td class="training"><span class="muted">–</span></td>' in row_of(
        staff_client.get(table_url(ab)).content.decode(), w
    )
