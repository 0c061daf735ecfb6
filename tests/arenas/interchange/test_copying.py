"""The PostgreSQL import (COPY into a temporary table, then INSERT ... SELECT) stores what
the ORM's import stores, in a number of statements that does not grow with the file, and
nothing at all for a refused file."""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from arenas.interchange import copying
from arenas.interchange.writing import import_battles
from arenas.models import Battle, BattleAnswer, BattleTurn
from evalhub.importers.problems import InvalidUpload
from tests import factories
from tests.arenas.builders import arena
from tests.arenas.clean_battles import conversation, line, stream

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def metadata(tokens_a, tokens_b):
    return {
        "conv_metadata": {
            "sum_assistant_a_tokens": tokens_a,
            "sum_assistant_b_tokens": tokens_b,
            "header_count_a": {"h1": 1, "h2": 0, "h3": 0, "h4": 0, "h5": 0, "h6": 0},
            "list_count_b": {"ordered": 2, "unordered": 0},
            "sum_user_tokens": 9,
        }
    }


ROWS = [
    line(
        "q1",
        winner="model_a",
        turn=2,
        **conversation(("Hi", "# Hello", "Hey"), ("More?", "- a", "b")),
    ),
    line("q2", "Llama-3.1-8B", "gpt-4-0613", winner="tie (bothbad)", tstamp=None),
    line("q3", winner="tie", is_code=True, category_tag={"math": False}, **metadata(12, 30)),
    line(question_id=None, winner="model_b", language="Deutsch", anony=False),
]


def stored(made) -> list:
    """Everything stored of an arena's battles but the keys and the import's time."""
    result = []
    for battle in Battle.objects.filter(arena=made).order_by("pk"):
        turns = [
            (
                turn.number,
                turn.prompt,
                sorted(
                    BattleAnswer.objects.filter(turn=turn).values_list("side", "status", "text")
                ),
            )
            for turn in BattleTurn.objects.filter(battle=battle).order_by("number")
        ]
        imported_at = battle.started_at if battle.question_id != "q2" else None
        result.append(
            (
                battle.question_id,
                battle.system_a.slug,
                battle.system_b.slug,
                battle.source,
                battle.voter_platform,
                battle.voter_ref,
                battle.vote,
                imported_at,
                battle.language,
                battle.anonymous,
                battle.turns,
                battle.tokens_a,
                battle.tokens_b,
                json.dumps([battle.style_a, battle.style_b, battle.extra], sort_keys=True),
                battle.flags,
                battle.pairing,
                turns,
            )
        )
    return result


def test_copy_stores_what_the_orm_stores(monkeypatch):
    owner = factories.user()
    by_copy, by_orm = arena(owner), arena(owner)
    result = import_battles(by_copy, stream(*ROWS), create=True)
    monkeypatch.setattr(copying, "available", lambda: False)
    assert import_battles(by_orm, stream(*ROWS), create=True).created == 4
    assert (result.created, result.unchanged) == (4, 0)
    assert stored(by_copy) == stored(by_orm)
    assert len(stored(by_copy)) == 4
    # File order is id order, public ids are distinct.
    ids = list(Battle.objects.filter(arena=by_copy).order_by("pk").values_list("question_id"))
    assert [i[0] for i in ids][:3] == ["q1", "q2", "q3"]
    assert Battle.objects.values("public_id").distinct().count() == 8


def test_copy_import_again_stores_only_the_new_battles():
    made = arena(factories.user())
    import_battles(made, stream(*ROWS[:2]), create=True)
    again = import_battles(made, stream(*ROWS), create=True)
    assert (again.created, again.unchanged) == (2, 2)
    assert Battle.objects.filter(arena=made).count() == 4
    # The conversations of the battles already there were not stored twice.
    assert BattleTurn.objects.filter(battle__question_id="q1").count() == 2
    assert BattleAnswer.objects.filter(turn__battle__question_id="q1").count() == 4


def test_copy_import_statements_do_not_grow_with_the_file():
    owner = factories.user()
    import_battles(arena(owner), stream(line("first")), create=True)  # the systems exist
    counts = []
    for size in (5, 300):
        made = arena(factories.user())
        rows = [line(f"{size}-{n}", winner="model_b") for n in range(size)]
        with CaptureQueriesContext(connection) as queries:
            assert import_battles(made, stream(*rows), create=True).created == size
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_a_refused_file_leaves_no_staging_table_and_stores_nothing():
    made = arena(factories.user())
    with pytest.raises(InvalidUpload) as refused:
        import_battles(made, stream(line("q1"), line("q2", winner="draw")), create=True)
    assert [p.line for p in refused.value.problems] == [2]
    assert not Battle.objects.exists()
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s)", [copying.STAGING])
        assert cursor.fetchone() == (None,)
    # The same connection imports again at once.
    assert import_battles(made, stream(line("q1")), create=True).created == 1
