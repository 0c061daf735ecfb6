"""What the leaderboard pages, the API and the system profiles show, from stored runs only.

Nothing here computes statistics: pages read the latest successful ``AnalysisRun`` of a
tournament and reshape its result JSON into rows a template can loop over. Who may see a
tournament's results: anybody once it is published; before that its owner and staff
(others get 404, as for a private system).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet
from django.db.models.fields.json import KT
from django.urls import reverse

from analysis.models import AnalysisRun
from analysis.pages.plots import SIGNIFICANCE, available_plots, system_plot_name
from analysis.runs.drawing import plots_pending
from tournaments.models import Tournament

__all__ = [
    "PLOT_TITLES",
    "contract",
    "latest_runs",
    "latest_succeeded_run",
    "plot_url",
    "result_tables",
    "results_context",
    "results_for_system",
]

PLOT_TITLES = {
    "heatmap": "Pairwise win rates (row against column; * significant after correction)",
    "survival": "Survival curves: share of judges not spotting the system by k exchanges",
    "cox": "Cox proportional hazards: feature preferences and survival",
    "stability": "Ranking stability against the number of conversations per pair",
}


def _without_plots(runs: QuerySet) -> QuerySet:
    # Plots are tens of kilobytes per system; pages fetch each one through plot_url.
    return runs.defer("plots")


def latest_succeeded_run(tournament: Tournament) -> AnalysisRun | None:
    return _without_plots(tournament.analysis_runs.all()).latest_succeeded()


def latest_runs(tournament_ids, *, succeeded_only: bool = True) -> dict[int, AnalysisRun]:
    """The latest (successful) run of each tournament, in one query for all of them.

    Only the columns a list needs are loaded: not the result or the plots.
    """
    runs = AnalysisRun.objects.filter(tournament_id__in=list(tournament_ids))
    if succeeded_only:
        runs = runs.succeeded()
    runs = runs.defer("result", "plots").order_by("tournament_id", "-created", "-pk")
    latest: dict[int, AnalysisRun] = {}
    for run in runs:
        latest.setdefault(run.tournament_id, run)
    return latest


def plot_url(run: AnalysisRun, name: str) -> str:
    return reverse("analysis:plot", args=[run.tournament.slug, run.pk, name])


def contract(run: AnalysisRun) -> dict:
    """The result contract of a run, with where it came from under ``"run"``."""
    return {
        **run.result,
        "run": {
            "id": run.pk,
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "parameters": run.parameters,
            "inputs_digest": run.inputs_digest,
            "versions": run.versions,
            # The stability part's state; None: the section came with the report.
            "stability": run.stability_state or None,
        },
    }


def results_context(tournament: Tournament, run: AnalysisRun | None) -> dict:
    """What ``analysis/_results.html`` reads for one run (None: no results yet)."""
    if run is None:
        return {"tournament": tournament, "run": None}
    run.tournament = tournament
    return {
        "tournament": tournament,
        "run": run,
        "result": run.result,
        "tables": result_tables(run.result),
        "plots": set(available_plots(run.result)),
    }


# --- tables for the templates -------------------------------------------------------------------


def _significant(p) -> bool:
    return p is not None and p < SIGNIFICANCE


def result_tables(result: dict) -> dict:
    """The result reshaped into rows (templates cannot index a dict by a variable)."""
    survival = result.get("survival") or {}
    features = result.get("features") or {}
    agreement = result.get("agreement") or {}
    stability = result.get("stability") or {}
    labels, agreement_rows = _agreement_rows(result)
    return {
        "ranking": _ranking_rows(result),
        "pairwise": [
            {**row, "significant": _significant(row["p_adjusted"])}
            for row in result.get("pairwise", [])
        ],
        # Bipartite-play targets never meet each other by design: nothing to point out.
        "never_compared": [] if result.get("partners") else _never_compared(result),
        "scores": [
            {"system": system, **row} for system, row in (result.get("scores") or {}).items()
        ],
        "partners": result.get("partners") or [],
        "segment_lengths": survival.get("segment_lengths") or [],
        "survival": _survival_rows(result),
        "logrank": [
            {**row, "significant": _significant(row["p_adjusted"])}
            for row in survival.get("logrank", [])
        ],
        "logrank_all": survival.get("logrank_all"),
        "logrank_variance": LOGRANK_VARIANCE_NAMES.get(survival.get("logrank_variance", "")),
        "prevalence": prevalence_note(result),
        "feature_names": features.get("names") or [],
        "features": _feature_rows(result),
        "agreement_labels": labels,
        "agreement": agreement_rows,
        "krippendorff": agreement.get("krippendorff"),
        "units_judged_twice": agreement.get("units_judged_twice"),
        "stability": [
            {"n": n, "reproduced": reproduced, "modal": modal}
            for n, reproduced, modal in zip(
                stability.get("n_conversations", []),
                stability.get("share_reproduced", []),
                stability.get("share_modal", []),
                strict=True,
            )
        ],
        "stability_reference": stability.get("reference"),
        "warnings": result.get("warnings", []),
    }


LOGRANK_VARIANCE_NAMES = {
    "permutation": "permutation variance (Fay & Shaw)",
    "hypergeometric": "hypergeometric risk-table variance",
    "zhao-sun": "Zhao & Sun's multiple-imputation variance",
}

# Below this alpha, with one side winning at least DOMINANT of a pair's decisive judgments,
# the page explains that alpha discounts the agreement prevalence alone would produce.
LOW_ALPHA = 0.2
DOMINANT = 0.8
# A pair needs this many decisive judgments for its win rate to count as dominant.
MIN_DECISIVE = 10


def prevalence_note(result: dict) -> dict | None:
    """{"alpha", "share", "a", "b"} when Krippendorff's alpha is low while one side of some
    pair wins most decisive judgments; None otherwise.

    Alpha is 1 - observed / expected disagreement, the expected one from how often each
    value is used overall. When one outcome dominates, chance agreement is already high, so
    alpha sits near zero even though judges agree on most units (Feinstein & Cicchetti 1990,
    "High agreement but low kappa")."""
    alpha = ((result.get("agreement") or {}).get("krippendorff") or {}).get("nominal") or {}
    if alpha.get("alpha") is None or alpha["alpha"] >= LOW_ALPHA:
        return None
    best = None
    for row in result.get("pairwise", []):
        decisive = row["wins_a"] + row["wins_b"]
        if decisive < MIN_DECISIVE:
            continue
        share, winner, loser = max(
            (row["wins_a"] / decisive, row["a"], row["b"]),
            (row["wins_b"] / decisive, row["b"], row["a"]),
        )
        if share >= DOMINANT and (best is None or share > best["share"]):
            best = {"alpha": alpha["alpha"], "share": share, "a": winner, "b": loser}
    return best


def _never_compared(result: dict) -> list[tuple[str, str]]:
    """Pairs of systems no judgment compared, in ranking order, to be shown as such."""
    compared = {frozenset((row["a"], row["b"])) for row in result.get("pairwise", [])}
    systems = result.get("systems", [])
    return [
        (a, b)
        for i, a in enumerate(systems)
        for b in systems[i + 1 :]
        if frozenset((a, b)) not in compared
    ]


def _ranking_rows(result: dict) -> list[dict]:
    bradley_terry = {row["system"]: row for row in result.get("bradley_terry", [])}
    rows = result.get("ranking", [])
    return [
        {
            **row,
            "bradley_terry": bradley_terry.get(row["system"]),
            # A rule between clusters makes them visible in the table.
            "new_cluster": k > 0 and row["cluster"] != rows[k - 1]["cluster"],
        }
        for k, row in enumerate(rows)
    ]


def _survival_rows(result: dict) -> list[dict]:
    """Per system, S(k) with the spotted/judged counts at each segment length; then the
    human controls."""
    survival = result.get("survival") or {}
    lengths = survival.get("segment_lengths") or []
    curves = survival.get("curves") or {}
    spotted = survival.get("spotted") or {}
    rows = [
        {
            "system": system,
            "values": [
                {"survival": value, "spotted": counts[0], "judged": counts[1]}
                for value, counts in zip(
                    curves[system], spotted.get(system, [[None, None]] * len(lengths)), strict=True
                )
            ],
        }
        for system in result.get("systems", [])
        if system in curves
    ]
    if survival.get("human"):
        rows.append(
            {
                "system": "human (controls)",
                "values": [
                    {"survival": v, "spotted": None, "judged": None} for v in survival["human"]
                ],
            }
        )
    return rows


def _feature_rows(result: dict) -> list[dict]:
    """Per system and feature, the win rate (Table 2) with that feature's Cox coefficient."""
    cox = (result.get("survival") or {}).get("cox") or {}
    features = result.get("features") or {}
    names = features.get("names") or []
    return [
        {
            "system": system,
            "cells": [
                {
                    **features["win_rates"][system][feature],
                    "cox": cox.get(system, {}).get(feature),
                    "significant": _significant(
                        cox.get(system, {}).get(feature, {}).get("p_value")
                    ),
                }
                for feature in names
            ],
        }
        for system in result.get("systems", [])
        if system in features.get("win_rates", {})
    ]


def _agreement_rows(result: dict) -> tuple[list[str], list[dict]]:
    """The labels in order of appearance, and per system (ranking order, humans last) the
    co-occurrence row of each label (Table 3)."""
    agreement = result.get("agreement") or {}
    labels = []
    shares: dict[str, dict[str, dict]] = {}
    for row in agreement.get("cooccurrence", []):
        if row["label"] not in labels:
            labels.append(row["label"])
        shares.setdefault(row["system"], {})[row["label"]] = row
    order = [*result.get("systems", []), "human"]
    rows = [
        {"system": system, "cells": [shares[system].get(label) for label in labels]}
        for system in sorted(shares, key=lambda s: order.index(s) if s in order else len(order))
    ]
    return labels, rows


# --- system profiles ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemResult:
    """One tournament's results for one system, as its profile page shows them."""

    tournament: Tournament
    run: AnalysisRun
    ranking: dict | None
    bradley_terry: dict | None
    n_systems: int
    segment_lengths: list[int]
    survival: list[dict]
    plot_url: str | None


def results_for_system(system, user) -> list[SystemResult]:
    """The system's rank and survival curve in every tournament it entered whose results
    the user may see, from each tournament's latest successful run. Three queries."""
    tournaments = {
        t.pk: t
        for t in Tournament.objects.visible_to(user).filter(analysis_runs__isnull=False).distinct()
    }
    if not tournaments:
        return []
    # Which runs rank this system, read from the result's system list alone; then the
    # results of the latest such run per tournament.
    candidates = (
        AnalysisRun.objects.succeeded()
        .filter(tournament_id__in=list(tournaments))
        .order_by("tournament_id", "-finished_at", "-pk")
        .values_list("pk", "tournament_id", KT("result__systems"))
    )
    latest: dict[int, int] = {}
    ranked: set[int] = set()
    for pk, tournament_id, systems in candidates:
        if tournament_id in latest:
            continue
        latest[tournament_id] = pk
        if systems and f'"{system.slug}"' in systems:
            ranked.add(pk)
    entries = []
    runs = AnalysisRun.objects.filter(pk__in=ranked).defer("plots").order_by("-finished_at")
    for run in runs:
        run.tournament = tournaments[run.tournament_id]
        result = run.result
        survival = result.get("survival") or {}
        curve = (survival.get("curves") or {}).get(system.slug)
        # A run stored without its plots has them drawn now; no broken image meanwhile.
        drawn = bool(curve) and not plots_pending(run)
        entries.append(
            SystemResult(
                tournament=run.tournament,
                run=run,
                ranking=next((r for r in result["ranking"] if r["system"] == system.slug), None),
                bradley_terry=next(
                    (r for r in result["bradley_terry"] if r["system"] == system.slug), None
                ),
                n_systems=len(result["systems"]),
                segment_lengths=survival.get("segment_lengths") or [],
                survival=[
                    {"k": k, "survival": value}
                    for k, value in zip(
                        survival.get("segment_lengths") or [], curve or [], strict=False
                    )
                ],
                plot_url=plot_url(run, system_plot_name(system.slug)) if drawn else None,
            )
        )
    return entries
