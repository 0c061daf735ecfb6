"""A battle's flags (arenas/flags.py): the owner's review (confirm keeps, clear takes off for
good), the leaderboard leaving flagged battles out by default, and every code documented."""

import re
from pathlib import Path

import pytest

from arenas import flags, leaderboard
from arenas.models import Arena, Battle, Leaderboard
from evalhub.errors import UserInputError
from tests import factories
from tests.arenas.builders import arena

pytestmark = pytest.mark.django_db
DOCS = Path(__file__).resolve().parents[2] / "docs" / "arena.md"


@pytest.fixture(autouse=True)
def _few_rounds(settings):
    settings.EVALHUB_ARENA_BOOTSTRAP_ROUNDS = 20


@pytest.fixture
def setup():
    owner = factories.user()
    one = factories.system(owner, slug="one")
    two = factories.system(owner, slug="two")
    return owner, arena(owner), one, two


def voted(made, one, two, vote, n, **fields):
    from django.utils import timezone

    return [
        Battle.objects.create(
            arena=made,
            system_a=one,
            system_b=two,
            voter_platform="site",
            question_id=f"{vote}-{n}-{i}",
            vote=vote,
            voted_at=timezone.now(),
            **fields,
        )
        for i in range(n)
    ]


def test_a_fast_vote_is_left_out_by_default_and_counted_with_the_switch(setup):
    owner, made, one, two = setup
    voted(made, one, two, "a_better", 2)
    voted(made, one, two, "b_better", 3, flags=[flags.FAST_VOTE])
    result = leaderboard.compute(made)
    assert (result["battles"], result["flagged_left_out"]) == (2, 3)
    Arena.objects.filter(pk=made.pk).update(exclude_flagged=False)
    made.refresh_from_db()
    result = leaderboard.compute(made)
    assert (result["battles"], result["flagged_left_out"]) == (5, 0)


def test_clearing_a_flag_counts_the_battle_again_and_asks_for_the_leaderboard(
    setup, django_capture_on_commit_callbacks
):
    owner, made, one, two = setup
    [battle] = voted(made, one, two, "a_better", 1, flags=[flags.REPEATED_PROMPT])
    with django_capture_on_commit_callbacks(execute=True):
        flags.review(battle, flags.REPEATED_PROMPT, flags.CLEARED, owner)
    battle.refresh_from_db()
    assert battle.flags == []
    assert battle.flag_reviews[flags.REPEATED_PROMPT]["decision"] == "cleared"
    assert battle.flag_reviews[flags.REPEATED_PROMPT]["by"] == owner.username
    # The eager task ran after the review's commit: the stored leaderboard counts it.
    assert Leaderboard.objects.get(arena=made).battles == 1


def test_a_cleared_flag_is_not_raised_on_that_battle_again(setup):
    owner, made, one, two = setup
    [battle] = voted(made, one, two, "a_better", 1, flags=[flags.NAME_IN_ANSWER])
    flags.review(battle, flags.NAME_IN_ANSWER, flags.CLEARED, owner)
    battle.refresh_from_db()
    assert flags.raise_flag(battle, flags.NAME_IN_ANSWER, "again") is False
    assert Battle.objects.get(pk=battle.pk).flags == []


def test_confirming_keeps_the_flag_and_records_who(setup):
    owner, made, one, two = setup
    [battle] = voted(made, one, two, "a_better", 1, flags=[flags.FAST_VOTE])
    flags.review(battle, flags.FAST_VOTE, flags.CONFIRMED, owner)
    battle.refresh_from_db()
    assert battle.flags == [flags.FAST_VOTE]
    assert battle.flag_reviews[flags.FAST_VOTE]["decision"] == "confirmed"
    assert leaderboard.compute(made)["battles"] == 0


@pytest.mark.parametrize(
    ("code", "decision", "message"),
    [
        ("fast_vote", "forgiven", "Confirm the flag or clear it."),
        ("repeated_prompt", "cleared", "This battle does not have that flag (any more)."),
    ],
)
def test_a_review_of_no_flag_or_no_decision_is_refused_and_changes_nothing(
    setup, code, decision, message
):
    owner, made, one, two = setup
    [battle] = voted(made, one, two, "a_better", 1, flags=[flags.FAST_VOTE])
    with pytest.raises(UserInputError, match=re.escape(message)):
        flags.review(battle, code, decision, owner)
    battle.refresh_from_db()
    assert (battle.flags, battle.flag_reviews) == ([flags.FAST_VOTE], {})


def test_every_flag_code_is_in_the_moderation_section_of_the_docs():
    text = DOCS.read_text()
    section = text.split("## Moderation", 1)[1].split("\n## ", 1)[0]
    assert [code for code in flags.CODES if f"`{code}`" not in section] == []
