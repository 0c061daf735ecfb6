"""Likert ratings: dialogue and turn level, config, payloads, the page through the real worker
views (errors next to the scale, answers kept), gold and export."""

import random
from types import SimpleNamespace

import pytest
from django.http import QueryDict
from django.urls import reverse

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.kinds.base import ConfigInvalid, PayloadInvalid
from annotation.kinds.dimensions import shown_order
from annotation.kinds.likert import DIMENSIONS, build_items, check_ratings
from annotation.models import Assignment, Item, Judgment
from tests.annotation.builders import campaign
from tests.annotation.kinds.test_abc_eval import HIKING, conversation, loaded

pytestmark = pytest.mark.django_db
LIKERT = get_kind("likert")
TURN = {"level": "turn", "dimensions": ["relevance", "grammaticality"]}


def item_for(external_id="talk"):
    specs, _ = build_items(loaded([conversation(external_id)]))
    return Item(content=specs[0].content)


def dialogue_form(**ratings) -> QueryDict:
    query = QueryDict(mutable=True)
    for dimension, value in ratings.items():
        query[f"rating_{dimension}"] = str(value)
    return query


def all_dimensions(value=4) -> dict:
    return dict.fromkeys(DIMENSIONS, value)


def test_one_item_per_human_bot_conversation():
    kept = conversation("talk-1")
    bot_bot = conversation("self-play", speakers=("chatty", "other-bot"))
    specs = LIKERT.build_from_conversations(loaded([kept, bot_bot]), {}, random.Random(0))
    assert len(specs) == 1
    spec = specs[0]
    assert spec.group_key == "talk-1" and spec.conversation_id == kept.pk
    assert spec.content["bot_turns"] == [1, 3, 5]
    assert [t["text"] for t in spec.content["turns"]] == HIKING
    assert build_items(loaded([kept, bot_bot]))[1] == 1


def test_config_defaults_to_dialogue_level_and_all_eight_dimensions():
    config = LIKERT.clean_config({})
    assert config == {"level": "dialogue", "dimensions": list(DIMENSIONS)}
    assert len(DIMENSIONS) == 8


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"level": "utterance"}, "level must be 'dialogue' or 'turn'"),
        ({"dimensions": []}, "non-empty list"),
        ({"dimensions": "quality"}, "non-empty list"),
        ({"dimensions": ["quality", "fluency"]}, "Unknown dimension 'fluency'"),
        ({"dimensions": ["quality", "quality"]}, "twice"),
    ],
)
def test_bad_configs_are_refused(config, message):
    with pytest.raises(ConfigInvalid, match=message):
        LIKERT.clean_config(config)


def test_dialogue_ratings():
    config = LIKERT.clean_config({"dimensions": ["quality", "relevance"]})
    item = item_for()
    payload = LIKERT.parse_payload(item, config, dialogue_form(quality=2, relevance=5))
    assert payload == {
        "ratings": {"quality": 2, "relevance": 5},
        "dimension_order": shown_order(item, ["quality", "relevance"]),
    }


def test_missing_and_out_of_range_ratings_get_an_error_each():
    config = LIKERT.clean_config({})
    data = dialogue_form(**{**all_dimensions(), "proactivity": 7})
    data.pop("rating_quality")
    with pytest.raises(PayloadInvalid) as raised:
        LIKERT.parse_payload(item_for(), config, data)
    assert raised.value.errors == {
        "rating_quality": "Choose a rating from 1 to 5 for quality.",
        "rating_proactivity": "'7' is not a rating from 1 to 5 for proactivity.",
    }


def test_ratings_for_dimensions_not_asked_are_refused():
    config = LIKERT.clean_config({"dimensions": ["quality"]})
    with pytest.raises(PayloadInvalid) as raised:
        LIKERT.parse_payload(item_for(), config, dialogue_form(quality=3, relevance=3))
    assert "rating_relevance" in raised.value.errors[""]


def test_turn_ratings_follow_the_bot_turns():
    config = LIKERT.clean_config(TURN)
    data = QueryDict(mutable=True)
    for position, value in ((1, 5), (3, 4), (5, 1)):
        data[f"rating_relevance_{position}"] = str(value)
        data[f"rating_grammaticality_{position}"] = "5"
    item = item_for()
    payload = LIKERT.parse_payload(item, config, data)
    assert payload == {
        "ratings": {"relevance": [5, 4, 1], "grammaticality": [5, 5, 5]},
        "dimension_order": shown_order(item, config["dimensions"]),
    }
    del data["rating_relevance_3"]
    with pytest.raises(PayloadInvalid) as raised:
        LIKERT.parse_payload(item_for("talk-2"), config, data)
    assert raised.value.errors == {
        "rating_relevance_3": "Choose a rating from 1 to 5 for relevance of bot turn 2."
    }


@pytest.mark.parametrize(
    ("config", "ratings", "message"),
    [
        ({"dimensions": ["quality"]}, {"quality": 6}, "from 1 to 5"),
        ({"dimensions": ["quality"]}, {"quality": True}, "from 1 to 5"),
        ({"dimensions": ["quality"]}, {}, "missing 'quality'"),
        ({"dimensions": ["quality"]}, {"quality": 3, "fun": 2}, "unknown dimension 'fun'"),
        (TURN, {"relevance": [5, 4], "grammaticality": [5, 5, 5]}, "each of 3 bot turns"),
        (TURN, {"relevance": 5, "grammaticality": [5, 5, 5]}, "each of 3 bot turns"),
    ],
)
def test_json_ratings_are_validated(config, ratings, message):
    with pytest.raises(PayloadInvalid) as raised:
        check_ratings(item_for().content, LIKERT.clean_config(config), ratings)
    assert message in raised.value.errors[""]


def test_gold_mistakes_are_ratings_more_than_one_away():
    item = item_for()
    item.gold = {
        "ratings": {"quality": 4, "relevance": 2, "consistency": 5},
        "explanations": {"relevance": "The bot answers a question nobody asked."},
    }
    result = LIKERT.score_gold(item, {"ratings": {"quality": 3, "relevance": 4, "consistency": 2}})
    assert result.mistakes == 2 and not result.correct
    relevance, consistency = result.feedback
    assert (relevance["yours"], relevance["gold"]) == (4, 2)
    assert relevance["explanation"] == "The bot answers a question nobody asked."
    assert consistency["where"] == "Consistency" and consistency["explanation"] == ""
    turn_gold = Item(content=item.content, gold={"ratings": {"relevance": [5, 5, 1]}})
    turn_result = LIKERT.score_gold(turn_gold, {"ratings": {"relevance": [4, 2, 3]}})
    assert [row["where"] for row in turn_result.feedback] == [
        "Relevance, bot turn 2",
        "Relevance, bot turn 3",
    ]
    assert LIKERT.score_gold(item_for("no-gold"), {"ratings": {"quality": 1}}) is None


def likert_campaign(config, n=1):
    c = campaign("likert", task_config=config, batch_size=n)
    add_items(c, build_items(loaded([conversation(f"{c.slug}-{i}") for i in range(n)]))[0])
    return c


def start(client, c):
    return client.get(f"{reverse('annotation:start', args=[c.slug])}?worker=w1")


def test_the_dialogue_page_has_a_keyed_scale_per_dimension(client):
    c = likert_campaign({})
    html = client.get(start(client, c)["Location"]).content.decode()
    assert html.count("data-choice-group") == 8
    for dimension in DIMENSIONS:
        for value in range(1, 6):
            assert (
                f'data-key="{value}"><input type="radio" name="rating_{dimension}" value="{value}"'
                in html
            )
    assert DIMENSIONS["proactivity"][1] in html
    assert "chatty" not in html.lower()


def test_the_turn_page_has_scales_under_bot_turns_only(client):
    c = likert_campaign(TURN)
    html = client.get(start(client, c)["Location"]).content.decode()
    assert html.count("data-choice-group") == 3 * 2
    assert 'name="rating_relevance_3"' in html and 'name="rating_relevance_2"' not in html


def test_errors_sit_next_to_the_scale_and_answers_are_kept(client):
    c = likert_campaign({"dimensions": ["quality", "relevance"]})
    start(client, c)
    assignment = Assignment.objects.get(worker__external_id="link:w1")
    item = assignment.batch.items.get()
    url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
    response = client.post(url, {"rating_quality": "2"})
    html = response.content.decode()
    assert response.status_code == 400 and not Judgment.objects.exists()
    assert 'name="rating_quality" value="2" checked' in html
    relevance = html[html.index('name="rating_relevance"') :]
    assert relevance.index("Choose a rating from 1 to 5 for relevance.") < relevance.index(
        "</fieldset>"
    )
    assert html.count("has-error") == 1
    client.post(url, {"rating_quality": "2", "rating_relevance": "5"})
    assert Judgment.objects.get().payload == {
        "ratings": {"quality": 2, "relevance": 5},
        "dimension_order": shown_order(item, ["quality", "relevance"]),
    }


def test_export_row():
    judgment = SimpleNamespace(
        item=item_for(),
        campaign=SimpleNamespace(slug="likert-1"),
        assignment=SimpleNamespace(batch=SimpleNamespace(position=0)),
        worker=SimpleNamespace(public_id="9a1f"),
        payload={"ratings": {"relevance": [5, 4, 1]}},
        started_at=SimpleNamespace(timestamp=lambda: 2.0),
        seconds=3.5,
    )
    assert LIKERT.export_row(judgment) == {
        "campaign": "likert-1",
        "conversation": "talk",
        "system": "chatty",
        "level": "turn",
        "worker": "9a1f",
        "batch": "likert-1:0",
        "bot_turns": [1, 3, 5],
        "ratings": {"relevance": [5, 4, 1]},
        "dimension_order": [],  # an imported judgment: no order was shown
        "started_at_ms": 2000,
        "duration_ms": 3500,
    }
    judgment.payload = {"ratings": {"quality": 3}}
    row = LIKERT.export_row(judgment)
    assert (
        row["level"] == "dialogue" and row["bot_turns"] == [] and row["ratings"] == {"quality": 3}
    )


def test_csv_rows_give_a_rating_column_per_dimension_and_a_line_per_bot_turn():
    judgment = SimpleNamespace(
        item=item_for(),
        campaign=SimpleNamespace(slug="likert-1"),
        assignment=SimpleNamespace(batch=SimpleNamespace(position=0)),
        worker=SimpleNamespace(public_id="9a1f"),
        payload={"ratings": {"relevance": [5, 4, 1], "fluency": [3, 3, 2]}},
        started_at=SimpleNamespace(timestamp=lambda: 2.0),
        seconds=3.5,
    )
    rows = LIKERT.csv_rows(judgment)
    assert [(r["turn"], r["rating"]) for r in rows] == [
        (1, {"relevance": 5, "fluency": 3}),
        (3, {"relevance": 4, "fluency": 3}),
        (5, {"relevance": 1, "fluency": 2}),
    ]
    judgment.payload = {"ratings": {"quality": 3}}
    (row,) = LIKERT.csv_rows(judgment)
    assert row["rating"] == {"quality": 3} and "turn" not in row and "bot_turns" not in row


def test_check_gold_refuses_unknown_dimensions_wrong_turns_and_off_scale_ratings():
    kind = get_kind("likert")
    content = {"bot_turns": [1, 3]}
    assert kind.check_gold(content, {"ratings": {"engagingness": [4, 5]}}) == []
    assert kind.check_gold(content, {"ratings": {"charm": 3}}) == ["unknown dimension 'charm'."]
    assert kind.check_gold(content, {"ratings": {"engagingness": [4]}}) == [
        "engagingness: one rating per bot turn (2)."
    ]
    assert kind.check_gold(content, {"ratings": {"engagingness": 7}}) == [
        "engagingness: the rating must be 1 to 5, not 7."
    ]
