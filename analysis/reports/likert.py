"""The Likert report (ABC-Eval's Dialogue and Turn Likert): mean rating per system and
dimension with Student's t interval (Figures 6 and 8), t-tests between systems with the
count of significant pairs (Table 5), and ordinal Krippendorff's alpha per dimension with a
BCa interval over conversations rated more than once (Figure 1).

Section contract (``likert``)::

    {"levels": ["dialogue" | "turn", ...], "dimensions": [dimension, ...],
     "turn_unit": "conversation" | "turn",
     "annotations_used": "all" | "first",       # all: a unit's ratings averaged first
     "means": [{"system", "dimension", "level", "unit": "conversation" | "turn",
                "n", "ratings", "mean", "sd", "low", "high"}],   # n: units, one value each
     "comparisons": [{"dimension", "level", "a", "b", "mean_a", "mean_b", "t", "df",
                      "p_value", "p_adjusted"}],
     "sensitivity": [{"metric", "alpha", "significant", "pairs", "adjusted"}],
     "sensitivity_downsampled": <see analysis.reports.sensitivity> | null,
     "agreement": [{"dimension", "level", "alpha", "low", "high", "units", "conversations"}]}

In Table 5 (``sensitivity``) a dimension rated per turn is the metric "<dimension> (turn)",
apart from the same dimension rated per dialogue (the paper's Turn and Dialogue Likert).
"""

from __future__ import annotations

import numpy as np

from analysis.reports.common import Progress, report_progress
from analysis.reports.data import LikertData, NothingToAnalyse, plain_rows
from analysis.reports.sensitivity import (
    NamedTest,
    SensitivityMethod,
    add_downsampled,
    sensitivity_rows,
)
from evalstats.likert import (
    LikertScore,
    comparisons_of,
    likert_agreement,
    likert_means,
    likert_units,
)


def likert_scores(data: LikertData) -> list[LikertScore]:
    return [
        LikertScore(conversation, system, annotation, dimension, float(score), turn)
        for conversation, system, annotation, dimension, score, turn in plain_rows(
            data, "conversation", "system", "annotation", "dimension", "score", "turn"
        )
    ]


def table_5_tests(comparisons) -> list[NamedTest]:
    """Each comparison under its Table 5 metric: turn-level dimensions apart."""
    return [
        NamedTest(
            test.metric if test.level == "dialogue" else f"{test.metric} (turn)",
            test.pvalue,
            test.pvalue_adjusted,
        )
        for test in comparisons
    ]


def _methods(units, params) -> list[SensitivityMethod]:
    """Dialogue and Turn Likert, each drawn by conversations per bot."""
    methods = []
    for level in ("dialogue", "turn"):
        at_level = {key: observed for key, observed in units.items() if key[2] == level}
        conversations: dict[str, dict] = {}
        for (system, _, _), observed in at_level.items():
            conversations.setdefault(system, {}).update(dict.fromkeys(observed.conversations))
        if not conversations:
            continue

        def tests_for(chosen, at_level=at_level):
            return table_5_tests(
                comparisons_of(
                    at_level,
                    conversations=chosen,
                    equal_var=params["likert_equal_var"],
                    correction=params["correction"],
                )
            )

        methods.append(
            SensitivityMethod(
                "likert",
                "bot",
                {system: list(found) for system, found in sorted(conversations.items())},
                tests_for,
            )
        )
    return methods


def likert_section(
    data: LikertData, params: dict, warnings: list[str], methods: list | None = None
) -> dict:
    """The ``likert`` section; appends its Table 5 methods (Dialogue and Turn Likert) to
    ``methods`` (the report downsamples the methods together)."""
    scores = likert_scores(data)
    unit = params["likert_turn_unit"]
    use = params["annotations"]
    means = likert_means(scores, turn_unit=unit, use=use)
    units = likert_units(scores, turn_unit=unit, use=use)
    comparisons = comparisons_of(
        units, equal_var=params["likert_equal_var"], correction=params["correction"]
    )
    if methods is not None:
        methods += _methods(units, params)
    agreement = likert_agreement(scores, n_resamples=params["alpha_resamples"], rng=params["seed"])
    for entry in agreement:
        if entry.alpha.n_undefined_resamples:
            warnings.append(
                f"Agreement on {entry.dimension!r}: {entry.alpha.n_undefined_resamples} "
                "resamples without variation, no interval."
            )
    levels = sorted({"dialogue" if turn is None else "turn" for turn in data.turn})
    return {
        "levels": levels,
        "dimensions": np.unique(data.dimension).tolist(),
        "turn_unit": unit,
        "annotations_used": use,
        "means": [
            {
                "system": mean.system,
                "dimension": mean.dimension,
                "level": mean.level,
                "unit": mean.unit,
                "n": mean.n,
                "ratings": mean.ratings,
                "mean": mean.mean,
                "sd": mean.standard_deviation,
                "low": mean.low,
                "high": mean.high,
            }
            for mean in means
        ],
        "comparisons": [
            {
                "dimension": test.metric,
                "level": test.level,
                "a": test.system_a,
                "b": test.system_b,
                "mean_a": test.mean_a,
                "mean_b": test.mean_b,
                "t": test.statistic,
                "df": test.df,
                "p_value": test.pvalue,
                "p_adjusted": test.pvalue_adjusted,
            }
            for test in comparisons
        ],
        "sensitivity": sensitivity_rows(table_5_tests(comparisons), params),
        "agreement": [
            {
                "dimension": entry.dimension,
                "level": entry.level,
                "alpha": entry.alpha.statistic,
                "low": entry.alpha.low,
                "high": entry.alpha.high,
                "units": entry.n_units,
                "conversations": entry.alpha.n_units,
            }
            for entry in agreement
        ],
    }


def likert_report(data: LikertData, params: dict, progress: Progress | None) -> dict:
    if data.is_empty():
        raise NothingToAnalyse("no Likert rating to analyse")
    warnings: list[str] = []
    report_progress(progress, "Likert means, t-tests and agreement")
    methods: list = []
    section = likert_section(data, params, warnings, methods)
    report_progress(progress, "Table 5 downsampled")
    add_downsampled({"likert": section}, methods, params)
    return {
        "subject": data.subject,
        "kind": data.kind,
        "systems": np.unique(data.system).tolist(),
        "judgments": len(np.unique(data.annotation)),
        "likert": section,
        "warnings": warnings,
    }
