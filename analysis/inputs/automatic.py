"""From the database to ``HumanVsAutomaticData``: a judge run's automatic judgments beside
its campaign's human judgments, as the comparable labels and scores of
``analysis.inputs.comparable``.

Bounded queries as in ``analysis.inputs.judgments``: one ``values_list`` query for the human
judgments of task items, one for the run's successful automatic judgments (payload, item
id and the parts of the item's content the kind needs, never the conversation text), and
one for a bipartite-play tournament's partners. Failed automatic judgments are left out
(they have no payload), and so are items the platform answered itself (identical A/B
responses, which no person saw).
"""

from __future__ import annotations

from analysis.inputs.arena_versus import arena_run_inputs
from analysis.inputs.comparable import COMPARABLE_KINDS, LEVELS, compare_payload
from analysis.inputs.judgments import judgments_queryset, partners_of
from analysis.reports import HumanVsAutomaticData
from annotation.models import Item
from judging.models import AutomaticJudgment, JudgeRun
from tournaments.models import Tournament

__all__ = ["judge_label", "judge_run_inputs"]

_CONTENT = ("item__content__meta", "item__content__bot_turns")


def judge_label(run: JudgeRun) -> str:
    """How pages and reports name a judge run: judge, rubric version, run id."""
    return f"{run.judge.name} ({run.rubric}, run {run.pk})"


def judge_run_inputs(run: JudgeRun, *, exclude_blocked: bool = False) -> HumanVsAutomaticData:
    """The comparable labels and scores of a judge run and of its campaign's humans (of an
    arena's run: its verdicts and the votes, ``analysis.inputs.arena_versus``, where no
    worker is blocked)."""
    if run.arena_id:
        return arena_run_inputs(run, judge_label(run))
    campaign = run.campaign
    kind = campaign.task_kind
    if kind not in COMPARABLE_KINDS:
        raise ValueError(f"No human-versus-automatic comparison for {kind!r} campaigns.")
    human_labels, human_scores = [], []
    humans = (
        judgments_queryset(campaign, exclude_blocked=exclude_blocked)
        .order_by("pk")
        .values_list("item_id", "worker_id", "payload", *_CONTENT)
    )
    n_human = 0
    for item, worker, payload, meta, bot_turns in humans:
        labels, scores = compare_payload(
            kind, item, payload, {"meta": meta, "bot_turns": bot_turns}
        )
        human_labels += [(d, unit, worker, value) for d, unit, value in labels]
        human_scores += scores
        n_human += 1
    judge_labels, judge_scores = [], []
    automatic = (
        AutomaticJudgment.objects.filter(
            run=run,
            status=AutomaticJudgment.Status.OK,
            item__role=Item.Role.TASK,
            # Identical A/B responses are the platform's own ties, never shown to anyone.
            item__auto_payload__isnull=True,
        )
        .order_by("item_id")
        .values_list("item_id", "payload", *_CONTENT)
    )
    n_automatic = 0
    for item, payload, meta, bot_turns in automatic:
        labels, scores = compare_payload(
            kind, item, payload, {"meta": meta, "bot_turns": bot_turns}
        )
        judge_labels += labels
        judge_scores += scores
        n_automatic += 1
    tournament = Tournament.objects.filter(campaign=campaign).select_related("partner_set").first()
    return HumanVsAutomaticData(
        subject=campaign.slug,
        task_kind=kind,
        level=LEVELS[kind],
        judge_run=run.pk,
        judge=judge_label(run),
        human_judgments=n_human,
        automatic_judgments=n_automatic,
        human_labels=tuple(human_labels),
        judge_labels=tuple(judge_labels),
        human_scores=tuple(human_scores),
        judge_scores=tuple(judge_scores),
        partners=partners_of(tournament),
    )
