"""Arenas and their entries: who may be entered, the block list, the database's checks."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from arenas import entries
from arenas.models import Arena, ArenaSystem, Battle, entry_problem
from evalhub.errors import UserInputError
from evalhub.models import System
from tests import factories
from tests.arenas.builders import arena, bot_system

pytestmark = pytest.mark.django_db


def test_an_owner_enters_their_own_private_system():
    owner = factories.user()
    system = bot_system(owner, visibility=System.Visibility.PRIVATE)
    made = arena(owner)
    entry = entries.enter(made, system, weight=2.5)
    assert (entry.endpoint, entry.weight) == (system.endpoint, 2.5)
    assert ArenaSystem.objects.get(arena=made).system == system


def test_somebody_elses_public_system_needs_its_owners_consent():
    owner, other = factories.user(), factories.user()
    closed = bot_system(other, shared=False)
    open_ = bot_system(other, shared=True)
    made = arena(owner)
    with pytest.raises(UserInputError, match="does not let other owners"):
        entries.enter(made, closed)
    entries.enter(made, open_)
    assert list(made.entries.values_list("system__slug", flat=True)) == [open_.slug]


def test_somebody_elses_private_system_is_never_entered_even_when_shared():
    owner, other = factories.user(), factories.user()
    hidden = bot_system(other, shared=True, visibility=System.Visibility.PRIVATE)
    with pytest.raises(UserInputError, match="private and not yours"):
        entries.enter(arena(owner), hidden)
    assert not ArenaSystem.objects.exists()


def test_a_system_without_an_endpoint_cannot_be_entered_for_live_battles():
    owner = factories.user()
    with pytest.raises(UserInputError, match="no bot endpoint"):
        entries.enter(arena(owner), factories.system(owner))
    assert not ArenaSystem.objects.exists()


def test_a_system_is_entered_once():
    owner = factories.user()
    system = bot_system(owner)
    made = arena(owner, systems=[system])
    with pytest.raises(UserInputError, match="already in"):
        entries.enter(made, system)
    assert made.entries.count() == 1


def test_the_entry_rule_allows_an_imported_public_system_without_endpoint():
    owner = factories.user()
    public = factories.system(factories.user())
    assert entry_problem(arena(owner), public, None) is None


@pytest.mark.parametrize("weight", [-0.5, 100.5])
def test_a_weight_out_of_range_is_refused_by_the_service_and_the_database(weight):
    owner = factories.user()
    entry = arena(owner, systems=[bot_system(owner)]).entries.get()
    with pytest.raises(UserInputError):
        entries.set_weight(entry, weight)
    with pytest.raises(IntegrityError), transaction.atomic():
        ArenaSystem.objects.filter(pk=entry.pk).update(weight=weight)
    entry.refresh_from_db()
    assert entry.weight == 1.0


def test_turns_allowed_has_a_range_in_the_database():
    made = arena(factories.user())
    with pytest.raises(IntegrityError), transaction.atomic():
        Arena.objects.filter(pk=made.pk).update(max_turns=0)
    with pytest.raises(ValidationError):
        Arena(slug="x", name="x", max_turns=21).full_clean()


def test_the_block_list_matches_phrases_whatever_their_case():
    made = arena(factories.user(), block_list=["Forbidden Topic", "bomb"])
    assert made.blocked_phrase("Tell me about the forbidden topic") == "Forbidden Topic"
    assert made.blocked_phrase("How is a BOMB made?") == "bomb"
    assert made.blocked_phrase("Tell me a story") is None


def test_the_block_list_is_validated():
    with pytest.raises(ValidationError):
        Arena(slug="x", name="x", block_list=["ok", ""]).full_clean()
    with pytest.raises(ValidationError):
        Arena(slug="x", name="x", block_list=["x" * 201]).full_clean()


def test_a_battle_has_two_different_systems_and_a_vote_has_its_time():
    owner = factories.user()
    one, two = bot_system(owner), bot_system(owner)
    made = arena(owner, systems=[one, two])
    fields = {"arena": made, "voter_platform": "site", "question_id": "q"}
    with pytest.raises(IntegrityError), transaction.atomic():
        Battle.objects.create(system_a=one, system_b=one, **fields)
    with pytest.raises(IntegrityError), transaction.atomic():
        Battle.objects.create(system_a=one, system_b=two, vote="tie", **fields)
    assert not Battle.objects.exists()


def test_a_question_id_is_unique_in_its_arena_only():
    owner = factories.user()
    one, two = bot_system(owner), bot_system(owner)
    first, second = arena(owner, systems=[one, two]), arena(owner)
    for where in (first, second):
        Battle.objects.create(
            arena=where, system_a=one, system_b=two, voter_platform="site", question_id="q1"
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        Battle.objects.create(
            arena=first, system_a=two, system_b=one, voter_platform="site", question_id="q1"
        )
    assert Battle.objects.count() == 2


def test_visibility_follows_the_one_vocabulary():
    owner, other, staff = factories.user(), factories.user(), factories.user(staff=True)
    private = arena(owner, visibility=Arena.Visibility.PRIVATE)
    public = arena(owner)
    assert set(Arena.objects.visible_to(other)) == {public}
    assert set(Arena.objects.visible_to(owner)) == {public, private}
    assert set(Arena.objects.visible_to(staff)) == {public, private}
    assert private.is_managed_by(owner) and not private.is_managed_by(other)
