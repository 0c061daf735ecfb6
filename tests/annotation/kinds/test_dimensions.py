"""One set of dimensions for Likert and comparative, shown in a random order per item that
the judgment records (as ABC-Eval did)."""

import re
from types import SimpleNamespace

import pytest

from annotation.kinds import comparative, likert
from annotation.kinds.dimensions import DEFINITIONS, DIMENSIONS, shown_order
from annotation.models import Judgment
from tests.annotation.kinds.test_comparative import all_answered, comparative_campaign, post
from tests.annotation.kinds.test_comparative import systems as systems  # noqa: F401 (fixture)
from tests.annotation.kinds.test_likert import likert_campaign, start

pytestmark = pytest.mark.django_db


def test_likert_and_comparative_share_the_definitions():
    assert likert.DIMENSIONS is DIMENSIONS
    defaults = comparative.clean_config({})
    assert defaults["dimensions"] == list(DIMENSIONS)
    assert defaults["dimension_definitions"] == DEFINITIONS
    assert DEFINITIONS["relevance"] == DIMENSIONS["relevance"][1]


def test_an_items_order_is_a_fixed_permutation_and_items_differ():
    items = [SimpleNamespace(campaign_id=7, position=p) for p in range(20)]
    orders = [tuple(shown_order(item, DIMENSIONS)) for item in items]
    assert all(sorted(order) == sorted(DIMENSIONS) for order in orders)
    assert orders == [tuple(shown_order(item, DIMENSIONS)) for item in items]
    # 20 shuffles of 8 dimensions (8! = 40320 orders): all the same would be a broken shuffle.
    assert len(set(orders)) > 15


def names_in_page_order(html: str, prefix: str) -> list[str]:
    names = re.findall(rf'name="{prefix}([a-z_]+)" value="', html)
    return list(dict.fromkeys(names))


def test_the_likert_page_shows_the_items_order_and_the_judgment_records_it(client):
    c = likert_campaign({}, n=3)
    page = client.get(start(client, c)["Location"], follow=True)
    seen = []
    while "item" in (page.context or {}):
        item = page.context["item"]
        shown = names_in_page_order(page.content.decode(), "rating_")
        assert shown == shown_order(item, DIMENSIONS)
        seen.append(shown)
        url = f"/work/assignment/{page.context['assignment'].public_id}/items/{item.pk}/"
        response = client.post(url, {f"rating_{d}": "3" for d in DIMENSIONS})
        page = client.get(response["Location"], follow=True)
        assert Judgment.objects.get(item=item).payload["dimension_order"] == shown
    assert len(seen) == 3


def test_the_comparative_page_shows_the_items_order_and_the_judgment_records_it(client, systems):
    c = comparative_campaign(systems)
    page = client.get(f"/work/{c.slug}/?worker=w1", follow=True)
    while "item" in (page.context or {}):
        item = page.context["item"]
        shown = names_in_page_order(page.content.decode(), "choice_")
        assert shown == shown_order(item, DIMENSIONS)
        page = client.get(post(client, page, all_answered("left"))["Location"], follow=True)
        assert Judgment.objects.get(item=item).payload["dimension_order"] == shown
    assert Judgment.objects.filter(campaign=c).count() == 3
