"""analysis/inputs/arena_versus.py: an arena run's verdicts beside the votes, both mapped to
a / b / tie the same way (both-bad is a tie), on the battles the judge answered and the
leaderboard counts."""

import pytest

from analysis.inputs.arena_versus import OUTCOME, arena_run_inputs
from judging.models import AutomaticJudgment
from tests import factories
from tests.judging import arena_builders as ab

pytestmark = pytest.mark.django_db


def verdict(run, battle, choice, status="ok"):
    payload = {"choice": choice, "first": "a"} if status == "ok" else {}
    AutomaticJudgment.objects.create(run=run, battle=battle, status=status, payload=payload)


@pytest.fixture
def world():
    owner = factories.user()
    arena = ab.arena(owner)
    x, y, z = ab.systems_of(arena)
    run = ab.arena_run(None, arena)
    return arena, run, (x, y, z)


def test_votes_and_verdicts_are_mapped_alike(world):
    arena, run, (x, y, z) = world
    pairs = [("a_better", "a"), ("b_better", "both_bad"), ("tie", "b"), ("both_bad", "tie")]
    made = []
    for vote, choice in pairs:
        battle = ab.battle(arena, x, y, vote, turns=1)
        verdict(run, battle, choice)
        made.append(battle)
    data = arena_run_inputs(run, "the judge")
    units = [str(b.pk) for b in made]
    assert [label for _, _, _, label in data.human_labels] == ["a", "b", "tie", "tie"]
    assert [label for _, _, label in data.judge_labels] == ["a", "tie", "b", "tie"]
    assert [u for _, u, _ in data.judge_labels] == units
    assert data.battles == tuple((u, x.slug, y.slug) for u in units)
    # Win-rate scores: 1 / 0 for the sides of a decided battle, 0.5 each for a tie.
    assert data.human_scores[:4] == (
        ("choice", x.slug, units[0], 1.0),
        ("choice", y.slug, units[0], 0.0),
        ("choice", x.slug, units[1], 0.0),
        ("choice", y.slug, units[1], 1.0),
    )
    assert data.judge_scores[2:4] == (
        ("choice", x.slug, units[1], 0.5),
        ("choice", y.slug, units[1], 0.5),
    )
    assert (data.task_kind, data.level, data.subject) == ("arena", "nominal", arena.slug)
    assert set(OUTCOME) == {"a_better", "b_better", "tie", "both_bad"}


def test_skipped_failed_and_unanswered_battles_are_left_out(world):
    arena, run, (x, y, z) = world
    judged = ab.battle(arena, x, y, turns=1)
    verdict(run, judged, "a")
    verdict(run, ab.battle(arena, x, z, turns=0), "", status="skipped")
    verdict(run, ab.battle(arena, y, z, turns=1), "", status="failed")
    ab.battle(arena, y, z, turns=1)  # not judged yet
    data = arena_run_inputs(run, "the judge")
    assert [u for _, u, _, _ in data.human_labels] == [str(judged.pk)]
    assert (data.human_judgments, data.automatic_judgments) == (1, 1)


@pytest.mark.parametrize("exclude_flagged", [True, False])
def test_flagged_battles_follow_the_arenas_leaderboard_switch(world, exclude_flagged):
    arena, run, (x, y, _) = world
    arena.exclude_flagged = exclude_flagged
    arena.save()
    flagged = ab.battle(arena, x, y, turns=1)
    flagged.flags = ["name_in_answer"]
    flagged.save()
    verdict(run, flagged, "a")
    verdict(run, ab.battle(arena, x, y, turns=1), "b")
    data = arena_run_inputs(run, "the judge")
    assert len(data.judge_labels) == (1 if exclude_flagged else 2)
