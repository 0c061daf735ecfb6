"""From an arena's judge run to ``HumanVsAutomaticData``: the judge's verdicts beside the votes.

The units are the battles the arena's leaderboard counts (``arenas.leaderboard.
counted_battles``: voted, and not flagged while the arena leaves flagged battles out); each
has one human label, its vote, and at most one judge label, the run's verdict. Both are
mapped to the three outcomes the leaderboard's Bradley-Terry fit knows, the same way on
both sides (``OUTCOME``):

==============  ================  =======
vote            judge's answer    label
==============  ================  =======
``a_better``    ``a``             ``a``
``b_better``    ``b``             ``b``
``tie``         ``tie``           ``tie``
``both_bad``    ``both_bad``      ``tie``
==============  ================  =======

"Both are bad" is a tie, as Chatbot Arena's ``tie (bothbad)`` is in its ratings, so kappa,
the raw agreement, the win rates and the ratings all read a vote and a verdict alike.
Scores (for the win rates): 1 to the winning side's system in its battle, 0 to the other,
0.5 each for a tie, as the A/B kind's comparison scores a choice. Only the battles the judge
answered are read (one ``values_list`` query, no conversation text): those it skipped (no
conversation text) or failed on have nothing to compare, and an arena of a million imported
battles costs no more than the battles judged.
"""

from __future__ import annotations

from analysis.reports import HumanVsAutomaticData
from arenas.leaderboard import counted_battles
from judging.models import AutomaticJudgment, JudgeRun

__all__ = ["OUTCOME", "arena_run_inputs"]

DIMENSION = "choice"
OUTCOME = {"a_better": "a", "b_better": "b", "tie": "tie", "both_bad": "tie"}
JUDGE_OUTCOME = {"a": "a", "b": "b", "tie": "tie", "both_bad": "tie"}
_SCORE = {"a": (1.0, 0.0), "b": (0.0, 1.0), "tie": (0.5, 0.5)}


def _scores(unit: str, system_a: str, system_b: str, label: str) -> list[tuple]:
    a, b = _SCORE[label]
    return [(DIMENSION, system_a, unit, a), (DIMENSION, system_b, unit, b)]


def arena_run_inputs(run: JudgeRun, label: str) -> HumanVsAutomaticData:
    """The votes and the verdicts of ``run`` (an arena run) on the battles it judged, as
    comparable labels and scores; ``label`` names the judge run on the page."""
    rows = (
        AutomaticJudgment.objects.filter(
            run=run,
            status=AutomaticJudgment.Status.OK,
            battle__in=counted_battles(run.arena),
        )
        .order_by("battle_id")
        .values_list(
            "battle_id",
            "battle__voter_id",
            "battle__vote",
            "battle__system_a__slug",
            "battle__system_b__slug",
            "payload",
        )
    )
    human_labels, human_scores, judge_labels, judge_scores, pairs = [], [], [], [], []
    for pk, voter, vote, system_a, system_b, payload in rows:
        unit = str(pk)
        vote_label, verdict = OUTCOME[vote], JUDGE_OUTCOME[payload["choice"]]
        human_labels.append((DIMENSION, unit, voter or 0, vote_label))
        human_scores += _scores(unit, system_a, system_b, vote_label)
        judge_labels.append((DIMENSION, unit, verdict))
        judge_scores += _scores(unit, system_a, system_b, verdict)
        pairs.append((unit, system_a, system_b))
    return HumanVsAutomaticData(
        subject=run.arena.slug,
        task_kind="arena",
        level="nominal",
        judge_run=run.pk,
        judge=label,
        human_judgments=len(human_labels),
        automatic_judgments=len(judge_labels),
        human_labels=tuple(human_labels),
        judge_labels=tuple(judge_labels),
        human_scores=tuple(human_scores),
        judge_scores=tuple(judge_scores),
        battles=tuple(pairs),
    )
