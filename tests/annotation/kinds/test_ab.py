"""ChatEval A/B: items from responses, random sides, automatic ties, validation, gold, export."""

import random

import pytest
from django.http import QueryDict

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.kinds.base import PayloadInvalid
from annotation.models import Item, Judgment
from tests import factories
from tests.annotation.builders import campaign

pytestmark = pytest.mark.django_db
AB = get_kind("ab")


def pairs_for(lines_a, lines_b):
    prompts = factories.prompt_set(len(lines_a))
    sub_a = factories.submission(factories.system(None, slug="mine"), prompts, lines_a)
    sub_b = factories.submission(
        factories.system(None, slug="base", is_baseline=True), prompts, lines_b
    )
    a = {r.prompt_id: r for r in sub_a.responses.select_related("prompt", "submission__system")}
    b = {r.prompt_id: r for r in sub_b.responses.select_related("submission__system")}
    return [(a[pid].prompt, a[pid], b[pid]) for pid in sorted(a)]


def test_one_item_per_prompt_with_random_sides_and_automatic_ties():
    pairs = pairs_for(["x one", "same  text", "x three"], ["y one", "same text", "y three"])
    specs = AB.build_from_responses(pairs, random.Random(4))
    assert len(specs) == 3
    tie = specs[1]
    assert tie.auto_payload == {"choice": "tie", "automatic": "identical responses"}
    shown = [s for s in specs if s.auto_payload is None]
    for spec in shown:
        texts = {spec.content["left"], spec.content["right"]}
        assert texts in ({"x one", "y one"}, {"x three", "y three"})
        left_text = spec.content["left"]
        assert (spec.content["left_is"] == "a") == left_text.startswith("x")
        assert (
            spec.content["meta"]["system_a"] == "mine"
            and spec.content["meta"]["system_b"] == "base"
        )


def test_sides_are_balanced_over_many_items():
    pairs = pairs_for([f"a{i}" for i in range(200)], [f"b{i}" for i in range(200)])
    specs = AB.build_from_responses(pairs, random.Random(0))
    lefts = sum(s.content["left_is"] == "a" for s in specs)
    assert 70 < lefts < 130  # a fair coin: 100 ± 4 standard deviations


def test_automatic_ties_are_stored_but_never_batched():
    pairs = pairs_for(["same", "different a"], ["same", "different b"])
    c = campaign("ab", batch_size=5)
    counts = add_items(c, AB.build_from_responses(pairs, random.Random(1)))
    assert counts["automatic"] == 1 and counts["shown"] == 1
    assert Item.objects.get(campaign=c, auto_payload__isnull=False).batch is None


def item_shown_left(left_is):
    return Item(content={"context": ["hi"], "left": "L", "right": "R", "left_is": left_is})


@pytest.mark.parametrize(
    ("left_is", "answer", "choice"),
    [
        ("a", "left", "a"),
        ("a", "right", "b"),
        ("b", "left", "b"),
        ("b", "right", "a"),
        ("b", "tie", "tie"),
    ],
)
def test_screen_sides_map_to_systems(left_is, answer, choice):
    payload = AB.parse_payload(item_shown_left(left_is), {}, QueryDict(f"choice={answer}"))
    assert payload == {"choice": choice, "left": left_is}


@pytest.mark.parametrize(
    ("query", "message"), [("", "Choose an answer"), ("choice=middle", "not a possible answer")]
)
def test_bad_payloads(query, message):
    with pytest.raises(PayloadInvalid) as raised:
        AB.parse_payload(item_shown_left("a"), {}, QueryDict(query))
    assert message in raised.value.errors["choice"]


def test_gold_scoring_with_feedback():
    item = Item(content={}, gold={"choice": "a", "explanation": "A answers the question."})
    assert AB.score_gold(item, {"choice": "a", "left": "b"}).correct
    wrong = AB.score_gold(item, {"choice": "tie", "left": "b"})
    assert (wrong.correct, wrong.mistakes) == (False, 1)
    assert wrong.feedback[0]["explanation"] == "A answers the question."


def test_context_for_the_page_hides_systems():
    item = Item(
        content={
            "context": ["hi"],
            "left": "L",
            "right": "R",
            "left_is": "a",
            "meta": {"system_a": "secret"},
        }
    )
    assert AB.item_context(item, {}) == {"context": ["hi"], "left": "L", "right": "R"}


def test_export_row(client):
    from tests.annotation.builders import ab_campaign

    c = ab_campaign(2, batch_size=2, redundancy=1)
    client.get(f"/work/{c.slug}/?worker=w1")
    assignment = c.assignments.get(worker__isnull=False)
    for item in assignment.batch.items.all():
        client.post(
            f"/work/assignment/{assignment.public_id}/items/{item.pk}/",
            {"choice": "left", "client_ms": "1500"},
        )
    judgment = Judgment.objects.select_related(
        "item", "assignment__batch", "worker", "campaign"
    ).first()
    row = AB.export_row(judgment)
    assert row["choice"] == judgment.item.content["left_is"] and row["duration_ms"] == 1500
    assert row["system_a"] == "sys-a" and row["worker"] == str(judgment.worker.public_id)


def test_check_gold_refuses_an_unknown_choice():
    kind = get_kind("ab")
    assert kind.check_gold({}, {"choice": "tie"}) == []
    assert kind.check_gold({}, {"choice": "left"}) == ["'choice' must be a, b or tie, not 'left'."]
