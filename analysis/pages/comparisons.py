"""What the human-versus-automatic pages show, from stored runs only.

Like ``analysis.pages.results``: nothing is computed here. A campaign's judge runs
(``judging.models.JudgeRun``) each have their comparison runs (``AnalysisRun.judge_run``);
the latest successful one is reshaped for ``templates/analysis/_versus_results.html`` (the
campaign's page) and ``_versus_summary.html`` (a tournament's page: the target ranking by
the humans and by the judge, and their correlation, as the bipartite-play paper's Table 3).

Who may see them: whoever manages the campaign, or the tournament it belongs to (its owner
and staff); others get 404. An arena's judge runs are compared with its votes on the
arena's own page (``arena_versus``), for the arena's managers (owner and staff) alone.
"""

from __future__ import annotations

from analysis.inputs.comparable import COMPARABLE_KINDS
from analysis.models import AnalysisRun
from analysis.pages.plots import versus_plot_names
from analysis.pages.results import run_plot_url
from annotation.models import Campaign
from arenas.models import Arena
from evalhub.permissions import is_managed_by
from judging.models import JudgeRun
from tournaments.models import Tournament

__all__ = [
    "arena_judge_runs",
    "campaign_comparisons",
    "comparison_context",
    "judge_runs_of",
    "latest_comparison",
    "may_compare",
    "may_compare_run",
    "tournament_comparison",
]

# What each kind's main dimension measures, for the tables' headings.
MAIN_SCORE = {
    "label": "share of segments where the speaker was not spotted as a bot",
    "choice": "share of comparisons won (ties count a half)",
}
ARENA_MEASURES = "win rate: share of battles won (ties and both-bad count a half)"


def tournament_of(campaign: Campaign) -> Tournament | None:
    return Tournament.objects.filter(campaign=campaign).first()


def may_compare(user, campaign: Campaign) -> bool:
    """Campaign managers, and the managers of the tournament the campaign belongs to."""
    if campaign.task_kind not in COMPARABLE_KINDS:
        return False
    if is_managed_by(user, campaign):
        return True
    tournament = tournament_of(campaign)
    return tournament is not None and is_managed_by(user, tournament)


def may_compare_run(user, judge_run: JudgeRun) -> bool:
    """Who may compare a judge run: its arena's managers, or its campaign's (may_compare)."""
    if judge_run.arena_id:
        return is_managed_by(user, judge_run.arena)
    return may_compare(user, judge_run.campaign)


def arena_judge_runs(arena: Arena) -> list[JudgeRun]:
    return list(
        JudgeRun.objects.filter(arena=arena)
        .select_related("judge", "rubric", "arena")
        .order_by("-created", "-pk")
    )


def judge_runs_of(campaign: Campaign) -> list[JudgeRun]:
    return list(
        JudgeRun.objects.filter(campaign=campaign)
        .select_related("judge", "rubric")
        .order_by("-created", "-pk")
    )


def latest_comparison(judge_run: JudgeRun, *, succeeded: bool = True) -> AnalysisRun | None:
    runs = AnalysisRun.objects.filter(judge_run=judge_run).defer("plots")
    if succeeded:
        return runs.latest_succeeded()
    return runs.defer("result").order_by("-created", "-pk").first()


def _summary(result: dict) -> dict | None:
    """The main dimension: the ranking by humans and by the judge, and their correlation."""
    dimensions = result.get("dimensions") or []
    if not dimensions:
        return None
    main = dimensions[0]
    measures = ARENA_MEASURES if result.get("task_kind") == "arena" else None
    return {**main, "measures": measures or MAIN_SCORE.get(main["dimension"])}


def comparison_context(run: AnalysisRun | None) -> dict:
    """A comparison run's result with its plots' URLs per dimension."""
    if run is None:
        return {"comparison": None}
    result = run.result
    names = {entry["dimension"]: entry for entry in versus_plot_names(result)}
    dimensions = []
    for section in result.get("dimensions") or []:
        plots = names.get(section["dimension"], {})
        dimensions.append(
            {
                **section,
                "scatter_url": run_plot_url(run, plots["scatter"])
                if plots.get("scatter")
                else None,
                "convergence_url": run_plot_url(run, plots["convergence"])
                if plots.get("convergence")
                else None,
            }
        )
    return {
        "comparison": run,
        "versus": result,
        "dimensions": dimensions,
        "summary": _summary(result),
    }


def tournament_comparison(tournament: Tournament) -> dict | None:
    """The latest successful comparison of any judge run on the tournament's campaign."""
    if tournament.campaign_id is None:
        return None
    run = (
        AnalysisRun.objects.filter(judge_run__campaign_id=tournament.campaign_id)
        .select_related("judge_run__judge", "judge_run__rubric")
        .defer("plots")
        .latest_succeeded()
    )
    if run is None:
        return None
    return {**comparison_context(run), "judge_run": run.judge_run}


def campaign_comparisons(campaign: Campaign) -> list[dict]:
    """The latest successful comparison of each judge run on the campaign, newest judge run
    first: its judge run and the headline numbers per dimension (the campaign's results
    page shows them and links to the full page)."""
    latest: dict[int, AnalysisRun] = {}
    runs = (
        AnalysisRun.objects.succeeded()
        .filter(judge_run__campaign=campaign)
        .select_related("judge_run__judge", "judge_run__rubric")
        .defer("plots")
        .order_by("-finished_at", "-pk")
    )
    for run in runs:
        latest.setdefault(run.judge_run_id, run)
    return [
        {"comparison": run, "judge_run": run.judge_run, "dimensions": run.result["dimensions"]}
        for _, run in sorted(latest.items(), key=lambda entry: -entry[0])
    ]
