"""What a judge run over an arena judges: its voted battles, each as both sides' conversations.

Which battles. Every voted battle of the arena (an unvoted one has no human verdict to
compare with and may still change). One that cannot be judged is not sent: a battle
imported without its conversations, or one where a side has no answer to a turn, is
recorded as skipped with the reason (`Unjudgeable`), so the run page says why it was left
out and a resumed run does not ask again.

Position. LLM judges favour a place (Zheng et al. 2023, MT-Bench, section 3.3). As the A/B
kind does for its items, the side shown first is drawn at random, here per battle and run
from a seed of both ids (the same order if the run is resumed, another for another run), and
kept in the payload (`first`), so position bias can be measured from the stored judgments.

Payload. {"choice": "a" | "b" | "tie" | "both_bad", "first": "a" | "b"}: the voter's four
choices in the battle's own sides, whatever place each side was shown in.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from django.db.models import Prefetch

from annotation.kinds.base import PayloadInvalid, choice_field, parse_answers
from arenas.models import Arena, Battle, BattleAnswer, BattleTurn

from .answering import Question
from .rubrics import ARENA_KIND

SIDES = ("a", "b")


class Unjudgeable(ValueError):
    """A battle with nothing a judge can compare; the message says why."""


@dataclass(frozen=True)
class ShownBattle:
    """A battle as the judge is shown it: which side comes first."""

    battle_id: int
    first: str

    @property
    def second(self) -> str:
        return "b" if self.first == "a" else "a"


class BattleKind:
    """Plays the task kind for judging/rubrics/common.py: the arena rubric's form values
    (first / second / tie / both_bad) become a payload in the battle's sides."""

    key = ARENA_KIND

    def parse_payload(self, shown: ShownBattle, config: dict, data) -> dict:
        places = {"first": "first", "second": "second", "tie": "tie", "both_bad": "both_bad"}
        place = parse_answers(data, {"choice": choice_field(places, "which model is better")})[
            "choice"
        ]
        if shown.first not in SIDES:
            raise PayloadInvalid({"": "This battle was not shown to the judge."})
        choice = {"first": shown.first, "second": shown.second}.get(place, place)
        return {"choice": choice, "first": shown.first}


KIND = BattleKind()


def judgeable_battles(arena: Arena):
    """The arena's voted battles, in the order they were held; gold battles (a paid crowd's
    checks, with fixed answers) are the owner's, not the systems', and never judged."""
    battles = Battle.objects.filter(arena=arena).exclude(vote="")
    return battles.exclude(source=Battle.Source.GOLD).order_by("started_at", "pk")


def pending_battles(run):
    return judgeable_battles(run.arena).exclude(automatic_judgments__run=run)


def with_conversations(battles):
    """The battles with their turns and answers, in two more queries per batch."""
    return battles.prefetch_related(
        Prefetch(
            "battle_turns",
            queryset=BattleTurn.objects.order_by("number").prefetch_related(
                Prefetch("answers", queryset=BattleAnswer.objects.order_by("side"))
            ),
        )
    )


def conversations(battle: Battle) -> dict[str, list[dict]]:
    """Per side, the turns as [{"prompt", "answer"}]; Unjudgeable when a side is missing."""
    turns = list(battle.battle_turns.all())
    if not turns:
        raise Unjudgeable(
            "The battle has no conversation text (imported without it): nothing to judge."
        )
    sides: dict[str, list[dict]] = {side: [] for side in SIDES}
    for turn in turns:
        answers = {answer.side: answer for answer in turn.answers.all()}
        for side in SIDES:
            answer = answers.get(side)
            if answer is None or not answer.text.strip():
                raise Unjudgeable(
                    f"Model {side.upper()} has no answer to turn {turn.number}: "
                    "the conversations are incomplete."
                )
            sides[side].append({"prompt": turn.prompt, "answer": answer.text})
    return sides


def first_side(run_id: int, battle_id: int) -> str:
    return random.Random(f"judge-run:{run_id}:battle:{battle_id}").choice(SIDES)


def question(run, battle: Battle) -> Question:
    """What the judge is asked about one battle (Unjudgeable when it cannot be)."""
    sides = conversations(battle)
    shown = ShownBattle(battle.pk, first_side(run.pk, battle.pk))
    task = {"first": sides[shown.first], "second": sides[shown.second]}
    return Question(KIND, shown, {}, task, run.rubric.instructions)
