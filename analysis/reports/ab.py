"""The A/B report (ChatEval): ranking of every compared pair and Krippendorff's alpha of
the choices; identical responses count as ties from every judge. ``chateval`` adds the
paper's own reading (``analysis.reports.chateval``)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from .chateval import chateval_section
from .common import AB_OUTCOME, Matches, Progress, alpha_section, ranking_section, report_progress
from .data import ABData, NothingToAnalyse


def ab_report(data: ABData, params: dict, progress: Progress | None) -> dict:
    warnings: list[str] = []
    weight = np.where(np.array(data.automatic, dtype=bool), data.automatic_weight, 1)
    if len(data.choice) == 0:
        raise NothingToAnalyse("no A/B judgment to analyse")
    names = sorted(set(data.system_a) | set(data.system_b))
    index = {name: i for i, name in enumerate(names)}
    a = np.repeat([index[s] for s in data.system_a], weight).astype(np.int64)
    b = np.repeat([index[s] for s in data.system_b], weight).astype(np.int64)
    outcome = np.repeat([AB_OUTCOME[c] for c in data.choice], weight).astype(np.int64)
    items = np.repeat(np.array(data.item), weight)
    report_progress(progress, "Pairwise win rates, TrueSkill bootstrap and Bradley-Terry")
    matches = Matches(names, a, b, outcome, items)
    systems, pairs, ranking, bradley_terry = ranking_section(matches, params, warnings)
    report_progress(progress, "Agreement")
    units: dict[int, list[int]] = defaultdict(list)
    for item, choice, automatic in zip(data.item, data.choice, data.automatic, strict=True):
        if not automatic:
            units[item].append(("a", "b", "tie").index(choice))
    alpha = alpha_section(units, params, warnings)
    return {
        "tournament": data.subject,
        "kind": data.kind,
        "systems": systems,
        "judgments": int(sum(1 for automatic in data.automatic if not automatic)),
        "automatic_ties": int(sum(data.automatic)),
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
        "chateval": chateval_section(data, params),
        "warnings": warnings,
    }
