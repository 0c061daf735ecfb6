"""Spot The Bot: segments, neutral names, validation, the worker page, gold, export, analysis."""

import random
import re

import pytest
from django.db import connection
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.kinds.base import ConfigInvalid, PayloadInvalid
from annotation.kinds.spot_the_bot import AnalysisRow, analysis_rows, build_items, clean_config
from annotation.models import Assignment, Item, Judgment
from evalhub.models import Conversation, Speaker
from tests import factories
from tests.annotation.builders import campaign

pytestmark = pytest.mark.django_db
KIND = get_kind("spot_the_bot")
CONFIG = clean_config({})

# Five exchanges of small talk; exchange i is lines 2i and 2i+1.
HIKE = [
    "Hi! How was your weekend?",
    "Pretty good, I went hiking near the lake.",
    "Nice, was the weather alright?",
    "Sunny in the morning, then it rained on the way back.",
    "Did you get soaked?",
    "A little. I had left my jacket in the car.",
    "Classic. Are you going again next week?",
    "Maybe, if my knee stops hurting.",
    "Take it easy then, there is always the weekend after.",
    "True. What about you, anything fun?",
]
EXPLANATION_WORDS = "two humans wrote this conversation"


def conversation(external_id, speakers, texts, domain="dailydialog"):
    return factories.conversation(external_id, speakers, texts, domain)


def loaded():
    return factories.loaded_conversations()


@pytest.fixture
def bots():
    return factories.system(None, slug="parrotbot-7"), factories.system(None, slug="echo-lm")


def test_one_item_per_conversation_and_length_with_short_ones_skipped(bots):
    conversation("c-long", bots, HIKE)
    conversation("c-short", bots, HIKE[:7])  # three exchanges and a dangling turn
    specs, skipped = build_items(loaded(), {}, random.Random(1))
    by_conversation = {}
    for spec in specs:
        by_conversation.setdefault(spec.group_key, []).append(spec)
    assert sorted(s.segment_length for s in by_conversation["c-long"]) == [2, 3, 5]
    assert sorted(s.segment_length for s in by_conversation["c-short"]) == [2, 3]
    assert skipped == 1
    for spec in specs:
        k = spec.segment_length
        assert [t["text"] for t in spec.content["turns"]] == HIKE[: 2 * k]
        assert [t["speaker"] for t in spec.content["turns"]] == [0, 1] * k
        assert spec.content["meta"]["exchanges"] == k
        assert spec.role == "task" and spec.gold is None
    long_pk = Conversation.objects.get(external_id="c-long").pk
    assert {s.conversation_id for s in by_conversation["c-long"]} == {long_pk}


def test_building_from_prefetched_conversations_makes_no_queries(bots, django_assert_num_queries):
    conversation("c-1", bots, HIKE)
    conversation("c-2", [bots[0], None], HIKE)
    conversations = list(loaded())
    with django_assert_num_queries(0):
        specs = KIND.build_from_conversations(
            conversations, {"segment_lengths": [2]}, random.Random(0)
        )
    assert len(specs) == 2


def test_speakers_get_neutral_names_and_the_systems_stay_in_meta(bots):
    conversation("c-1", [bots[0], None], HIKE[:4])
    config = clean_config({"speaker_names": ["Ann", "Bo"], "segment_lengths": [2]})
    [spec] = build_items(loaded(), config, random.Random(0))[0]
    assert spec.content["speakers"] == ["Ann", "Bo"]
    assert spec.content["meta"] == {
        "conversation": "c-1",
        "speakers": ["parrotbot-7", "human"],
        "exchanges": 2,
    }
    context = KIND.item_context(Item(content=spec.content), config)
    assert "meta" not in context
    assert "parrotbot" not in repr(context) and "c-1" not in repr(context)
    assert [t["name"] for t in context["turns"]] == ["Ann", "Bo", "Ann", "Bo"]
    assert [s["name"] for s in context["speakers"]] == ["Ann", "Bo"]


def test_gold_conversations_give_one_check_at_the_longest_length(bots):
    conversation("c-bots", bots, HIKE)
    conversation("c-people", [None, None], HIKE[:8])
    specs, skipped = build_items(loaded(), {"gold_conversations": ["c-people"]}, random.Random(0))
    gold = [s for s in specs if s.role == "gold"]
    assert len(gold) == 1 and len(specs) == 4 and skipped == 0
    assert gold[0].segment_length == 3 and gold[0].group_key == "c-people"
    assert gold[0].gold["labels"] == ["human", "human"]
    assert EXPLANATION_WORDS in gold[0].gold["explanation"]


def test_unknown_gold_conversation_is_a_config_error(bots):
    conversation("c-bots", bots, HIKE)
    with pytest.raises(ConfigInvalid, match="c-missing"):
        build_items(loaded(), {"gold_conversations": ["c-missing"]}, random.Random(0))
    conversation("c-brief", [None, None], HIKE[:3])
    with pytest.raises(ConfigInvalid, match="c-brief is shorter than the shortest segment"):
        build_items(loaded(), {"gold_conversations": ["c-brief"]}, random.Random(0))


def test_a_conversation_needs_exactly_two_speakers(bots):
    c = conversation("c-three", bots, HIKE)
    Speaker.objects.create(conversation=c, index=2, system=None)
    with pytest.raises(ConfigInvalid, match="two speakers"):
        build_items(loaded(), {}, random.Random(0))


def test_config_defaults_and_features():
    assert CONFIG["segment_lengths"] == [2, 3, 5]
    assert CONFIG["features"] == ["sensibleness", "specificity", "fluency"]
    assert set(CONFIG["feature_definitions"]) == {"sensibleness", "specificity", "fluency"}
    subset = clean_config(
        {"features": ["fluency", "humour"], "feature_definitions": {"humour": "Is funny."}}
    )
    assert subset["feature_definitions"] == {
        "fluency": CONFIG["feature_definitions"]["fluency"],
        "humour": "Is funny.",
    }


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"features": ["humour"]}, "definition for: humour"),
        ({"features": ["Bad Name"]}, "lowercase"),
        ({"segment_lengths": [2, 0]}, "segment_lengths"),
        ({"segment_lengths": [2, 2]}, "segment_lengths"),
        ({"speaker_names": ["Same", "Same"]}, "speaker_names"),
    ],
)
def test_bad_configs(config, message):
    with pytest.raises(ConfigInvalid, match=message):
        clean_config(config)


def segment_item(**fields):
    content = {
        "speakers": ["Speaker 1", "Speaker 2"],
        "turns": [{"speaker": 0, "text": "hello"}, {"speaker": 1, "text": "hi"}],
        "meta": {"conversation": "c-1", "speakers": ["alpha", "beta"], "exchanges": 1},
    }
    return Item(content=content, **fields)


GOOD = "label_0=bot&label_1=unsure&better_sensibleness=1&better_specificity=none&better_fluency=0"


def test_a_complete_answer_becomes_an_interchange_payload():
    payload = KIND.parse_payload(segment_item(), CONFIG, QueryDict(GOOD))
    assert payload == {
        "labels": ["bot", "unsure"],
        "better": {"sensibleness": 1, "specificity": None, "fluency": 0},
    }


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        (GOOD.replace("label_1=unsure&", ""), "label_1", "Choose an answer for Speaker 2"),
        (GOOD.replace("label_0=bot", "label_0=robot"), "label_0", "'robot' is not a possible"),
        (GOOD.replace("better_fluency=0", "better_fluency=2"), "better_fluency", "not a possible"),
        (GOOD.replace("&better_fluency=0", ""), "better_fluency", "Choose an answer for fluency"),
        (GOOD + "&better_humour=0", "", "Unknown feature: humour"),
    ],
)
def test_bad_payloads(query, field, message):
    with pytest.raises(PayloadInvalid) as raised:
        KIND.parse_payload(segment_item(), CONFIG, QueryDict(query))
    assert message in raised.value.errors[field]


def test_unknown_feature_is_reported_with_missing_answers():
    with pytest.raises(PayloadInvalid) as raised:
        KIND.parse_payload(segment_item(), CONFIG, QueryDict("label_0=bot&better_humour=1"))
    assert set(raised.value.errors) == {
        "",
        "label_1",
        "better_sensibleness",
        "better_specificity",
        "better_fluency",
    }


def test_gold_scoring_counts_wrong_speakers_and_unsure_is_wrong():
    item = segment_item(gold={"labels": ["human", "bot"], "explanation": "Ann is a person."})
    right = KIND.score_gold(item, {"labels": ["human", "bot"], "better": {}})
    assert (right.correct, right.mistakes, right.feedback) == (True, 0, [])
    wrong = KIND.score_gold(item, {"labels": ["unsure", "human"], "better": {}})
    assert (wrong.correct, wrong.mistakes) == (False, 2)
    assert wrong.feedback[0] == {
        "where": "Speaker 1",
        "field": "label_0",
        "yours": "unsure",
        "gold": "human",
        "explanation": "Ann is a person.",
    }
    assert wrong.feedback[1]["where"] == "Speaker 2" and wrong.feedback[1]["gold"] == "bot"
    assert KIND.score_gold(segment_item(), {"labels": ["bot", "bot"], "better": {}}) is None


# --- through the real worker pages ---------------------------------------------------------


def stb_campaign(bots, n_conversations=2, gold=True, **fields):
    for n in range(n_conversations):
        conversation(f"c-bots-{n}", bots, HIKE)
    config = {"segment_lengths": [2, 3]}
    if gold:
        conversation("c-people", [None, None], HIKE[:6])
        config["gold_conversations"] = ["c-people"]
    fields.setdefault("batch_size", 2 + int(gold))  # with gold, the check is one of them
    c = campaign("spot_the_bot", redundancy=1, task_config=config, **fields)
    add_items(c, KIND.build_from_conversations(loaded(), config, random.Random(3)))
    return c


def answers(**overrides):
    data = {
        "label_0": "bot",
        "label_1": "human",
        "better_sensibleness": "0",
        "better_specificity": "none",
        "better_fluency": "1",
        "client_ms": "2500",
    }
    return {**data, **overrides}


def post(client, response, data):
    assignment, item = response.context["assignment"], response.context["item"]
    url = f"/work/assignment/{assignment.public_id}/items/{item.pk}/"
    return client.post(url, data)


def test_the_item_page_shows_the_segment_but_not_who_speaks_nor_gold(client, bots):
    c = stb_campaign(bots)
    page = client.get(f"/work/{c.slug}/?worker=w1", follow=True)
    seen = 0
    while "item" in (page.context or {}):
        html = page.content.decode()
        item = page.context["item"]
        for turn in item.content["turns"]:
            assert turn["text"].replace("'", "&#x27;") in html
        assert "parrotbot-7" not in html and "echo-lm" not in html
        assert EXPLANATION_WORDS not in html and "c-bots" not in html and "c-people" not in html
        assert html.count("data-choice-group") == 5
        assert 'data-key="h"' in html and 'data-key="3"' in html
        assert CONFIG["feature_definitions"]["specificity"] in html
        seen += 1
        page = client.post(
            f"/work/assignment/{page.context['assignment'].public_id}/items/{item.pk}/",
            answers(),
            follow=True,
        )
    assert seen == 3 and "completion-code" in page.content.decode()


def test_an_incomplete_answer_is_shown_again_with_the_answers_given(client, bots):
    c = stb_campaign(bots, gold=False)
    page = client.get(f"/work/{c.slug}/?worker=w1", follow=True)
    response = post(client, page, {"label_0": "unsure", "better_fluency": "1"})
    assert response.status_code == 400
    html = response.content.decode()
    assert re.search(r'name="label_0" value="unsure" checked', html)
    assert re.search(r'name="better_fluency" value="1" checked', html)
    assert len(re.findall(r" checked", html)) == 2
    # The message sits inside the question it is about.
    speaker_2 = re.search(r'<fieldset class="question-group has-error".*?</fieldset>', html, re.S)
    assert "Speaker 2 is" in speaker_2.group(0)
    assert "Choose an answer for Speaker 2." in speaker_2.group(0)
    assert not Judgment.objects.exists()


def test_judgments_are_stored_in_the_interchange_shape_and_gold_is_scored(client, bots):
    c = stb_campaign(bots)
    page = client.get(f"/work/{c.slug}/?worker=w1", follow=True)
    while "item" in (page.context or {}):
        page = post(client, page, answers(label_0="human"))
        page = client.get(page["Location"], follow=True)
    gold = Judgment.objects.get(item__role="gold")
    assert gold.payload == {
        "labels": ["human", "human"],
        "better": {"sensibleness": 0, "specificity": None, "fluency": 1},
    }
    assert (gold.gold_correct, gold.gold_mistakes) == (True, 0)
    assert Judgment.objects.filter(gold_correct__isnull=True).count() == 2


def test_worker_page_queries_do_not_depend_on_campaign_size(client, bots):
    counts = []
    for n, size in enumerate((1, 6)):
        Conversation.objects.all().delete()
        c = stb_campaign(bots, n_conversations=size, gold=False, slug=f"size-{n}")
        first = client.get(f"/work/{c.slug}/?worker=size{n}")
        with CaptureQueriesContext(connection) as queries:
            assert client.get(first["Location"]).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_export_row_is_one_line_of_the_interchange_format(client, bots):
    c = stb_campaign(bots, gold=False)
    page = client.get(f"/work/{c.slug}/?worker=p-77", follow=True)
    page = post(client, page, answers())
    page = post(client, client.get(page["Location"]), answers(client_ms=""))
    judgments = Judgment.objects.select_related("item", "worker", "campaign", "assignment__batch")
    timed, untimed = sorted(judgments, key=lambda j: j.client_duration_ms is None)
    row = KIND.export_row(timed)
    assert row == {
        "conversation": timed.item.conversation.external_id,
        "worker": str(timed.worker.public_id),
        "batch": f"{c.slug}:0",
        "exchanges": timed.item.segment_length,
        "labels": ["bot", "human"],
        "better": {"sensibleness": 0, "specificity": None, "fluency": 1},
        "started_at_ms": int(timed.started_at.timestamp() * 1000),
        "duration_ms": 2500,
    }
    assert "p-77" not in repr(row)
    untimed_row = KIND.export_row(untimed)
    server_ms = (untimed.submitted_at - untimed.started_at).total_seconds() * 1000
    assert untimed_row["duration_ms"] == round(server_ms)
    assert Assignment.objects.get(worker__isnull=False).status == "submitted"


def test_csv_rows_give_a_label_per_speaker_and_the_better_speaker_per_feature(monkeypatch):
    row = {
        "conversation": "c-1",
        "labels": ["bot", "human"],
        "better": {"sensibleness": 0, "specificity": None, "fluency": 1},
        "duration_ms": 2500,
    }
    monkeypatch.setattr(KIND, "export_row", lambda judgment: dict(row))
    assert KIND.csv_rows(None) == [
        {
            "conversation": "c-1",
            "duration_ms": 2500,
            "label_1": "bot",
            "label_2": "human",
            "better": {"sensibleness": 1, "specificity": None, "fluency": 2},
        }
    ]


def test_analysis_rows_code_preferences_per_speaker():
    task = Item(
        role="task",
        content={"meta": {"conversation": "c-9", "speakers": ["alpha", "beta"], "exchanges": 3}},
    )
    gold = Item(
        role="gold",
        content={"meta": {"conversation": "c-0", "speakers": ["human", "human"], "exchanges": 2}},
    )
    payload = {
        "labels": ["human", "bot"],
        "better": {"sensibleness": None, "specificity": 1, "fluency": 0},
    }
    judgments = [
        Judgment(pk=11, worker_id=4, item=task, payload=payload),
        Judgment(pk=12, worker_id=4, item=gold, payload={"labels": ["bot", "bot"], "better": {}}),
    ]
    assert analysis_rows(judgments) == [
        AnalysisRow(
            judgment=11,
            worker=4,
            conversation="c-9",
            speaker=0,
            system="alpha",
            opponent="beta",
            exchanges=3,
            label="human",
            opponent_label="bot",
            features={"sensibleness": 0, "specificity": -1, "fluency": 1},
        ),
        AnalysisRow(
            judgment=11,
            worker=4,
            conversation="c-9",
            speaker=1,
            system="beta",
            opponent="alpha",
            exchanges=3,
            label="bot",
            opponent_label="human",
            features={"sensibleness": 0, "specificity": 1, "fluency": -1},
        ),
    ]


def test_cleaned_configs_do_not_share_the_defaults():
    clean_config({})["segment_lengths"].append(9)
    KIND.default_config()["features"].append("humour")
    assert clean_config({})["segment_lengths"] == [2, 3, 5]
    assert KIND.default_config()["features"] == ["sensibleness", "specificity", "fluency"]


# The seed: the opening given to both speakers, never a speaker's turn ----------------------


def collected(external_id, speakers):
    """A collected conversation: HIKE's first exchange is its seed, the rest its turns."""
    c = conversation(external_id, speakers, HIKE[2:])
    c.seed_turns = [{"speaker": 0, "text": HIKE[0]}, {"speaker": 1, "text": HIKE[1]}]
    c.save()
    return c


def test_segments_count_the_exchanges_after_the_seed(bots):
    collected("c-1", bots)  # four exchanges after its seed
    specs, skipped = build_items(loaded(), {"segment_lengths": [2, 4, 5]}, random.Random(0))
    assert sorted(s.segment_length for s in specs) == [2, 4] and skipped == 1
    for spec in specs:
        k = spec.segment_length
        # Each system produced k outputs: k turns of each, none of them the seed.
        assert [t["text"] for t in spec.content["turns"]] == HIKE[2 : 2 + 2 * k]
        assert "seed" not in spec.content  # hidden unless the campaign shows it


def test_with_show_seed_the_opening_is_shown_apart_and_controls_look_alike(bots):
    collected("c-1", bots)
    conversation("h-1", [None, None], HIKE)
    config = clean_config({"segment_lengths": [2], "show_seed": True})
    specs = {s.group_key: s for s in build_items(loaded(), config, random.Random(0))[0]}
    opening = [{"speaker": 0, "text": HIKE[0]}, {"speaker": 1, "text": HIKE[1]}]
    for key in ("c-1", "h-1"):
        assert specs[key].content["seed"] == opening
        assert [t["text"] for t in specs[key].content["turns"]] == HIKE[2:6]
    context = KIND.item_context(Item(content=specs["c-1"].content), config)
    assert [(t["name"], t["text"]) for t in context["seed"]] == [
        ("Speaker 1", HIKE[0]),
        ("Speaker 2", HIKE[1]),
    ]
    assert [t["text"] for t in context["turns"]] == HIKE[2:6]


def test_without_show_seed_a_control_starts_at_its_first_exchange(bots):
    conversation("h-1", [None, None], HIKE)
    [spec] = build_items(loaded(), {"segment_lengths": [2]}, random.Random(0))[0]
    assert [t["text"] for t in spec.content["turns"]] == HIKE[:4] and "seed" not in spec.content


def test_the_page_marks_the_opening_as_written_by_neither_speaker(bots):
    from django.template.loader import render_to_string

    collected("c-1", bots)
    config = clean_config({"segment_lengths": [2], "show_seed": True})
    [spec] = build_items(loaded(), config, random.Random(0))[0]
    page = render_to_string(
        KIND.template, {"task": KIND.item_context(Item(content=spec.content), config)}
    )
    opening = page[page.index('data-testid="opening"') : page.index("</div>")]
    assert HIKE[0] in opening and HIKE[1] in opening and "Neither of them wrote it" in opening
    assert HIKE[2] not in opening and HIKE[2] in page
    hidden = clean_config({"segment_lengths": [2]})
    [spec] = build_items(loaded(), hidden, random.Random(0))[0]
    page = render_to_string(
        KIND.template, {"task": KIND.item_context(Item(content=spec.content), hidden)}
    )
    assert HIKE[0] not in page and 'data-testid="opening"' not in page


def test_check_gold_refuses_a_wrong_number_of_speakers_and_unknown_labels():
    kind = get_kind("spot_the_bot")
    content = {"speakers": ["Speaker 1", "Speaker 2"]}
    assert kind.check_gold(content, {"labels": ["bot", "human"]}) == []
    assert kind.check_gold(content, {"labels": ["bot"]}) == [
        "'labels' must hold one label per speaker (2)."
    ]
    assert kind.check_gold(content, {"labels": ["bot", "robot"]}) == [
        "the label of Speaker 2 must be one of human, bot, unsure, not 'robot'."
    ]
