"""The judgments page of a campaign: staff and the campaign's owner see its judgments,
searchable by worker id and item position, sorted and paginated, gold marked; the page's
queries do not grow with the campaign."""

from datetime import timedelta

import pytest
from django.urls import reverse

from annotation.models import Judgment
from evalhub import listing
from tests import factories
from tests.annotation.builders import ab_campaign
from tests.annotation.test_progress import NOW, judge, shown

pytestmark = pytest.mark.django_db


def url(c):
    return reverse("annotation:manage-campaign-judgments", args=[c.slug])


NAMES = ["ann", "bob", "cyd"]  # no digits, so that a search for a position finds items only


def judged(n_items: int, n_workers: int, **fields):
    c = ab_campaign(n_items, batch_size=n_items, redundancy=n_workers, **fields)
    for w in range(n_workers):
        for item in shown(c) + shown(c, role="gold"):
            judge(item, NAMES[w], at=NOW - timedelta(minutes=5), ms=2000)
    return c


def rows(response):
    return list(response.context["page"])


def test_staff_see_the_judgments_with_gold_marked(client):
    c = judged(2, 2, gold=1)
    Judgment.objects.filter(item__role="gold").update(gold_correct=True)
    client.force_login(factories.user("boss", staff=True))
    response = client.get(url(c))
    assert response.status_code == 200
    assert len(rows(response)) == Judgment.objects.filter(campaign=c).count() == 6
    html = response.content.decode()
    assert "Gold / attention check" in html and "ann" in html and "bob" in html
    assert "<code>choice</code>: a" in html


def test_the_owner_sees_their_campaigns_judgments(client):
    owner = factories.user("owner")
    c = judged(2, 1, owner=owner)
    client.force_login(owner)
    response = client.get(url(c))
    assert response.status_code == 200 and len(rows(response)) == 2


def test_another_researcher_is_refused(client):
    c = judged(2, 1, owner=factories.user("owner"))
    client.force_login(factories.user("other"))
    assert client.get(url(c)).status_code == 403


def test_anonymous_visitors_go_to_the_login_page(client):
    c = judged(1, 1)
    response = client.get(url(c))
    assert response.status_code == 302 and "login" in response["Location"]


def test_search_by_worker_id(client):
    c = judged(2, 3)
    client.force_login(factories.user("boss", staff=True))
    found = rows(client.get(url(c), {"q": "bob"}))
    assert len(found) == 2 and {j.worker.external_id for j in found} == {"bob"}


def test_search_by_item_position_and_sort_by_worker(client):
    c = judged(2, 2)
    item = shown(c)[1]
    client.force_login(factories.user("boss", staff=True))
    found = rows(client.get(url(c), {"q": str(item.position), "sort": "-worker"}))
    assert [(j.item_id, j.worker.external_id) for j in found] == [
        (item.pk, "bob"),
        (item.pk, "ann"),
    ]


def test_pagination(client):
    c = judged(listing.PER_PAGE + 5, 1)
    client.force_login(factories.user("boss", staff=True))
    first = client.get(url(c), {"sort": "position"}).context["page"]
    second = client.get(url(c), {"sort": "position", "page": 2}).context["page"]
    assert first.paginator.num_pages == 2
    assert [j.item.position for j in first] + [j.item.position for j in second] == sorted(
        i.position for i in shown(c)
    )


def test_the_campaign_page_links_to_the_judgments(client):
    c = judged(1, 1)
    client.force_login(factories.user("boss", staff=True))
    assert url(c) in client.get(c.get_absolute_url()).content.decode()


def test_queries_do_not_grow_with_the_campaign(client, django_assert_max_num_queries):
    small, big = judged(2, 2), judged(40, 2)
    client.force_login(factories.user("boss", staff=True))
    counts = []
    for c, n in ((small, 4), (big, listing.PER_PAGE)):
        with django_assert_max_num_queries(8) as queries:
            response = client.get(url(c))
        assert len(rows(response)) == n
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_the_search_matches_the_systems_an_item_shows(client):
    from annotation.models import Item

    c = judged(2, 1)
    first, second = shown(c)
    Item.objects.filter(pk=first.pk).update(
        content={**first.content, "meta": {"system_a": "persona-bot", "system_b": "seq2seq"}}
    )
    client.force_login(factories.user("boss", staff=True))

    response = client.get(url(c) + "?q=persona")

    assert [j.item_id for j in rows(response)] == [first.pk]
