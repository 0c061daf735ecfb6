"""Exporting an arena's voted battles in the clean-battle format: what Chatbot Arena's
tools read, EvalHub's own fields under "evalhub", and an export imports again unchanged."""

import io
import json

import pytest

from arenas import battles
from arenas.battles import Outcome
from arenas.interchange.export import export_lines
from arenas.interchange.writing import import_battles
from arenas.models import Battle, BattleAnswer
from arenas.voters import Voter
from tests import factories
from tests.arenas.builders import arena, bot_system
from tests.arenas.clean_battles import conversation, line, stream

pytestmark = pytest.mark.django_db


def exported(made) -> list[dict]:
    return [json.loads(text) for text in export_lines(made)]


def test_an_export_imports_again_into_another_arena_unchanged():
    owner = factories.user()
    source = arena(owner)
    rows = [
        line(
            "q1",
            winner="tie (bothbad)",
            category_tag={"math": True},
            conv_metadata={
                "sum_assistant_a_tokens": 3,
                "sum_assistant_b_tokens": 4,
                "sum_user_tokens": 1,
            },
            **conversation(("Hi", "Hello there", "Hey you all")),
        ),
        line("q2", "claude-2", "gpt-4-0613", winner="model_b", turn=1, anony=False),
    ]
    import_battles(source, stream(*rows), create=True)
    lines = exported(source)
    first = lines[0]
    assert first["winner"] == "tie (bothbad)" and first["evalhub"]["vote"] == "both_bad"
    assert first["category_tag"] == {"math": True}
    assert first["conv_metadata"]["sum_assistant_a_tokens"] == 3
    assert first["conv_metadata"]["sum_user_tokens"] == 1
    assert first["conversation_a"][1] == {"role": "assistant", "content": "Hello there"}
    assert (first["judge"], first["tstamp"], first["language"]) == (
        "arena_user_1",
        1682351591.5,
        "English",
    )
    assert lines[1]["anony"] is False and "conversation_a" not in lines[1]

    target = arena(owner)
    data = "".join(json.dumps(row) + "\n" for row in lines).encode()
    result = import_battles(target, io.BytesIO(data), create=False)
    assert result.created == 2
    again = exported(target)
    for before, after in zip(lines, again, strict=True):
        assert {k: v for k, v in after.items() if k != "evalhub"} == {
            k: v for k, v in before.items() if k != "evalhub"
        }


def test_only_voted_battles_are_exported_and_voters_are_pseudonyms(
    django_capture_on_commit_callbacks,
):
    owner = factories.user()
    made = arena(owner, systems=[bot_system(owner, slug="one"), bot_system(owner, slug="two")])
    voter = Voter(user=owner, platform="site", ref=f"user:{owner.pk}")
    with django_capture_on_commit_callbacks(execute=True):
        voted = battles.start_battle(made, voter, "Name a colour.")
    battles.start_battle(made, voter, "Unvoted battle.")
    for answer in BattleAnswer.objects.filter(turn__battle=voted):
        battles.claim(answer.pk, 60)
        battles.settle(answer.pk, Outcome("done", "**Blue**", 120, 620, 2))
    battles.cast_vote(voted, "a_better")
    [row] = exported(made)
    voted.refresh_from_db()
    assert row["question_id"] == voted.question_id and row["winner"] == "model_a"
    assert row["model_a"] == voted.system_a.name and row["language"] == "en"
    assert row["judge"].startswith("arena_user_") and f"user:{owner.pk}" not in row["judge"]
    assert row["judge"] != voted.voter_ref and len(row["judge"]) == len("arena_user_") + 16
    assert row["conv_metadata"]["bold_count_a"] == {"**": 1, "__": 0}
    assert row["conv_metadata"]["sum_assistant_b_tokens"] == 2
    own = row["evalhub"]
    assert (own["source"], own["vote"], own["voter_platform"]) == ("live", "a_better", "site")
    assert own["pairing"]["rule"] == "uniform" and own["code_blocks_a"] == 0
    timing = {(a["turn"], a["side"]): a for a in own["answers"]}
    assert (
        timing[(1, "a")]["first_token_ms"] == 120 and timing[(1, "a")]["tokens_per_second"] == 4.0
    )
    assert Battle.objects.count() == 2
