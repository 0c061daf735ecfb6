"""Lists that scale: search, sort and pagination on systems, prompt sets and campaigns;
the comparison filter highlighted; prompt sets downloaded in their upload formats."""

import json

import pytest
from django.urls import reverse

from evalhub.importers.prompts import parse_prompts
from evalhub.listing import PER_PAGE
from evalhub.services import create_prompt_set
from tests import factories
from tests.annotation.builders import ab_campaign
from tests.annotation.test_progress import NOW, judge, shown

pytestmark = pytest.mark.django_db


def names(response) -> list[str]:
    """Link texts of the table's first column, in order."""
    import re

    body = response.content.decode().split("<tbody>")[1].split("</tbody>")[0]
    return re.findall(r'<tr>\s*<td><a href="[^"]+">([^<]+)</a>', body)


def test_systems_are_searched_by_name_slug_or_owner(client):
    factories.system(factories.user("zoe"), name="Alpha Bot", slug="alpha")
    factories.system(name="Beta Bot", slug="beta")
    factories.system(name="Gamma", slug="gamma-thing")
    assert names(client.get(reverse("system-list"), {"q": "bot"})) == ["Alpha Bot", "Beta Bot"]
    assert names(client.get(reverse("system-list"), {"q": "zoe"})) == ["Alpha Bot"]
    assert names(client.get(reverse("system-list"), {"q": "gamma thing"})) == ["Gamma"]
    page = client.get(reverse("system-list"), {"q": "nothing-like-it"}).content.decode()
    assert "No system matches." in page


def test_systems_sort_both_ways_and_unknown_sorts_fall_back(client):
    for name in ("B", "C", "A"):
        factories.system(name=name)
    assert names(client.get(reverse("system-list"), {"sort": "-name"})) == ["C", "B", "A"]
    assert names(client.get(reverse("system-list"), {"sort": "name"})) == ["A", "B", "C"]
    assert names(client.get(reverse("system-list"), {"sort": "owner__password"})) == ["A", "B", "C"]


def test_a_long_list_is_paginated_and_the_links_keep_the_search(client):
    for n in range(PER_PAGE + 5):
        factories.system(name=f"Bot {n:03d}")
    first = client.get(reverse("system-list"), {"q": "bot", "sort": "-name"})
    assert len(names(first)) == PER_PAGE and names(first)[0] == f"Bot {PER_PAGE + 4:03d}"
    assert "?q=bot&amp;sort=-name&page=2" in first.content.decode()
    second = client.get(reverse("system-list"), {"q": "bot", "sort": "-name", "page": 2})
    assert names(second) == [f"Bot {n:03d}" for n in range(4, -1, -1)]


def test_a_nul_byte_in_the_search_is_refused_not_a_server_error(client):
    # Refused before the view, as in every URL (evalhub/nul_refusal.py).
    assert client.get(reverse("system-list"), {"q": "a\x00b"}).status_code == 400


def test_prompt_sets_are_searched_and_sorted_by_size(client):
    factories.prompt_set(2, slug="small-set")
    factories.prompt_set(5, slug="large-set")
    response = client.get(reverse("promptset-list"), {"sort": "-prompts"})
    assert names(response) == ["Large-Set", "Small-Set"]
    assert names(client.get(reverse("promptset-list"), {"q": "small"})) == ["Small-Set"]


def test_staff_search_and_sort_campaigns(client):
    client.force_login(factories.user(staff=True))
    busy = ab_campaign(4, slug="busy", title="Busy one")
    ab_campaign(2, slug="quiet", title="Quiet one")
    judge(shown(busy)[0], "w1", at=NOW)
    url = reverse("annotation:manage-campaigns")
    assert names(client.get(url, {"sort": "-judgments"})) == ["Busy one", "Quiet one"]
    assert names(client.get(url, {"sort": "judgments"})) == ["Quiet one", "Busy one"]
    assert names(client.get(url, {"q": "quiet"})) == ["Quiet one"]


def test_the_comparison_marks_what_its_filter_matched(client):
    prompt_set = factories.prompt_set(2, slug="hello")
    a, b = factories.system(slug="a-bot"), factories.system(slug="b-bot")
    factories.submission(a, prompt_set, ["Weather is <nice>", "no match here"])
    factories.submission(b, prompt_set, ["the WEATHER again", "nothing"])
    page = client.get(
        reverse("compare"), {"prompt_set": "hello", "systems": ["a-bot", "b-bot"], "q": "weather"}
    ).content.decode()
    assert "<mark>Weather</mark> is &lt;nice&gt;" in page
    assert "the <mark>WEATHER</mark> again" in page
    assert "no match here" not in page


def test_a_prompt_set_downloads_as_jsonl_and_reads_back_the_same():
    data = "\n".join(
        json.dumps(row)
        for row in [
            {"id": "x1", "context": ["hi", "hello, how are you?"], "references": ["fine"]},
            {"id": "x2", "context": ["ça va ?"], "references": []},
        ]
    ).encode()
    prompt_set = create_prompt_set(slug="two", name="Two", data=data, filename="p.jsonl")
    from django.test import Client

    response = Client().get(reverse("promptset-download-jsonl", args=["two"]))
    assert response.status_code == 200 and response.streaming
    body = b"".join(response.streaming_content)
    assert parse_prompts(body, "two.jsonl", 10**6) == parse_prompts(data, "p.jsonl", 10**6)
    assert prompt_set.prompts.count() == 2
    # Several utterances cannot be written one per line.
    assert Client().get(reverse("promptset-download-txt", args=["two"])).status_code == 404


def test_a_text_prompt_set_downloads_as_text(client):
    create_prompt_set(slug="lines", name="Lines", data=b"hello\nhow are you?\n", filename="p.txt")
    page = client.get(reverse("promptset-detail", args=["lines"])).content.decode()
    assert "prompts.txt" in page and "prompts.jsonl" in page
    response = client.get(reverse("promptset-download-txt", args=["lines"]))
    assert b"".join(response.streaming_content) == b"hello\nhow are you?\n"
    assert response["Content-Disposition"] == 'attachment; filename="lines.txt"'


def test_tournaments_and_leaderboards_are_searched_and_sorted(client):
    from tests.analysis import builders

    builders.bare_tournament(name="Spring cup", slug="spring")
    builders.bare_tournament(name="Autumn cup", slug="autumn")
    builders.bare_tournament(name="Winter league", slug="winter")
    for url in (reverse("tournaments:list"), reverse("analysis:list")):
        assert names(client.get(url, {"q": "cup", "sort": "name"})) == ["Autumn cup", "Spring cup"]
        assert names(client.get(url, {"sort": "-name"})) == [
            "Winter league",
            "Spring cup",
            "Autumn cup",
        ]
