"""Importing clean battles into an arena: all or nothing, idempotent, systems matched or
created, conversations kept, the leaderboard asked for."""

import pytest

from arenas.interchange.writing import import_battles
from arenas.models import Arena, ArenaSystem, Battle, BattleAnswer, BattleTurn
from evalhub.importers.problems import InvalidUpload
from evalhub.models import System
from tests import factories
from tests.arenas.builders import arena
from tests.arenas.clean_battles import conversation, line, stream

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return factories.user()


def test_battles_are_stored_with_new_systems_entered(owner):
    made = arena(owner)
    rows = [
        line("q1", winner="model_a", **conversation(("Hi", "# Hello", "Hey"))),
        line("q2", "Llama-3.1-8B", "gpt-4-0613", winner="tie (bothbad)", tstamp=None),
    ]
    result = import_battles(made, stream(*rows), create=True)
    assert (result.created, result.unchanged) == (2, 0)
    assert sorted(result.systems_created) == ["gpt-4-0613", "llama-3-1-8b", "vicuna-13b"]
    llama = System.objects.get(slug="llama-3-1-8b")
    assert (llama.name, llama.owner, llama.visibility) == ("Llama-3.1-8B", owner, "public")
    assert set(
        ArenaSystem.objects.filter(arena=made, endpoint__isnull=True).values_list(
            "system__slug", flat=True
        )
    ) == set(result.systems_created)
    first = Battle.objects.get(question_id="q1")
    assert (first.source, first.vote, first.voter_platform, first.voter_ref) == (
        "imported",
        "a_better",
        "imported",
        "arena_user_1",
    )
    assert first.started_at.timestamp() == 1682351591.5 and first.voted_at == first.started_at
    assert (first.system_a.slug, first.system_b.slug, first.turns) == (
        "gpt-4-0613",
        "vicuna-13b",
        1,
    )
    # No conv_metadata: the style and tokens are counted from the conversations.
    assert first.style_a["header_count"]["h1"] == 1 and first.tokens_a == 2
    turn = BattleTurn.objects.get(battle=first)
    assert turn.prompt == "Hi"
    assert dict(BattleAnswer.objects.filter(turn=turn).values_list("side", "text")) == {
        "a": "# Hello",
        "b": "Hey",
    }
    assert Battle.objects.get(question_id="q2").vote == "both_bad"


def test_importing_again_stores_nothing_new(owner):
    made = arena(owner)
    data = [line("q1"), line("q2", winner="model_b"), line(question_id=None, winner="tie")]
    import_battles(made, stream(*data), create=True)
    again = import_battles(made, stream(*data, line("q3")), create=True)
    assert (again.created, again.unchanged, again.systems_created) == (1, 3, [])
    assert Battle.objects.count() == 4


def test_a_bad_line_stores_nothing_at_all(owner):
    made = arena(owner)
    rows = [line("q1"), line("q2", winner="draw"), line("q1")]
    with pytest.raises(InvalidUpload) as refused:
        import_battles(made, stream(*rows), create=True)
    assert [p.line for p in refused.value.problems] == [2, 3]
    assert not Battle.objects.exists() and not System.objects.exists()
    assert not ArenaSystem.objects.exists()


def test_unknown_models_are_refused_by_line_without_create(owner):
    made = arena(owner)
    factories.system(owner, slug="gpt-4-0613")
    rows = [line("q1"), line("q2", "gpt-4-0613", "claude-2")]
    with pytest.raises(InvalidUpload) as refused:
        import_battles(made, stream(*rows))
    found = [(p.line, p.message) for p in refused.value.problems]
    assert found == [
        (
            1,
            "no system 'vicuna-13b' for model 'vicuna-13b': create it (import with --create, "
            "or create=true) or register it first.",
        ),
        (
            2,
            "no system 'claude-2' for model 'claude-2': create it (import with --create, "
            "or create=true) or register it first.",
        ),
    ]
    assert not Battle.objects.exists()


def test_existing_systems_are_matched_by_entry_name_then_slug(owner):
    mine = factories.system(owner, slug="my-model", name="My Model")
    public = factories.system(factories.user(), slug="vicuna-13b", name="Vicuna 13B")
    made = arena(owner)
    ArenaSystem.objects.create(arena=made, system=mine)
    result = import_battles(made, stream(line("q1", "My Model", "vicuna-13b")))
    battle = Battle.objects.get()
    assert (battle.system_a, battle.system_b) == (mine, public)
    assert result.systems_entered == ["vicuna-13b"]


def test_somebody_elses_private_system_is_not_named(owner):
    factories.system(factories.user(), slug="secret-model", visibility=System.Visibility.PRIVATE)
    made = arena(owner)
    with pytest.raises(InvalidUpload, match="private and not yours"):
        import_battles(made, stream(line("q1", "secret-model", "other")), create=True)
    assert not Battle.objects.exists()


def test_two_names_of_one_slug_are_refused(owner):
    with pytest.raises(InvalidUpload, match="would both be the system 'gpt-3-5'"):
        import_battles(arena(owner), stream(line("q1", "gpt-3.5", "gpt-3-5")), create=True)


@pytest.mark.django_db(transaction=True)
def test_an_import_asks_for_the_leaderboard(owner, settings):
    settings.EVALHUB_ARENA_BOOTSTRAP_ROUNDS = 10
    made = arena(owner)
    import_battles(made, stream(line("q1"), line("q2", winner="model_b"), line("q3")), create=True)
    board = Arena.objects.get(pk=made.pk).leaderboard
    assert board.battles == 3
    assert [s["system"] for s in board.result["systems"]] == ["gpt-4-0613", "vicuna-13b"]
