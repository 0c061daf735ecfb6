"""The k-way ranking report: Plackett-Luce ratings with bootstrap intervals and ranks
(``evalstats.plackett_luce``), on Bradley-Terry's scale and in the shape of its rows, so
that a ranking campaign reads like a tournament's Bradley-Terry column (pairwise judgments
are the k = 2 case of the same model).

Contract::

    {"subject": slug, "kind": "ranking",
     "systems": [slug, ...],                    # best first (Plackett-Luce rank, rating)
     "judgments": n,                            # rankings by workers
     "automatic_ties": n,                       # items whose responses were all identical
     "plackett_luce": [{"system", "rating", "ci": [lo, hi], "rank",
                        "rankings", "first", "mean_position"}],
                        # Elo-like scale (mean 1000), percentile bootstrap interval over
                        # rankings, rank = 1 + #significantly better; rankings: how many
                        # showed the system; first: how many put it first (ties share
                        # first place); mean_position: its mean place, 1 best
     "warnings": [text, ...]}

Parameters: ``bt_bootstrap`` replicates, ``coverage`` (the confidence level), ``seed``.
An automatic tie counts as ``automatic_weight`` rankings, as A/B counts its ties.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from analysis.reports.common import Progress, report_progress
from analysis.reports.data import NothingToAnalyse, RankingData
from evalstats.plackett_luce import bootstrap_plackett_luce


def _rankings(data: RankingData, names: list[str]) -> list[list[list[int]]]:
    """Each ranking as tiers of system indices, best first; automatic ties repeated."""
    index = {name: i for i, name in enumerate(names)}
    entries: dict[int, list[tuple[int, int]]] = defaultdict(list)
    automatic: dict[int, bool] = {}
    for ranking, system, rank, auto in zip(
        data.ranking.tolist(),
        data.system.tolist(),
        data.rank.tolist(),
        data.automatic.tolist(),
        strict=True,
    ):
        entries[ranking].append((rank, index[system]))
        automatic[ranking] = auto
    rankings = []
    for ranking, members in entries.items():
        if len(members) < 2:
            continue  # one system ranked alone says nothing about the others
        tiers: dict[int, list[int]] = defaultdict(list)
        for rank, system in members:
            tiers[rank].append(system)
        tiered = [sorted(tiers[rank]) for rank in sorted(tiers)]
        rankings += [tiered] * (data.automatic_weight if automatic[ranking] else 1)
    return rankings


def _counts(rankings: list[list[list[int]]], n: int) -> tuple[np.ndarray, ...]:
    shown, first, places = np.zeros(n, int), np.zeros(n, int), np.zeros(n)
    for tiers in rankings:
        place = 1
        for tier in tiers:
            for system in tier:
                shown[system] += 1
                places[system] += place
                first[system] += place == 1
            place += len(tier)
    return shown, first, places


def ranking_report(data: RankingData, params: dict, progress: Progress | None) -> dict:
    if len(data.ranking) == 0:
        raise NothingToAnalyse("no ranking to analyse")
    names = np.unique(data.system).tolist()
    if len(names) < 2:
        raise NothingToAnalyse("the rankings compare fewer than two systems")
    rankings = _rankings(data, names)
    if not rankings:
        raise NothingToAnalyse("no ranking compares two systems")
    report_progress(progress, "Plackett-Luce with bootstrap intervals")
    fit = bootstrap_plackett_luce(
        rankings,
        len(names),
        n_bootstrap=params["bt_bootstrap"],
        confidence=params["coverage"],
        seed=params["seed"],
        labels=names,
    )
    shown, first, places = _counts(rankings, len(names))
    rows = sorted(
        (
            {
                "system": names[p],
                "rating": fit.ratings[p],
                "ci": [fit.confidence_interval.low[p], fit.confidence_interval.high[p]],
                "rank": int(fit.ranks[p]),
                "rankings": int(shown[p]),
                "first": int(first[p]),
                "mean_position": places[p] / shown[p] if shown[p] else None,
            }
            for p in range(len(names))
        ),
        key=lambda row: (row["rank"], -row["rating"]),
    )
    automatic = len(np.unique(data.ranking[data.automatic]))
    return {
        "subject": data.subject,
        "kind": data.kind,
        "systems": [row["system"] for row in rows],
        "judgments": len(np.unique(data.ranking[~data.automatic])),
        "automatic_ties": automatic,
        "plackett_luce": rows,
        "warnings": [f"Plackett-Luce: {message}" for message in fit.warnings],
    }
