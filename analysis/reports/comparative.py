"""The comparative report (ABC-Eval's Comparative): per dimension and system pair, the
win/tie/loss shares with Wilson intervals (Figure 7) and the sign test of wins against
losses (Table 5), and ordinal Krippendorff's alpha per dimension with a BCa interval over
pairs judged more than once (Figure 1; a verdict is -1, 0 or 1 from a's side).

Section contract (``comparative``)::

    {"dimensions": [dimension, ...],
     "annotations_used": "all" | "first",       # all: each pair's majority verdict
     "results": [{"dimension", "a", "b", "n", "judgments",   # n: pairs of conversations
                  "wins": {"count", "share", "low", "high"}, "ties": {...}, "losses": {...},
                  "sign_statistic", "p_value", "p_adjusted"}],   # a's side; a < b
     "sensitivity": [{"metric", "alpha", "significant", "pairs", "adjusted"}],
     "sensitivity_downsampled": <see analysis.reports.sensitivity> | null,
     "agreement": [{"dimension", "alpha", "low", "high", "units"}]}
"""

from __future__ import annotations

import math

import numpy as np

from analysis.reports.common import Progress, report_progress
from analysis.reports.data import ComparativeData, NothingToAnalyse, plain_rows
from analysis.reports.sensitivity import SensitivityMethod, add_downsampled, sensitivity_rows
from evalstats.agreement import krippendorff_alpha_bca
from evalstats.comparative import ComparativeJudgment, comparative_units, results_of

OUTCOME = {"a": "a", "b": "b", "neither": "tie"}
# A verdict from the side of the pair's a: ordered b better < neither < a better.
ORDINAL = {"a": 1, "neither": 0, "b": -1}


def comparative_judgments(data: ComparativeData) -> list[ComparativeJudgment]:
    return [
        ComparativeJudgment(a, b, dimension, OUTCOME[choice], item)
        for item, a, b, dimension, choice in plain_rows(
            data, "item", "system_a", "system_b", "dimension", "choice"
        )
        if a != b
    ]


def _share(share) -> dict:
    return {"count": share.count, "share": share.proportion, "low": share.low, "high": share.high}


def _agreement(data: ComparativeData, params: dict, warnings: list[str]) -> list[dict]:
    units: dict[str, dict[int, list[int]]] = {}
    for item, dimension, choice in plain_rows(data, "item", "dimension", "choice"):
        units.setdefault(dimension, {}).setdefault(item, []).append(ORDINAL[choice])
    rows = []
    for dimension in sorted(units):
        coded = [values for values in units[dimension].values() if len(values) >= 2]
        if len(coded) < 2:
            continue
        matrix = np.full((max(map(len, coded)), len(coded)), np.nan)
        for column, values in enumerate(coded):
            matrix[: len(values), column] = values
        result = krippendorff_alpha_bca(
            matrix, "ordinal", n_resamples=params["alpha_resamples"], rng=params["seed"]
        )
        if result.n_undefined_resamples and not math.isnan(result.statistic):
            warnings.append(
                f"Agreement on {dimension!r}: {result.n_undefined_resamples} resamples "
                "without variation, no interval."
            )
        rows.append(
            {
                "dimension": dimension,
                "alpha": result.statistic,
                "low": result.low,
                "high": result.high,
                "units": result.n_units,
            }
        )
    return rows


def comparative_section(
    data: ComparativeData, params: dict, warnings: list[str], methods: list | None = None
) -> dict:
    """The ``comparative`` section; appends its Table 5 method (pairs of conversations drawn
    per bot pair) to ``methods`` (the report downsamples the methods together)."""
    judgments = comparative_judgments(data)
    same = len(data.choice) - len(judgments)
    if same:
        warnings.append(f"{same} verdicts between conversations of the same system left out.")
    use = params["annotations"]
    verdicts = comparative_units(judgments, use=use)
    results = results_of(verdicts, correction=params["correction"], use=use)
    if methods is not None:
        pairs: dict[tuple[str, str], dict] = {}
        for verdict in verdicts:
            pairs.setdefault((verdict.system_a, verdict.system_b), {})[verdict.unit] = None
        methods.append(
            SensitivityMethod(
                "comparative",
                "bot pair",
                {pair: list(units) for pair, units in sorted(pairs.items())},
                lambda chosen: results_of(
                    verdicts, units=chosen, correction=params["correction"], use=use
                ),
            )
        )
    return {
        "dimensions": np.unique(data.dimension).tolist(),
        "annotations_used": params["annotations"],
        "results": [
            {
                "dimension": result.metric,
                "a": result.system_a,
                "b": result.system_b,
                "n": result.n,
                "judgments": result.judgments,
                "wins": _share(result.wins),
                "ties": _share(result.ties),
                "losses": _share(result.losses),
                "sign_statistic": result.statistic,
                "p_value": result.pvalue,
                "p_adjusted": result.pvalue_adjusted,
            }
            for result in results
        ],
        "sensitivity": sensitivity_rows(results, params),
        "agreement": _agreement(data, params, warnings),
    }


def comparative_report(data: ComparativeData, params: dict, progress: Progress | None) -> dict:
    if data.is_empty():
        raise NothingToAnalyse("no comparative verdict to analyse")
    warnings: list[str] = []
    report_progress(progress, "Win/tie/loss shares, sign tests and agreement")
    methods: list = []
    section = comparative_section(data, params, warnings, methods)
    report_progress(progress, "Table 5 downsampled")
    add_downsampled({"comparative": section}, methods, params)
    return {
        "subject": data.subject,
        "kind": data.kind,
        "systems": np.unique(np.concatenate([data.system_a, data.system_b])).tolist(),
        "judgments": len(np.unique(data.annotation)),
        "comparative": section,
        "warnings": warnings,
    }
