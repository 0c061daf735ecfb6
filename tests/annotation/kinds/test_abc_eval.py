"""ABC-Eval behaviour labels: items from human-bot conversations, config, payloads, the page
through the real worker views, gold scoring, thresholds and export."""

import random
from types import SimpleNamespace

import pytest
from django.http import QueryDict
from django.urls import reverse

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.kinds.abc_eval import LABELS, TASKS, build_items, check_labels, with_gold
from annotation.kinds.base import ConfigInvalid, PayloadInvalid
from annotation.models import Assignment, Item, Judgment
from evalhub.models import Conversation, Speaker, System, Turn
from tests.annotation.builders import campaign

pytestmark = pytest.mark.django_db
ABC = get_kind("abc_eval")

# User turns at even positions, bot turns at 1, 3, 5.
HIKING = [
    "Hi! I just got back from a week of hiking in the Alps.",
    "Welcome back! Which part of the Alps did you walk in?",
    "Around Chamonix. My knees are sore after all those descents.",
    "Long descents are hard on knees. I climbed Mont Blanc myself last summer.",
    "Wow, was the climb very hard?",
    "I have never been to the mountains, so I would not know.",
]
SELF_CONTRADICTION = "The bot said it climbed Mont Blanc, so it has been to the mountains."
CONSISTENCY_GOLD = {
    "self contradiction": [0, 0, 1],
    "partner contradiction": [0, 0, 0],
    "redundant": [0, 0, 0],
}


def conversation(external_id, lines=HIKING, *, speakers=("human", "chatty")):
    """A conversation whose turns alternate between two speakers (a slug, or "human")."""
    c = Conversation.objects.create(external_id=external_id)
    for index, who in enumerate(speakers):
        system = None
        if who != "human":
            system = System.objects.get_or_create(slug=who, defaults={"name": who.title()})[0]
        Speaker.objects.create(conversation=c, index=index, system=system)
    Turn.objects.bulk_create(
        Turn(conversation=c, position=i, speaker=i % len(speakers), text=text)
        for i, text in enumerate(lines)
    )
    return c


def loaded(conversations):
    return Conversation.objects.filter(pk__in=[c.pk for c in conversations]).prefetch_related(
        "speakers__system", "turns"
    )


def specs_for(conversations, task="consistency"):
    return ABC.build_from_conversations(
        loaded(conversations), {"behaviour_task": task}, random.Random(0)
    )


def item_for(task="consistency", gold=None):
    spec = specs_for([conversation(f"c-{task}")], task)[0]
    return Item(content=spec.content, gold=gold)


def form(query: str) -> QueryDict:
    return QueryDict(query)


def test_one_item_per_human_bot_conversation_and_others_are_counted():
    kept = conversation("talk-1")
    bot_first = conversation("talk-2", speakers=("chatty", "human"))
    bot_bot = conversation("self-play", speakers=("chatty", "other-bot"))
    people = conversation("people", speakers=("human", "human"))
    silent = conversation("silent-bot", HIKING[:1])
    specs, skipped = build_items(
        loaded([kept, bot_first, bot_bot, people, silent]), {"behaviour_task": "empathy"}
    )
    assert skipped == 3
    by_id = {s.content["meta"]["conversation"]: s for s in specs}
    assert set(by_id) == {"talk-1", "talk-2"}
    first = by_id["talk-1"]
    assert first.content["bot_turns"] == [1, 3, 5]
    assert [t["bot"] for t in first.content["turns"]] == [False, True] * 3
    assert [t["text"] for t in first.content["turns"]] == HIKING
    assert first.content["task"] == "empathy" and first.content["meta"]["system"] == "chatty"
    assert first.group_key == "talk-1:empathy" and first.conversation_id == kept.pk
    assert by_id["talk-2"].content["bot_turns"] == [0, 2, 4]


def test_the_eight_tasks_hold_the_sixteen_labels_once_each():
    labels = [name for task in TASKS.values() for name in task.labels]
    assert len(TASKS) == 8 and sorted(labels) == sorted(LABELS) and len(set(labels)) == 16
    assert TASKS["transitions"].labels == ("ignore", "irrelevant", "follow-up", "topic switch")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, "Choose a behaviour_task"),
        ({"behaviour_task": "empathetic"}, "'empathetic' is not one of"),
    ],
)
def test_config_needs_one_of_the_eight_tasks(config, message):
    with pytest.raises(ConfigInvalid, match=message):
        ABC.clean_config(config)


def test_config_accepts_a_task():
    assert ABC.clean_config({"behaviour_task": "knowledge"})["behaviour_task"] == "knowledge"


def test_checked_boxes_become_flags_per_bot_turn():
    item = item_for("consistency")
    payload = ABC.parse_payload(
        item,
        {},
        form("flag_self_contradiction_5=1&flag_redundant_1=1&flag_redundant_3=1&reviewed=1"),
    )
    assert payload == {
        "labels": {
            "self contradiction": [0, 0, 1],
            "partner contradiction": [0, 0, 0],
            "redundant": [1, 1, 0],
        }
    }


def test_no_label_anywhere_is_a_valid_answer_once_reviewed():
    payload = ABC.parse_payload(item_for("transitions"), {}, form("reviewed=1"))
    assert payload["labels"]["follow-up"] == [0, 0, 0] and len(payload["labels"]) == 4


def test_a_careless_submit_must_confirm_every_turn_was_checked():
    with pytest.raises(PayloadInvalid) as raised:
        ABC.parse_payload(item_for("empathy"), {}, form("flag_empathetic_1=1"))
    assert set(raised.value.errors) == {"reviewed"}
    assert "I checked every bot turn" in raised.value.errors["reviewed"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("flag_fact_usage_1=1", "unknown label 'fact_usage'"),
        ("flag_empathetic_2=1", "turn '2' is not a bot turn"),
        ("flag_empathetic_x=1", "turn 'x' is not a bot turn"),
        ("flag_empathetic_3=2", "'2' is not 0 or 1"),
    ],
)
def test_tampered_forms_are_refused(query, message):
    with pytest.raises(PayloadInvalid) as raised:
        ABC.parse_payload(item_for("empathy"), {}, form(query + "&reviewed=1"))
    assert message in raised.value.errors[""]


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (
            {"empathetic": [0, 0, 1], "lack of empathy": [0, 0, 0], "ignore": [0, 0, 0]},
            "unknown label 'ignore'",
        ),
        ({"empathetic": [0, 0, 1]}, "missing label 'lack of empathy'"),
        ({"empathetic": [0, 1], "lack of empathy": [0, 0, 0]}, "one flag per bot turn (3)"),
        ({"empathetic": [0, 2, 1], "lack of empathy": [0, 0, 0]}, "flags must be 0 or 1"),
        ({"empathetic": [0, True, 1], "lack of empathy": [0, 0, 0]}, "flags must be 0 or 1"),
        (["empathetic"], "labels must map"),
    ],
)
def test_json_labels_are_validated(labels, message):
    with pytest.raises(PayloadInvalid) as raised:
        check_labels(item_for("empathy").content, labels)
    assert message in raised.value.errors[""]


def test_gold_counts_turns_with_any_disagreement_and_explains_them():
    spec = with_gold(
        specs_for([conversation("gold-1")])[0],
        CONSISTENCY_GOLD,
        {5: SELF_CONTRADICTION, 3: "Climbing Mont Blanc is the bot's own story, not a repeat."},
    )
    item = Item(content=spec.content, gold=spec.gold)
    assert spec.role == "training" and item.gold["explanations"]["5"] == SELF_CONTRADICTION
    perfect = ABC.score_gold(item, {"labels": CONSISTENCY_GOLD})
    assert perfect.correct and perfect.mistakes == 0 and perfect.feedback == []
    # Turn 3: two wrong labels count once; turn 5: the missed contradiction.
    answer = {
        "self contradiction": [0, 1, 0],
        "partner contradiction": [0, 0, 0],
        "redundant": [0, 1, 0],
    }
    result = ABC.score_gold(item, {"labels": answer})
    assert not result.correct and result.mistakes == 2
    turn_3, turn_5 = result.feedback
    assert turn_3["where"] == "Bot turn 2" and turn_3["yours"] == [
        "self contradiction",
        "redundant",
    ]
    assert turn_3["gold"] == [] and "own story" in turn_3["explanation"]
    assert turn_5["quote"] == HIKING[5] and turn_5["gold"] == ["self contradiction"]
    assert turn_5["yours"] == [] and turn_5["explanation"] == SELF_CONTRADICTION


def test_gold_must_fit_the_item():
    spec = specs_for([conversation("gold-2")])[0]
    with pytest.raises(PayloadInvalid, match="not bot turns"):
        with_gold(spec, CONSISTENCY_GOLD, {2: "a user turn"})
    with pytest.raises(PayloadInvalid, match="one flag per bot turn"):
        with_gold(spec, {**CONSISTENCY_GOLD, "redundant": [0]}, {})


def test_items_without_gold_are_not_scored():
    assert ABC.score_gold(item_for(), {"labels": CONSISTENCY_GOLD}) is None


@pytest.mark.parametrize(
    ("task", "threshold"),
    [("uninterpretable", 2), ("antisocial", 2)]
    + [(t, 3) for t in TASKS if t not in ("uninterpretable", "antisocial")],
)
def test_training_key_and_threshold_per_task(task, threshold):
    config = {"behaviour_task": task}
    assert ABC.training_key(config) == f"abc_eval:{task}"
    assert ABC.default_training_threshold(config) == threshold


def abc_campaign(task="consistency", n=2, gold=False):
    c = campaign("abc_eval", task_config={"behaviour_task": task}, batch_size=n + int(gold))
    specs = specs_for([conversation(f"{c.slug}-{i}") for i in range(n)], task)
    if gold:
        check = specs_for([conversation(f"{c.slug}-gold")], task)[0]
        specs.append(with_gold(check, CONSISTENCY_GOLD, {5: SELF_CONTRADICTION}, role="gold"))
    add_items(c, specs)
    return c


def start(client, c, worker="w1"):
    return client.get(f"{reverse('annotation:start', args=[c.slug])}?worker={worker}")


def test_the_worker_page_shows_the_conversation_and_a_box_per_label_and_bot_turn(client):
    c = abc_campaign(n=2, gold=True)
    html = client.get(start(client, c)["Location"]).content.decode()
    for line in HIKING:
        assert line.replace("'", "&#x27;") in html
    for name in ("self_contradiction", "partner_contradiction", "redundant"):
        for position in (1, 3, 5):
            assert f'name="flag_{name}_{position}"' in html
        assert f'name="flag_{name}_2"' not in html
    assert html.count('type="checkbox"') == 9 + 1
    assert 'title="The bot contradicts something it said earlier in the dialogue."' in html
    assert "I checked every bot turn" in html
    # Neither the gold of the check item nor which system speaks reaches the page.
    assert SELF_CONTRADICTION not in html and "explanation" not in html
    assert "chatty" not in html.lower()


def test_a_missing_confirmation_shows_the_error_and_keeps_the_ticks(client):
    c = abc_campaign(n=1)
    start(client, c)
    assignment = Assignment.objects.get(worker__external_id="link:w1")
    item = assignment.batch.items.get()
    url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
    response = client.post(url, {"flag_redundant_3": "1", "flag_self_contradiction_5": "1"})
    html = response.content.decode()
    assert response.status_code == 400 and not Judgment.objects.exists()
    assert 'id="reviewed-error"' in html and "I checked every bot turn" in html
    assert 'name="flag_redundant_3" value="1" checked' in html
    assert 'name="flag_self_contradiction_5" value="1" checked' in html
    assert 'name="flag_redundant_1" value="1">' in html
    client.post(url, {"flag_redundant_3": "1", "reviewed": "1"})
    judgment = Judgment.objects.get()
    assert judgment.payload["labels"]["redundant"] == [0, 1, 0]


def test_gold_checks_are_scored_on_the_server(client):
    c = abc_campaign(n=1, gold=True)
    start(client, c)
    assignment = Assignment.objects.get(worker__external_id="link:w1")
    for item in assignment.batch.items.order_by("order_in_batch"):
        url = reverse("annotation:submit-item", args=[assignment.public_id, item.pk])
        client.post(url, {"reviewed": "1"})
    check = Judgment.objects.get(item__role="gold")
    assert (check.gold_correct, check.gold_mistakes) == (False, 1)


def test_export_row():
    started = SimpleNamespace(timestamp=lambda: 1000.5)
    item = item_for("empathy")
    judgment = SimpleNamespace(
        item=item,
        campaign=SimpleNamespace(slug="abc-empathy"),
        assignment=SimpleNamespace(batch=SimpleNamespace(position=4)),
        worker=SimpleNamespace(public_id="0d6c"),
        payload={"labels": {"empathetic": [1, 0, 0], "lack of empathy": [0, 0, 1]}},
        started_at=started,
        seconds=12.25,
    )
    assert ABC.export_row(judgment) == {
        "campaign": "abc-empathy",
        "conversation": "c-empathy",
        "system": "chatty",
        "task": "empathy",
        "worker": "0d6c",
        "batch": "abc-empathy:4",
        "bot_turns": [1, 3, 5],
        "labels": {"empathetic": [1, 0, 0], "lack of empathy": [0, 0, 1]},
        "started_at_ms": 1000500,
        "duration_ms": 12250,
    }


def test_csv_rows_are_one_line_per_bot_turn_with_a_column_per_label():
    judgment = SimpleNamespace(
        item=item_for("empathy"),
        campaign=SimpleNamespace(slug="abc-empathy"),
        assignment=SimpleNamespace(batch=SimpleNamespace(position=4)),
        worker=SimpleNamespace(public_id="0d6c"),
        payload={"labels": {"empathetic": [1, 0, 0], "lack of empathy": [0, 0, 1]}},
        started_at=SimpleNamespace(timestamp=lambda: 1000.5),
        seconds=12.25,
    )
    rows = ABC.csv_rows(judgment)
    assert [(r["turn"], r["empathetic"], r["lack of empathy"]) for r in rows] == [
        (1, 1, 0),
        (3, 0, 0),
        (5, 0, 1),
    ]
    assert rows[0]["conversation"] == "c-empathy" and "labels" not in rows[0]


def test_check_gold_refuses_unknown_labels_and_a_wrong_number_of_turns():
    kind = get_kind("abc_eval")
    content = {"task": "antisocial", "bot_turns": [1, 3]}
    assert kind.check_gold(content, {"labels": {"antisocial": [0, 1]}}) == []
    assert kind.check_gold(content, {"labels": {"antisocial": [0]}}) == [
        "'antisocial' needs one flag per bot turn (2)."
    ]
    (message,) = kind.check_gold(content, {"labels": {"antisocial": [0, 1], "rude": [1, 1]}})
    assert "unknown label 'rude'" in message
