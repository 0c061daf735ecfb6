"""What the result pages of campaigns and imported studies show, from stored runs only.

Like ``analysis.pages.leaderboards`` for tournaments: nothing is computed here; the latest
successful run of a campaign (abc_eval, likert, comparative) or of a study is reshaped into
rows a template can loop over. Who may see them: staff and the campaign's or study's owner
(campaigns and studies have no published state; others get 404).
"""

from __future__ import annotations

from django.db.models import Q
from django.urls import reverse

from analysis.models import AnalysisRun
from analysis.pages.plots import (
    DIMENSIONAL_PLOT_TITLES,
    agreement_rows,
    available_dimensional_plots,
)
from annotation.models import Campaign, Study
from evalhub.permissions import is_managed_by, is_staff, may_see

__all__ = [
    "dimensional_context",
    "latest_run",
    "may_see_run",
    "result_links",
    "run_plot_url",
]

# The kinds of campaign that have a result page of their own.
# A chat campaign's results are its closing Likert ratings.
# A ranking campaign's page shows its Plackett-Luce ratings.
RESULT_KINDS = ("abc_eval", "likert", "comparative", "chat", "ranking", "conversation_ranking")


def latest_run(subject: Campaign | Study, *, succeeded: bool = True) -> AnalysisRun | None:
    """The subject's own latest run (a campaign's, not its tournament's)."""
    runs = subject.analysis_runs.defer("plots")
    if isinstance(subject, Campaign):
        # Its own human analysis: not its tournament's, not a judge run's comparison.
        runs = runs.filter(tournament__isnull=True, judge_run__isnull=True)
    if succeeded:
        return runs.latest_succeeded()
    return runs.defer("result").order_by("-created", "-pk").first()


def may_see_run(user, run: AnalysisRun) -> bool:
    if run.tournament_id:
        return may_see(user, run.tournament)
    if run.campaign_id is None and run.judge_run_id:  # an arena's comparison: its managers
        return is_managed_by(user, run.judge_run.arena)
    return is_managed_by(user, run.campaign if run.campaign_id else run.study)


def run_plot_url(run: AnalysisRun, name: str) -> str:
    return reverse("results:plot", args=[run.pk, name])


def result_links(user) -> tuple[list[Study], list[Campaign]]:
    """The studies and the live campaigns (abc_eval, likert, comparative, not part of a
    study) whose results the user may see, in one query (none for anonymous visitors)."""
    if user is None or not user.is_authenticated:
        return [], []
    campaigns = Campaign.objects.filter(task_kind__in=RESULT_KINDS).select_related("study")
    if not is_staff(user):
        campaigns = campaigns.filter(
            Q(study__isnull=True, owner=user) | Q(study__isnull=False, study__owner=user)
        )
    rows = list(campaigns.order_by("-created", "-pk"))
    studies = {c.study_id: c.study for c in rows if c.study_id is not None}
    return (
        sorted(studies.values(), key=lambda study: study.name),
        [c for c in rows if c.study_id is None],
    )


def _sensitivity(rows: list[dict]) -> dict:
    """Table 5: one row per metric, a count per significance level."""
    alphas = sorted({row["alpha"] for row in rows})
    by_metric: dict[str, dict[float, dict]] = {}
    for row in rows:
        by_metric.setdefault(row["metric"], {})[row["alpha"]] = row
    return {
        "alphas": alphas,
        "rows": [
            {
                "metric": metric,
                "pairs": max(r["pairs"] for r in counts.values()),
                "counts": [counts[a]["significant"] if a in counts else None for a in alphas],
            }
            for metric, counts in sorted(by_metric.items())
        ],
    }


def _downsampled(section: dict) -> dict | None:
    """Table 5 after downsampling: per metric, the mean count and its 95% range per level."""
    downsampled = section.get("sensitivity_downsampled")
    if not downsampled:
        return None
    rows = downsampled["rows"]
    alphas = sorted({row["alpha"] for row in rows})
    by_metric: dict[str, dict[float, dict]] = {}
    for row in rows:
        by_metric.setdefault(row["metric"], {})[row["alpha"]] = row
    return {
        **{key: value for key, value in downsampled.items() if key != "rows"},
        "alphas": alphas,
        "rows": [
            {
                "metric": metric,
                "pairs": max(r["pairs"] for r in counts.values()),
                "counts": [counts.get(a) for a in alphas],
            }
            for metric, counts in sorted(by_metric.items())
        ],
    }


def dimensional_context(run: AnalysisRun | None) -> dict:
    """The sections of a campaign's or study's run, reshaped for ``_dimensional_results``."""
    if run is None:
        return {"run": None}
    result = run.result
    sections = {}
    for name in ("behaviours", "likert", "comparative"):
        section = result.get(name)
        if section:
            sections[name] = {
                **section,
                "table5": _sensitivity(section.get("sensitivity", [])),
                "table5_downsampled": _downsampled(section),
            }
    plots = [
        {"name": name, "title": DIMENSIONAL_PLOT_TITLES[name], "url": run_plot_url(run, name)}
        for name in available_dimensional_plots(result)
    ]
    return {
        "run": run,
        "result": result,
        "sections": sections,
        "behaviours": sections.get("behaviours"),
        "likert": sections.get("likert"),
        "comparative": sections.get("comparative"),
        "validity": result.get("validity"),
        "plackett_luce": result.get("plackett_luce"),
        "agreement": agreement_rows(result),
        "plots": plots,
    }
