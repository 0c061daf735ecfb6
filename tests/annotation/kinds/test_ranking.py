"""K-way rankings: items from responses, merged identical texts, validation, ties, the
owner rule, the page, double submission and export."""

import random
from types import SimpleNamespace

import pytest
from django.http import QueryDict
from django.urls import reverse
from rest_framework.test import APIClient

from annotation import export
from annotation.campaigns import ResponsePairs, SetupInvalid, create_campaign
from annotation.conflicts import items_showing_systems_of
from annotation.kinds import get_kind
from annotation.kinds.base import PayloadInvalid
from annotation.kinds.ranking import MAX_SYSTEMS, ranking_tiers
from annotation.models import Assignment, Campaign, Item, Judgment
from tests import factories
from tests.annotation.test_manage import ab_setup  # noqa: F401

pytestmark = pytest.mark.django_db
RANKING = get_kind("ranking")


def systems_with(prompts, *answers, owner=None):
    """A system per list of answers (one per prompt), each with its submission."""
    made = []
    for n, lines in enumerate(answers):
        system = factories.system(owner if n == 1 else None, slug=f"bot-{n}")
        factories.submission(system, prompts, lines)
        made.append(system)
    return made


def ranking_campaign(answers, config=None, owner=None, **fields):
    prompts = factories.prompt_set(len(answers[0]))
    system, *baselines = systems_with(prompts, *answers, owner=owner)
    campaign = Campaign(
        task_kind="ranking",
        slug=fields.pop("slug", "rank"),
        title="Rank the answers",
        task_config=config or {},
        status="live",
        allow_worker_param=True,
        **fields,
    )
    create_campaign(campaign, ResponsePairs(prompts, system, baselines), gold_per_batch=0)
    return campaign


THREE = (["a one", "a two"], ["b one", "b two"], ["c one", "c two"])


def test_one_item_per_prompt_shows_every_systems_response_in_a_random_order():
    c = ranking_campaign(THREE)
    items = list(Item.objects.filter(campaign=c).order_by("position"))
    assert len(items) == 2
    for item, n in zip(items, ("one", "two"), strict=True):
        texts = item.content["responses"]
        assert sorted(texts) == [f"a {n}", f"b {n}", f"c {n}"]
        systems = item.content["meta"]["systems"]
        assert ["abc"[int(s[0][-1])] for s in systems] == [t[0] for t in texts]
        assert {r.submission.system.slug for r in item.shown_responses.all()} == {
            "bot-0",
            "bot-1",
            "bot-2",
        }


def test_shown_order_is_random_per_item():
    prompts = factories.prompt_set(60)
    answers = [[f"{s} {i}" for i in range(60)] for s in "abc"]
    system, *baselines = systems_with(prompts, *answers)
    from annotation.campaigns import response_pairs

    specs = RANKING.build_from_responses(
        response_pairs(ResponsePairs(prompts, system, baselines)), random.Random(2)
    )
    firsts = {spec.content["responses"][0][0] for spec in specs}
    assert firsts == {"a", "b", "c"}


def test_identical_responses_are_shown_once():
    c = ranking_campaign((["same", "x"], ["same ", "y"], ["z", "x"]))
    first, second = Item.objects.filter(campaign=c).order_by("position")
    assert sorted(first.content["meta"]["systems"]) == [["bot-0", "bot-1"], ["bot-2"]]
    assert len(first.content["responses"]) == 2 and first.auto_payload is None
    assert sorted(second.content["meta"]["systems"]) == [["bot-0", "bot-2"], ["bot-1"]]


def test_all_responses_identical_is_an_automatic_tie_never_shown():
    c = ranking_campaign((["q"], ["q"], [" q"]))
    item = Item.objects.get(campaign=c)
    assert item.auto_payload == {"ranks": [1], "automatic": "identical responses"}
    assert item.batch is None


def test_more_than_the_most_systems_is_refused_on_the_baselines_field():
    answers = [[f"answer of {n}"] for n in range(MAX_SYSTEMS + 1)]
    with pytest.raises(SetupInvalid) as refused:
        ranking_campaign(answers)
    assert "at most 9 baselines" in refused.value.errors["baselines"][0]
    assert not Campaign.objects.filter(slug="rank").exists()


def item_of(k=3):
    return Item(
        content={
            "context": ["hi"],
            "responses": [f"r{n}" for n in range(k)],
            "meta": {"prompt": "p1", "systems": [[f"s{n}"] for n in range(k)]},
        }
    )


def parse(query, config=None):
    return RANKING.parse_payload(item_of(), RANKING.clean_config(config), QueryDict(query))


def test_ranks_in_shown_order_are_the_payload():
    assert parse("rank_1=2&rank_2=3&rank_3=1") == {"ranks": [2, 3, 1]}


def test_a_missing_and_an_impossible_rank_are_named_by_response():
    with pytest.raises(PayloadInvalid) as invalid:
        parse("rank_1=2&rank_3=4")
    assert invalid.value.errors == {
        "rank_2": "Give response 2 a rank.",
        "rank_3": "'4' is not a rank of response 3: ranks go from 1 to 3.",
    }


def test_ties_are_refused_unless_the_config_allows_them():
    with pytest.raises(PayloadInvalid) as invalid:
        parse("rank_1=1&rank_2=1&rank_3=1")
    assert invalid.value.errors[""].startswith("Responses 1, 2 and 3 share rank 1.")
    assert parse("rank_1=1&rank_2=1&rank_3=3", {"allow_ties": True}) == {"ranks": [1, 1, 3]}


def test_a_field_of_no_response_is_refused():
    with pytest.raises(PayloadInvalid) as invalid:
        parse("rank_1=1&rank_2=2&rank_3=3&rank_4=4")
    assert invalid.value.errors == {"": "No such response on this page: rank_4."}


def test_config_defaults_to_no_ties():
    assert RANKING.clean_config({}) == {"allow_ties": False}


def test_tiers_join_ties_and_identical_texts():
    systems = [["s0"], ["s1", "s3"], ["s2"]]
    assert ranking_tiers(systems, [2, 1, 2]) == [["s1", "s3"], ["s0", "s2"]]


def test_the_owner_of_any_ranked_system_never_gets_its_items():
    owner = factories.user("owner")
    c = ranking_campaign(THREE, owner=owner)
    # bot-1 (a baseline, neither response a nor b of the item) is the owner's.
    assert items_showing_systems_of(c, {owner.pk}).distinct().count() == 2


def start(client, c):
    return client.get(f"{reverse('annotation:start', args=[c.slug])}?worker=w1")


def test_the_page_shows_a_rank_select_per_response_and_no_system(client):
    c = ranking_campaign(THREE)
    html = client.get(start(client, c)["Location"]).content.decode()
    for n in (1, 2, 3):
        assert f'name="rank_{n}"' in html
    assert html.count('<option value="3">') == 3
    assert "bot-0" not in html and "js/ranking.js" in html


def test_a_ranking_is_stored_once_and_an_error_keeps_the_ranks_given(client):
    c = ranking_campaign(THREE, batch_size=2, redundancy=1)
    start(client, c)
    assignment = Assignment.objects.get(worker__external_id="link:w1")
    item = assignment.batch.items.order_by("order_in_batch").first()
    url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
    refused = client.post(url, {"rank_1": "2", "rank_2": "2", "rank_3": "1"})
    html = refused.content.decode()
    assert refused.status_code == 400 and not Judgment.objects.exists()
    assert "Responses 1 and 2 share rank 2." in html
    assert '<option value="1" selected>' in html
    client.post(url, {"rank_1": "2", "rank_2": "3", "rank_3": "1"})
    again = client.post(url, {"rank_1": "1", "rank_2": "2", "rank_3": "3"})
    assert again.status_code in (200, 302)
    assert Judgment.objects.get().payload == {"ranks": [2, 3, 1]}


def judgment_of(payload):
    return SimpleNamespace(
        item=SimpleNamespace(
            role="task",
            position=4,
            content={"meta": {"prompt": "p1", "systems": [["s0"], ["s1", "s2"]]}},
        ),
        campaign=SimpleNamespace(slug="rank"),
        assignment=SimpleNamespace(batch=SimpleNamespace(position=0)),
        worker=SimpleNamespace(public_id="9a1f"),
        payload=payload,
        started_at=SimpleNamespace(timestamp=lambda: 2.0),
        client_duration_ms=3500,
    )


def test_export_row_names_the_systems_and_the_ranking():
    assert RANKING.export_row(judgment_of({"ranks": [2, 1]})) == {
        "campaign": "rank",
        "item": 4,
        "worker": "9a1f",
        "batch": 0,
        "prompt": "p1",
        "systems": [["s0"], ["s1", "s2"]],
        "ranks": [2, 1],
        "ranking": [["s1", "s2"], ["s0"]],
        "started_at_ms": 2000,
        "duration_ms": 3500,
    }


def test_the_api_creates_a_ranking_campaign_from_a_prompt_set_and_systems(ab_setup):  # noqa: F811
    api = APIClient()
    api.force_authenticate(factories.user("boss", staff=True))
    body = {
        "task_kind": "ranking",
        "title": "Rank greetings",
        "slug": "rank-greetings",
        "prompt_set": "greetings",
        "system": "new-bot",
        "baselines": ["baseline-1", "baseline-2"],
        "task_config": {"allow_ties": True},
        "batch_size": 2,
    }
    response = api.post("/api/campaigns/", body, format="json")
    assert response.status_code == 201, response.json()
    assert (response.json()["shown"], response.json()["automatic"]) == (3, 0)
    c = Campaign.objects.get(slug="rank-greetings")
    assert c.task_config == {"allow_ties": True}
    # baseline-1 repeats new-bot's response to one prompt: that item shows two texts.
    shown = sorted(len(item.content["responses"]) for item in c.items.all())
    assert shown == [2, 3, 3]
    assert all(item.shown_responses.count() == 3 for item in c.items.all())


def test_csv_cells_are_plain_text():
    (row,) = export.csv_rows(RANKING, judgment_of({"ranks": [2, 1]}))
    cells = export.flat_row(row)
    assert cells["systems"] == "s0; s1+s2" and cells["ranks"] == "2; 1"
    assert cells["ranking"] == "s1 = s2 > s0"
