"""The A/B report (ChatEval): ranking of every compared pair and Krippendorff's alpha of
the choices; identical responses count as ties from every judge. ``chateval`` adds the
paper's own reading (``analysis.reports.chateval``). With ``remove_outliers`` the workers
it flags as outliers are left out of everything here, as the paper removed them;
``judgments`` counts the workers' judgments analysed."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from analysis.reports.chateval import chateval_section, without_workers, worker_agreement
from analysis.reports.common import (
    AB_OUTCOME,
    Matches,
    Progress,
    alpha_section,
    category_codes,
    ranking_section,
    report_progress,
)
from analysis.reports.data import ABData, NothingToAnalyse


def ab_report(data: ABData, params: dict, progress: Progress | None) -> dict:
    warnings: list[str] = []
    if len(data.choice) == 0:
        raise NothingToAnalyse("no A/B judgment to analyse")
    everything = data
    workers = worker_agreement(data, params)
    if params["remove_outliers"]:
        outliers = {row["worker_id"] for row in workers if row["outlier"]}
        data = without_workers(data, outliers)
        if len(data.choice) == 0:
            raise NothingToAnalyse("every A/B judgment came from an outlier worker")
        if outliers:
            warnings.append(
                f"{len(outliers)} outlier worker(s) left out of the analysis "
                "(remove_outliers), as ChatEval removed them."
            )
    weight = np.where(data.automatic, data.automatic_weight, 1)
    # np.unique sorts by code point, as sorted() sorts str.
    names = np.unique(np.concatenate([data.system_a, data.system_b])).tolist()
    a = np.repeat(np.searchsorted(names, data.system_a), weight).astype(np.int64)
    b = np.repeat(np.searchsorted(names, data.system_b), weight).astype(np.int64)
    outcome = np.repeat(category_codes(data.choice, AB_OUTCOME), weight).astype(np.int64)
    items = np.repeat(data.item, weight)
    report_progress(progress, "Pairwise win rates, TrueSkill bootstrap and Bradley-Terry")
    matches = Matches(names, a, b, outcome, items)
    systems, pairs, ranking, bradley_terry = ranking_section(matches, params, warnings)
    report_progress(progress, "Agreement")
    units: dict[int, list[int]] = defaultdict(list)
    judged = ~data.automatic
    codes = category_codes(data.choice[judged], {"a": 0, "b": 1, "tie": 2})
    for item, code in zip(data.item[judged].tolist(), codes.tolist(), strict=True):
        units[item].append(code)
    alpha = alpha_section(units, params, warnings)
    return {
        "tournament": data.subject,
        "kind": data.kind,
        "systems": systems,
        "judgments": int(judged.sum()),
        "automatic_ties": int(data.automatic.sum()),
        "pairwise": pairs,
        "ranking": ranking,
        "bradley_terry": bradley_terry,
        "survival": {
            "segment_lengths": [],
            "curves": {},
            "human": None,
            "spotted": {},
            "logrank": [],
            "logrank_all": None,
            "cox": {},
        },
        "features": {"names": [], "win_rates": {}},
        "agreement": {
            "units_judged_twice": sum(1 for values in units.values() if len(values) >= 2),
            "cooccurrence": [],
            "krippendorff": None if alpha is None else {"nominal": alpha["nominal"]},
        },
        "stability": {},
        "chateval": chateval_section(everything, params, workers, analysed=data),
        "warnings": warnings,
    }
