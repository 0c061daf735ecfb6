"""K-way rankings of whole conversations: items from comparable conversations of different
systems, validation, the owner rule, the page, double submission and export."""

import json
import random
from types import SimpleNamespace

import pytest
from django.http import QueryDict
from django.urls import reverse

from annotation import export
from annotation.campaigns import ConversationFiles, SetupInvalid, create_campaign
from annotation.conflicts import items_showing_systems_of
from annotation.kinds import get_kind
from annotation.kinds.base import ConfigInvalid, PayloadInvalid
from annotation.kinds.ranking import MAX_SYSTEMS
from annotation.models import Assignment, Campaign, Item, Judgment
from tests import factories

pytestmark = pytest.mark.django_db
RANKING = get_kind("conversation_ranking")


def talk(external_id, bot, domain="persona-1", first="human", **extra) -> dict:
    speakers = [first, bot] if first == "human" else [bot, "human"]
    turns = [{"speaker": i % 2, "text": f"turn {i} of a talk"} for i in range(4)]
    return {"id": external_id, "domain": domain, "speakers": speakers, "turns": turns, **extra}


def conversation_campaign(rows, config=None, **fields):
    data = "".join(json.dumps(row) + "\n" for row in rows).encode()
    campaign = Campaign(
        task_kind="conversation_ranking",
        slug=fields.pop("slug", "rank-talks"),
        title="Rank the conversations",
        task_config=config or {},
        status="live",
        allow_worker_param=True,
        **fields,
    )
    create_campaign(campaign, ConversationFiles(data, "talks.jsonl"), gold_per_batch=0)
    return campaign


def systems(*slugs, owner=None):
    return [factories.system(owner if n == 1 else None, slug=slug) for n, slug in enumerate(slugs)]


# Two personas, each talked to by three systems; one more talk of bot-a on persona-1.
TALKS = [
    talk(f"{persona}-{bot}", bot, domain=persona)
    for persona in ("persona-1", "persona-2")
    for bot in ("bot-a", "bot-b", "bot-c")
] + [talk("persona-1-bot-a-again", "bot-a", first="bot")]


def test_one_item_per_group_and_round_shows_each_systems_conversation_once():
    systems("bot-a", "bot-b", "bot-c")
    c = conversation_campaign(TALKS)
    items = list(Item.objects.filter(campaign=c).order_by("position"))
    # persona-1 has two talks of bot-a: the second round would show bot-a alone.
    assert len(items) == 2
    for item in items:
        meta = item.content["meta"]
        assert sorted(s for (s,) in meta["systems"]) == ["bot-a", "bot-b", "bot-c"]
        assert [i.split("-bot-")[0] for i in meta["conversations"]] == [meta["group"]] * 3
        assert [f"bot-{i.split('-bot-')[1][0]}" for i in meta["conversations"]] == [
            s for (s,) in meta["systems"]
        ]
        assert len(item.content["conversations"]) == 3
        shown = {c.external_id for c in item.shown_conversations.all()}
        assert shown == set(meta["conversations"])


def test_the_shown_order_is_random_per_item():
    made = systems("bot-a", "bot-b", "bot-c")
    for n in range(30):
        for system in made:
            factories.conversation(f"t{n}-{system.slug}", [None, system], ["hi", "hello"], f"p{n}")
    specs = RANKING.build_from_conversations(
        list(factories.loaded_conversations()), {}, random.Random(3)
    )
    assert len(specs) == 30
    assert {spec.content["meta"]["systems"][0][0] for spec in specs} == {"bot-a", "bot-b", "bot-c"}


def test_group_by_a_metadata_key_leaves_out_conversations_without_it():
    systems("bot-a", "bot-b")
    rows = [
        talk("r1-a", "bot-a", domain="x", metadata={"round": 1}),
        talk("r1-b", "bot-b", domain="y", metadata={"round": 1}),
        talk("r2-a", "bot-a", domain="x", metadata={"round": 2}),
        talk("r2-b", "bot-b", domain="x"),
    ]
    c = conversation_campaign(rows, {"group_by": "round"})
    (item,) = Item.objects.filter(campaign=c)
    assert item.content["meta"]["group"] == "1"
    assert sorted(item.content["meta"]["conversations"]) == ["r1-a", "r1-b"]


def test_conversations_with_no_bot_or_two_bots_are_left_out():
    systems("bot-a", "bot-b")
    rows = [
        talk("one", "bot-a"),
        talk("two", "bot-b"),
        {**talk("both", "bot-a"), "speakers": ["bot-b", "bot-a"]},
        {**talk("people", "bot-a"), "speakers": ["human", "human"]},
    ]
    c = conversation_campaign(rows)
    (item,) = Item.objects.filter(campaign=c)
    assert sorted(item.content["meta"]["conversations"]) == ["one", "two"]


def test_a_group_of_more_than_the_most_systems_is_refused():
    made = systems(*(f"bot-{n}" for n in range(MAX_SYSTEMS + 1)))
    for system in made:
        factories.conversation(f"t-{system.slug}", [None, system], ["hi", "hello"])
    with pytest.raises(ConfigInvalid, match="at most 10 conversations, but group 'chitchat'"):
        RANKING.build_from_conversations(
            list(factories.loaded_conversations()), {}, random.Random(1)
        )


def test_a_group_of_too_many_systems_leaves_no_campaign_behind():
    systems(*(f"bot-{n}" for n in range(MAX_SYSTEMS + 1)))
    rows = [talk(f"t{n}", f"bot-{n}") for n in range(MAX_SYSTEMS + 1)]
    with pytest.raises(SetupInvalid) as refused:
        conversation_campaign(rows)
    assert "group the conversations more finely" in refused.value.errors["task_config"][0]
    assert not Campaign.objects.filter(slug="rank-talks").exists()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"group_by": ""}, "group_by"),
        ({"group_by": " "}, "group_by must be a non-empty name"),
        ({"group_by": 3}, "group_by"),
        ({"allow_tie": True}, "'allow_tie' is an unknown conversation ranking config key"),
    ],
)
def test_a_wrong_config_is_refused(config, message):
    with pytest.raises(ConfigInvalid, match=message):
        RANKING.clean_config(config)


def test_config_defaults_group_by_domain_without_ties():
    assert RANKING.clean_config({}) == {
        "allow_ties": False,
        "group_by": "domain",
        "human_name": "Human",
        "bot_name": "Chatbot",
    }


def item_of(k=3):
    dialogue = [{"speaker": 0, "name": "Human", "text": "hi"}]
    return Item(
        content={
            "conversations": [dialogue] * k,
            "meta": {
                "group": "p1",
                "conversations": [f"t{n}" for n in range(k)],
                "systems": [[f"s{n}"] for n in range(k)],
            },
        }
    )


def parse(query, config=None):
    return RANKING.parse_payload(item_of(), RANKING.clean_config(config), QueryDict(query))


def test_ranks_in_shown_order_are_the_payload():
    assert parse("rank_1=3&rank_2=1&rank_3=2") == {"ranks": [3, 1, 2]}


def test_a_missing_and_an_impossible_rank_are_named_by_conversation():
    with pytest.raises(PayloadInvalid) as invalid:
        parse("rank_1=2&rank_3=0")
    assert invalid.value.errors == {
        "rank_2": "Give conversation 2 a rank.",
        "rank_3": "'0' is not a rank of conversation 3: ranks go from 1 to 3.",
    }


def test_ties_are_refused_unless_the_config_allows_them():
    with pytest.raises(PayloadInvalid) as invalid:
        parse("rank_1=2&rank_2=2&rank_3=1")
    assert invalid.value.errors[""] == (
        "Conversations 1 and 2 share rank 2. This campaign allows no ties: give each "
        "conversation its own rank."
    )
    assert parse("rank_1=2&rank_2=2&rank_3=1", {"allow_ties": True}) == {"ranks": [2, 2, 1]}


def test_a_field_of_no_conversation_is_refused():
    with pytest.raises(PayloadInvalid) as invalid:
        parse("rank_1=1&rank_2=2&rank_3=3&rank_4=4")
    assert invalid.value.errors == {"": "No such conversation on this page: rank_4."}


def test_the_owner_of_any_ranked_system_never_gets_its_items():
    owner = factories.user("owner")
    systems("bot-a", "bot-b", "bot-c", owner=owner)
    c = conversation_campaign(TALKS)
    # bot-b (neither `conversation` nor `conversation_b` of any item) is the owner's.
    assert items_showing_systems_of(c, {owner.pk}).distinct().count() == 2
    assert not items_showing_systems_of(c, {factories.user("other").pk}).exists()


def start(client, c):
    return client.get(f"{reverse('annotation:start', args=[c.slug])}?worker=w1")


def test_the_page_shows_each_conversation_with_a_rank_select_and_no_system(client):
    systems("bot-a", "bot-b", "bot-c")
    c = conversation_campaign(TALKS)
    html = client.get(start(client, c)["Location"]).content.decode()
    for n in (1, 2, 3):
        assert f'name="rank_{n}"' in html and f'aria-label="Conversation {n}"' in html
    assert html.count('class="dialogue ranked-dialogue"') == 3
    assert "turn 3" in html and "Chatbot:" in html
    assert "bot-a" not in html and "js/ranking.js" in html


def test_a_ranking_is_stored_once_and_an_error_keeps_the_ranks_given(client):
    systems("bot-a", "bot-b", "bot-c")
    c = conversation_campaign(TALKS, batch_size=2, redundancy=1)
    start(client, c)
    assignment = Assignment.objects.get(worker__external_id="link:w1")
    item = assignment.batch.items.order_by("order_in_batch").first()
    url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
    refused = client.post(url, {"rank_1": "1", "rank_2": "3", "rank_3": "1"})
    html = refused.content.decode()
    assert refused.status_code == 400 and not Judgment.objects.exists()
    assert "Conversations 1 and 3 share rank 1." in html
    assert '<option value="3" selected>' in html
    client.post(url, {"rank_1": "1", "rank_2": "3", "rank_3": "2"})
    again = client.post(url, {"rank_1": "3", "rank_2": "2", "rank_3": "1"})
    assert again.status_code in (200, 302)
    assert Judgment.objects.get().payload == {"ranks": [1, 3, 2]}


def judgment_of(payload):
    meta = {"group": "p1", "conversations": ["t0", "t1"], "systems": [["s0"], ["s1"]]}
    return SimpleNamespace(
        item=SimpleNamespace(role="task", position=4, content={"meta": meta}),
        campaign=SimpleNamespace(slug="rank-talks"),
        assignment=SimpleNamespace(batch=SimpleNamespace(position=0)),
        worker=SimpleNamespace(public_id="9a1f"),
        payload=payload,
        started_at=SimpleNamespace(timestamp=lambda: 2.0),
        client_duration_ms=3500,
    )


def test_export_row_names_the_conversations_systems_and_ranking():
    assert RANKING.export_row(judgment_of({"ranks": [2, 1]})) == {
        "campaign": "rank-talks",
        "item": 4,
        "worker": "9a1f",
        "batch": 0,
        "group": "p1",
        "conversations": ["t0", "t1"],
        "systems": [["s0"], ["s1"]],
        "ranks": [2, 1],
        "ranking": [["s1"], ["s0"]],
        "started_at_ms": 2000,
        "duration_ms": 3500,
    }


def test_csv_cells_are_plain_text():
    (row,) = export.csv_rows(RANKING, judgment_of({"ranks": [1, 1]}))
    cells = export.flat_row(row)
    assert cells["conversations"] == "t0; t1" and cells["ranking"] == "s0 = s1"


def test_the_api_creates_one_from_a_file_and_the_export_names_what_was_ranked(client):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from rest_framework.test import APIClient

    systems("bot-a", "bot-b", "bot-c")
    api = APIClient()
    api.force_authenticate(factories.user("boss", staff=True))
    data = "".join(json.dumps(row) + "\n" for row in TALKS).encode()
    body = {
        "task_kind": "conversation_ranking",
        "title": "Rank talks",
        "slug": "rank-talks",
        "task_config": json.dumps({"allow_ties": True}),
        "conversations": SimpleUploadedFile("talks.jsonl", data, "application/jsonl"),
        "redundancy": 1,
    }
    response = api.post("/api/campaigns/", body, format="multipart")
    assert response.status_code == 201, response.json()
    assert response.json()["shown"] == 2
    c = Campaign.objects.get(slug="rank-talks")
    assert c.task_config["allow_ties"] is True
    # Opened to a test worker by link, as a launch would open it to a crowd.
    Campaign.objects.filter(pk=c.pk).update(status="live", allow_worker_param=True)
    start(client, c)
    assignment = Assignment.objects.get(worker__external_id="link:w1")
    item = assignment.batch.items.order_by("order_in_batch").first()
    url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
    client.post(url, {"rank_1": "1", "rank_2": "1", "rank_3": "2"})
    client.force_login(factories.user(staff=True))
    download = client.get(reverse("annotation:manage-campaign-export-jsonl", args=[c.slug]))
    (row,) = [json.loads(line) for line in b"".join(download.streaming_content).splitlines()]
    meta = item.content["meta"]
    assert row["group"] == meta["group"] and row["conversations"] == meta["conversations"]
    assert row["ranks"] == [1, 1, 2]
    assert row["ranking"] == [sorted(meta["systems"][0] + meta["systems"][1]), meta["systems"][2]]
