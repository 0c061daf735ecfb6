"""The arena kind (annotation/kinds/arena.py): battle slots and gold battles, gold scored on
the side the better answer was shown, answered on another app's page, never on the
campaign form."""

import pytest

from annotation.campaigns import available_kinds
from annotation.kinds import get_kind
from annotation.kinds.arena import battle_slots, gold_item
from annotation.kinds.base import PayloadInvalid, serve_elsewhere
from annotation.models import Item

KIND = get_kind("arena")


def gold(better="first") -> Item:
    spec = gold_item("2 + 2?", "4.", "5.", better)
    return Item(content=spec.content, role=spec.role, gold=spec.gold)


def test_slots_are_numbered_task_items_and_gold_keeps_its_answer_out_of_the_content():
    assert [s.content for s in battle_slots(3)] == [{"slot": 1}, {"slot": 2}, {"slot": 3}]
    spec = gold_item("2 + 2?", "4.", "5.", "first")
    assert spec.role == "gold" and spec.gold == {"better": "first"}
    assert spec.content == {"prompt": "2 + 2?", "answers": ["4.", "5."]}
    with pytest.raises(ValueError, match="better"):
        gold_item("2 + 2?", "4.", "5.", "a")


@pytest.mark.parametrize(
    ("better", "first", "vote", "correct"),
    [
        ("first", "a", "a_better", True),
        ("first", "b", "b_better", True),
        ("first", "b", "a_better", False),
        ("second", "a", "b_better", True),
        ("second", "b", "a_better", True),
        ("second", "a", "tie", False),
        ("first", "a", "both_bad", False),
    ],
)
def test_gold_is_scored_on_the_side_the_better_answer_was_shown(better, first, vote, correct):
    result = KIND.score_gold(gold(better), {"battle": "x", "vote": vote, "first": first})
    assert (result.correct, result.mistakes) == (correct, 0 if correct else 1)


def test_a_gold_payload_without_its_side_is_not_scored():
    assert KIND.score_gold(gold(), {"battle": "x", "vote": "a_better"}) is None


def test_check_gold_names_what_is_wrong():
    assert KIND.check_gold({"prompt": "p", "answers": ["a", "b"]}, {"better": "first"}) == []
    problems = KIND.check_gold({"prompt": "p", "answers": ["a"]}, {"better": "a"})
    assert len(problems) == 2


def test_an_item_page_form_is_refused_the_battle_page_votes():
    with pytest.raises(PayloadInvalid, match="battle page"):
        KIND.parse_payload(gold(), {}, {})


def test_the_campaign_form_does_not_offer_it():
    assert "arena" not in dict(available_kinds())
    assert "ab" in dict(available_kinds())


def test_a_higher_app_serves_its_items(monkeypatch):
    from annotation.kinds import base

    monkeypatch.setattr(base, "_PAGES_ELSEWHERE", {})
    assert KIND.page_elsewhere(None, None) is None
    serve_elsewhere("arena", lambda assignment, item: f"/elsewhere/{item}")
    assert KIND.page_elsewhere(None, "slot") == "/elsewhere/slot"
    assert get_kind("ab").page_elsewhere(None, "slot") is None
