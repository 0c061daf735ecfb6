"""Comparative: pairing, sides, neutral names, validation, the worker page, gold, export."""

import random
import re
from collections import Counter
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext
from django.utils.html import escape

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.kinds.base import ConfigInvalid, PayloadInvalid
from annotation.kinds.comparative import DIMENSION_DEFINITIONS, build_items, clean_config, pair_key
from annotation.kinds.dimensions import shown_order
from annotation.models import Item, Judgment
from evalhub.models import Conversation
from tests import factories
from tests.annotation.builders import campaign

pytestmark = pytest.mark.django_db
KIND = get_kind("comparative")
CONFIG = clean_config({})
DIMENSIONS = [
    "consistency",
    "emotion_understanding",
    "engagingness",
    "grammaticality",
    "informativeness",
    "quality",
    "proactivity",
    "relevance",
]

BREAD = [
    "I tried baking bread yesterday.",
    "Oh nice! Did it rise properly?",
    "Not really, it came out flat.",
    "Maybe the yeast was old. Did you proof it first?",
    "No, I just mixed everything together.",
    "Try dissolving it in warm water first next time.",
]
OCTOPUS = [
    "Seen any good films lately?",
    "I watched a documentary about octopuses.",
    "Were they as clever as people say?",
    "Even more. One of them opened a jar from the inside.",
    "That is a bit scary.",
    "Only if you are a crab.",
]
GOLD_EXPLANATION = "The second chatbot answers about films when asked about bread"


def conversation(external_id, speakers, texts, domain="chitchat"):
    return factories.conversation(external_id, speakers, texts, domain)


def loaded():
    return factories.loaded_conversations()


@pytest.fixture
def systems():
    return {
        slug: factories.system(None, slug=slug) for slug in ("alpha-bot", "beta-bot", "gamma-bot")
    }


def with_human(system, external_id, texts=BREAD, domain="chitchat"):
    return conversation(external_id, [None, system], texts, domain)


def test_default_pairs_are_same_domain_and_different_bots(systems):
    with_human(systems["alpha-bot"], "h-alpha-1")
    with_human(systems["alpha-bot"], "h-alpha-2")
    with_human(systems["beta-bot"], "h-beta-1", OCTOPUS)
    with_human(systems["gamma-bot"], "h-gamma-1", domain="elsewhere")
    conversation("alpha-vs-beta", [systems["alpha-bot"], systems["beta-bot"]], BREAD)
    conversation("people", [None, None], BREAD)
    specs = build_items(loaded(), {}, random.Random(2))
    assert [(s.content["meta"]["a"], s.content["meta"]["b"]) for s in specs] == [
        ("h-alpha-1", "h-beta-1"),
        ("h-alpha-2", "h-beta-1"),
    ]
    ids = dict(Conversation.objects.values_list("external_id", "pk"))
    first = specs[0]
    assert (first.conversation_id, first.conversation_b_id) == (ids["h-alpha-1"], ids["h-beta-1"])
    assert first.group_key == "h-alpha-1|h-beta-1" and first.role == "task"
    assert first.content["meta"]["systems_a"] == ["alpha-bot"]
    assert first.content["meta"]["systems_b"] == ["beta-bot"]
    assert [t["text"] for t in first.content["dialogues"]["a"]] == BREAD
    assert [t["text"] for t in first.content["dialogues"]["b"]] == OCTOPUS
    assert first.content["left_is"] in ("a", "b")


def test_the_cap_keeps_every_pairing_of_systems_and_is_seeded(systems):
    for n in range(4):
        with_human(systems["alpha-bot"], f"a-{n}")
        with_human(systems["beta-bot"], f"b-{n}")
    with_human(systems["gamma-bot"], "g-0")
    conversations = list(loaded())

    def pairs(seed):
        specs = build_items(conversations, {"max_pairs": 6}, random.Random(seed))
        return [(s.content["meta"]["a"], s.content["meta"]["b"]) for s in specs]

    chosen = pairs(5)
    assert len(set(chosen)) == 6
    cells = Counter((a[0], b[0]) for a, b in chosen)
    assert cells == {("a", "b"): 2, ("a", "g"): 2, ("b", "g"): 2}
    assert pairs(5) == chosen
    assert len({tuple(pairs(seed)) for seed in range(6)}) > 1
    assert len(build_items(conversations, {"max_pairs": None}, random.Random(0))) == 16 + 4 + 4


def test_explicit_pairs_are_used_as_given(systems):
    with_human(systems["alpha-bot"], "h-alpha-1")
    with_human(systems["alpha-bot"], "h-alpha-2")
    specs = build_items(loaded(), {"pairs": [["h-alpha-2", "h-alpha-1"]]}, random.Random(0))
    assert [(s.content["meta"]["a"], s.content["meta"]["b"]) for s in specs] == [
        ("h-alpha-2", "h-alpha-1")
    ]
    assert specs[0].group_key == pair_key("h-alpha-1", "h-alpha-2")
    with pytest.raises(ConfigInvalid, match="h-missing"):
        build_items(loaded(), {"pairs": [["h-alpha-1", "h-missing"]]}, random.Random(0))


def test_long_ids_give_a_short_group_key():
    key = pair_key("x" * 150, "y" * 150)
    assert len(key) <= 200 and key == pair_key("y" * 150, "x" * 150)


def test_sides_are_random_and_the_page_follows_them(systems):
    for n in range(8):
        with_human(systems["alpha-bot"], f"a-{n}", BREAD)
        with_human(systems["beta-bot"], f"b-{n}", OCTOPUS)
    specs = build_items(loaded(), {"max_pairs": None}, random.Random(0))
    lefts = Counter(s.content["left_is"] for s in specs)
    assert 16 < lefts["a"] < 48  # 64 fair coins: 32 ± 4 standard deviations
    for spec in specs[:4]:
        context = KIND.item_context(Item(content=spec.content), CONFIG)
        first_text = context["panels"][0]["turns"][0]["text"]
        assert (first_text == BREAD[0]) == (spec.content["left_is"] == "a")


def test_speakers_are_named_by_role_and_systems_stay_hidden(systems):
    with_human(systems["alpha-bot"], "h-alpha-1")
    conversation("beta-vs-gamma", [systems["beta-bot"], systems["gamma-bot"]], OCTOPUS)
    [spec] = build_items(loaded(), {}, random.Random(0))
    names = {
        side: [t["name"] for t in dialogue[:2]]
        for side, dialogue in spec.content["dialogues"].items()
    }
    assert names == {"a": ["Chatbot 1", "Chatbot 2"], "b": ["Human", "Chatbot"]}
    context = KIND.item_context(Item(content=spec.content), CONFIG)
    assert "meta" not in context
    assert "-bot" not in repr(context) and "beta-vs-gamma" not in repr(context)
    item = Item(content=spec.content)
    assert [d["name"] for d in context["dimensions"]] == shown_order(item, DIMENSIONS)
    assert sorted(d["name"] for d in context["dimensions"]) == sorted(DIMENSIONS)


def test_config_defaults_are_the_eight_dimensions():
    assert CONFIG["dimensions"] == DIMENSIONS
    assert CONFIG["dimension_definitions"] == DIMENSION_DEFINITIONS
    assert CONFIG["max_pairs"] == 200
    custom = clean_config(
        {"dimensions": ["quality", "humour"], "dimension_definitions": {"humour": "Is funny."}}
    )
    assert custom["dimension_definitions"]["humour"] == "Is funny."


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"dimensions": ["humour"]}, "definition for: humour"),
        ({"dimensions": []}, "non-empty"),
        ({"pairs": [["same", "same"]]}, "pairs"),
        ({"max_pairs": 0}, "max_pairs"),
        ({"gold_pairs": [{"a": "x", "b": "y", "choices": {"wit": "a"}}]}, "'wit' is not one"),
        ({"gold_pairs": [{"a": "x", "b": "y", "choices": {"quality": "left"}}]}, "a, b or neither"),
        ({"gold_pairs": [{"a": "x", "b": "y"}]}, "gold choices"),
    ],
)
def test_bad_configs(config, message):
    with pytest.raises(ConfigInvalid, match=message):
        clean_config(config)


def pair_item(left_is="b", **fields):
    return Item(content={"dialogues": {"a": [], "b": []}, "left_is": left_is}, **fields)


def all_answered(value="neither", **overrides):
    return {**{f"choice_{d}": value for d in DIMENSIONS}, **overrides}


def test_screen_sides_map_to_conversations():
    data = all_answered(choice_quality="left", choice_relevance="right")
    for left, right in (("a", "b"), ("b", "a")):
        payload = KIND.parse_payload(pair_item(left), CONFIG, QueryDict(urlencode(data)))
        assert payload["left"] == left
        assert payload["choices"]["quality"] == left
        assert payload["choices"]["relevance"] == right
        assert payload["choices"]["consistency"] == "neither"
        assert list(payload["choices"]) == DIMENSIONS


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        (all_answered(choice_quality=""), "choice_quality", "Choose an answer for quality"),
        (all_answered(choice_relevance="both"), "choice_relevance", "'both' is not a possible"),
        (all_answered(choice_humour="left"), "", "Unknown dimension: humour"),
    ],
)
def test_bad_payloads(data, field, message):
    with pytest.raises(PayloadInvalid) as raised:
        KIND.parse_payload(pair_item(), CONFIG, QueryDict(urlencode(data)))
    assert message in raised.value.errors[field]


def test_gold_pairs_and_scoring(systems):
    with_human(systems["alpha-bot"], "h-alpha-1")
    with_human(systems["beta-bot"], "h-beta-1", OCTOPUS)
    gold_choices = {"relevance": "a", "quality": "a"}
    config = {
        "pairs": [],
        "gold_pairs": [
            {"a": "h-alpha-1", "b": "h-beta-1", "choices": gold_choices, "explanation": "Clear."}
        ],
    }
    [spec] = build_items(loaded(), config, random.Random(0))
    assert spec.role == "gold" and spec.gold == {"choices": gold_choices, "explanation": "Clear."}
    item = Item(content=spec.content, gold=spec.gold)
    left = spec.content["left_is"]
    right = "b" if left == "a" else "a"
    right_answer = {"choices": {**all_answered(), "relevance": "a", "quality": "a"}, "left": left}
    assert KIND.score_gold(item, right_answer).mistakes == 0
    wrong = KIND.score_gold(item, {"choices": {"relevance": "b", "quality": "a"}, "left": left})
    assert (wrong.correct, wrong.mistakes) == (False, 1)
    shown_b = "Conversation 1" if left == "b" else "Conversation 2"
    shown_a = "Conversation 1" if right == "b" else "Conversation 2"
    assert wrong.feedback == [
        {
            "where": "Relevance",
            "field": "choice_relevance",
            "yours": shown_b,
            "gold": shown_a,
            "explanation": "Clear.",
        }
    ]


def test_default_pairing_leaves_gold_pairs_out(systems):
    with_human(systems["alpha-bot"], "h-alpha-1")
    with_human(systems["beta-bot"], "h-beta-1", OCTOPUS)
    with_human(systems["gamma-bot"], "h-gamma-1")
    gold = {"a": "h-alpha-1", "b": "h-beta-1", "choices": {"quality": "a"}}
    specs = build_items(loaded(), {"gold_pairs": [gold]}, random.Random(0))
    keys = Counter((s.role, s.group_key) for s in specs)
    assert keys == {
        ("task", "h-alpha-1|h-gamma-1"): 1,
        ("task", "h-beta-1|h-gamma-1"): 1,
        ("gold", "h-alpha-1|h-beta-1"): 1,
    }


# --- through the real worker pages ---------------------------------------------------------


def comparative_campaign(systems, n=2, **fields):
    for i in range(n):
        with_human(systems["alpha-bot"], f"a-{i}", BREAD)
        with_human(systems["beta-bot"], f"b-{i}", OCTOPUS)
    with_human(systems["gamma-bot"], "g-gold", OCTOPUS)
    config = {
        "pairs": [[f"a-{i}", f"b-{j}"] for i in range(n) for j in range(n)],
        "gold_pairs": [
            {
                "a": "a-0",
                "b": "g-gold",
                "choices": {"relevance": "a"},
                "explanation": GOLD_EXPLANATION,
            }
        ],
    }
    fields.setdefault("batch_size", 3)  # two comparisons and the check
    c = campaign("comparative", redundancy=1, task_config=config, **fields)
    add_items(c, KIND.build_from_conversations(loaded(), config, random.Random(1)))
    return c


def post(client, page, data):
    assignment, item = page.context["assignment"], page.context["item"]
    return client.post(f"/work/assignment/{assignment.public_id}/items/{item.pk}/", data)


def test_the_item_page_shows_both_dialogues_but_no_systems_nor_gold(client, systems):
    c = comparative_campaign(systems)
    page = client.get(f"/work/{c.slug}/?worker=w1", follow=True)
    seen = 0
    while "item" in (page.context or {}):
        html = page.content.decode()
        assert BREAD[3] in html and OCTOPUS[3] in html
        assert "Conversation 1" in html and "Conversation 2" in html
        assert "-bot" not in html and "g-gold" not in html and GOLD_EXPLANATION not in html
        assert html.count("data-choice-group") == 8
        assert escape(DIMENSION_DEFINITIONS["emotion_understanding"]) in html
        seen += 1
        page = client.get(post(client, page, all_answered("left"))["Location"], follow=True)
    assert seen == 3 and "completion-code" in page.content.decode()
    gold = Judgment.objects.get(item__role="gold")
    expected_mistakes = 0 if gold.item.content["left_is"] == "a" else 1
    assert gold.gold_mistakes == expected_mistakes


def test_an_incomplete_answer_is_shown_again_with_the_answers_given(client, systems):
    c = comparative_campaign(systems)
    page = client.get(f"/work/{c.slug}/?worker=w1", follow=True)
    given = all_answered("right", choice_proactivity="", choice_quality="")
    response = post(client, page, given)
    assert response.status_code == 400
    html = response.content.decode()
    assert len(re.findall(r'value="right" checked', html)) == 6
    flagged = re.findall(r'<fieldset class="question-group has-error".*?</fieldset>', html, re.S)
    assert len(flagged) == 2
    assert any("Proactivity" in f and "Choose an answer for proactivity." in f for f in flagged)
    assert not Judgment.objects.exists()


def test_worker_page_queries_do_not_depend_on_campaign_size(client, systems):
    counts = []
    for n, size in enumerate((1, 4)):
        Conversation.objects.all().delete()
        c = comparative_campaign(systems, n=size, slug=f"size-{n}")
        first = client.get(f"/work/{c.slug}/?worker=size{n}")
        with CaptureQueriesContext(connection) as queries:
            assert client.get(first["Location"]).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_export_row(client, systems):
    c = comparative_campaign(systems)
    page = client.get(f"/work/{c.slug}/?worker=w1", follow=True)
    while "item" in (page.context or {}):
        data = all_answered("left", client_ms="4100")
        page = client.get(post(client, page, data)["Location"], follow=True)
    judgment = (
        Judgment.objects.select_related("item", "worker", "campaign", "assignment__batch")
        .filter(item__role="task")
        .first()
    )
    item = judgment.item
    left = item.content["left_is"]
    assert KIND.export_row(judgment) == {
        "campaign": c.slug,
        "item": item.position,
        "worker": str(judgment.worker.public_id),
        "batch": f"{c.slug}:{judgment.assignment.batch.position}",
        "domain": "chitchat",
        "conversation_a": item.conversation.external_id,
        "conversation_b": item.conversation_b.external_id,
        "systems_a": ["alpha-bot"],
        "systems_b": ["beta-bot"],
        "left": left,
        "choices": dict.fromkeys(DIMENSIONS, left),
        "dimension_order": shown_order(item, DIMENSIONS),
        "started_at_ms": int(judgment.started_at.timestamp() * 1000),
        "duration_ms": 4100,
    }


def test_csv_rows_name_the_choices_per_dimension(monkeypatch):
    row = {"item": 3, "left": "b", "choices": {"engaging": "a", "human": "neither"}}
    monkeypatch.setattr(KIND, "export_row", lambda judgment: dict(row))
    assert KIND.csv_rows(None) == [
        {"item": 3, "left": "b", "choice": {"engaging": "a", "human": "neither"}}
    ]


def test_check_gold_refuses_an_unknown_side():
    kind = get_kind("comparative")
    assert kind.check_gold({}, {"choices": {"engagingness": "neither"}}) == []
    assert kind.check_gold({}, {"choices": {"engagingness": "c"}}) == [
        "engagingness: the choice must be a, b or neither, not 'c'."
    ]
