"""The report of an imported study (ABC-Eval): its campaigns analysed together.

One section per kind of campaign the study has (``behaviours``, ``likert``, ``comparative``,
the sections of ``abc_eval``, ``likert`` and ``comparative`` reports), and ``validity``
(ABC-Eval sections 7.2 and 7.4) when dialogue-level Likert ``quality`` ratings exist:

* predictive validity (Figure 2): a univariate linear regression of each conversation's
  mean quality rating on each metric (a behaviour's share of the conversation's bot turns,
  or another dimension's mean dialogue rating), R^2; and, when comparative ``quality``
  verdicts exist, a logistic regression of "b better" on each other comparative dimension's
  verdict (+1 b better, -1 a better, 0 neither), McFadden's pseudo-R^2. The regression has
  no intercept (``model: "symmetric-logistic"``, ``evalstats.validity``): which dialogue
  of a pair is "a" is arbitrary, and with an intercept the fit changed with it (the
  paper's model had one; on the released data grammaticality's pseudo-R^2 was 0.045 or
  0.063 depending on the order);
* incremental validity (Figure 3): backward elimination on adjusted (pseudo-)R^2 within
  each method, the path of models from all metrics to the best single one.

The paper's quality ratings came from the conversations' interactors; a study's come from
the same annotators as its Likert dimensions, which inflates the Likert metrics' validity
(the report says so in ``validity.note``).

Contract::

    {"subject", "kind": "study", "campaigns": [{"slug", "kind", "judgments"}],
     "systems": [...], "judgments": n,
     "behaviours": <abc_eval section> | null, "likert": <likert section> | null,
     "comparative": <comparative section> | null,
     "validity": {"quality": "quality", "note",
                  "predictive": [{"method", "model", "metric", "fit", "adjusted", "n"}],
                  "incremental": [{"method", "model", "steps": [{"predictors", "removed",
                                   "fit", "adjusted", "n", "all_contribute"}]}]} | null,
     "warnings": [...]}
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from analysis.reports.abc_eval import behaviour_section
from analysis.reports.common import Progress, report_progress
from analysis.reports.comparative import comparative_section
from analysis.reports.data import (
    BehaviourData,
    ComparativeData,
    LikertData,
    NothingToAnalyse,
    StudyData,
    plain_rows,
)
from analysis.reports.likert import likert_section
from analysis.reports.sensitivity import add_downsampled
from evalstats.validity import backward_elimination, predictive_validity

QUALITY = "quality"
NOTE = (
    "Quality ratings come from the study's Likert annotators, who also rated the other "
    "Likert dimensions; the paper used the interactors' own ratings."
)


def _behaviour_metrics(data: BehaviourData) -> dict[str, dict[str, float]]:
    """Per label, per conversation: the share of its annotated bot turns with the label."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for conversation, label, present in plain_rows(data, "conversation", "label", "present"):
        tally = counts[(label, conversation)]
        tally[0] += int(present)
        tally[1] += 1
    metrics: dict[str, dict[str, float]] = defaultdict(dict)
    for (label, conversation), (present, total) in counts.items():
        metrics[label][conversation] = present / total
    return metrics


def _likert_metrics(data: LikertData) -> dict[str, dict[str, float]]:
    """Per dimension, per conversation: the mean dialogue-level rating."""
    ratings: dict[tuple[str, str], list[float]] = defaultdict(list)
    for conversation, dimension, score, turn in plain_rows(
        data, "conversation", "dimension", "score", "turn"
    ):
        if turn is None:
            ratings[(dimension, conversation)].append(score)
    metrics: dict[str, dict[str, float]] = defaultdict(dict)
    for (dimension, conversation), values in ratings.items():
        metrics[dimension][conversation] = float(np.mean(values))
    return metrics


def _steps(steps) -> list[dict]:
    return [
        {
            "predictors": list(step.predictors),
            "removed": step.removed,
            "fit": step.fit.fit,
            "adjusted": step.fit.adjusted_fit,
            "n": step.fit.n,
            "all_contribute": step.all_contribute,
        }
        for step in steps
    ]


def _fit_method(method, model, quality, metrics, section, warnings) -> None:
    if not metrics:
        return
    try:
        for entry in predictive_validity(quality, metrics, model):
            section["predictive"].append(
                {
                    "method": method,
                    "model": model,
                    "metric": entry.metric,
                    "fit": entry.fit.fit,
                    "adjusted": entry.fit.adjusted_fit,
                    "n": entry.fit.n,
                }
            )
        steps = backward_elimination(quality, metrics, model)
    except ValueError as error:
        warnings.append(f"No {method} validity: {error}.")
        return
    section["incremental"].append({"method": method, "model": model, "steps": _steps(steps)})


def _comparative_rows(data: ComparativeData):
    """Per judgment with a quality verdict other than neither: 1 if b is better, and each
    other dimension's verdict as +1 (b better), -1 (a better) or 0."""
    verdicts: dict[int, dict[str, str]] = defaultdict(dict)
    for annotation, dimension, choice in plain_rows(data, "annotation", "dimension", "choice"):
        verdicts[annotation][dimension] = choice
    sign = {"b": 1.0, "a": -1.0, "neither": 0.0}
    rows = [v for v in verdicts.values() if v.get(QUALITY) in ("a", "b")]
    dimensions = sorted({d for v in rows for d in v} - {QUALITY})
    quality = np.array([1.0 if v[QUALITY] == "b" else 0.0 for v in rows])
    metrics = {d: np.array([sign[v[d]] if d in v else np.nan for v in rows]) for d in dimensions}
    return quality, metrics


def validity_section(data: StudyData, warnings: list[str]) -> dict | None:
    likert = _likert_metrics(data.likert) if data.likert is not None else {}
    comparative = data.comparative is not None and bool(
        (data.comparative.dimension == QUALITY).any()
    )
    if QUALITY not in likert and not comparative:
        return None
    section: dict = {"quality": QUALITY, "note": NOTE, "predictive": [], "incremental": []}
    if QUALITY in likert:
        quality_by_conversation = likert.pop(QUALITY)
        conversations = sorted(quality_by_conversation)
        quality = np.array([quality_by_conversation[c] for c in conversations])

        def aligned(metrics):
            return {
                name: np.array([values.get(c, np.nan) for c in conversations])
                for name, values in metrics.items()
                if any(c in values for c in conversations)
            }

        if data.behaviours is not None:
            behaviours = aligned(_behaviour_metrics(data.behaviours))
            if behaviours:
                _fit_method("abc_eval", "linear", quality, behaviours, section, warnings)
        _fit_method("likert", "linear", quality, aligned(likert), section, warnings)
    if comparative:
        quality, metrics = _comparative_rows(data.comparative)
        _fit_method("comparative", "symmetric-logistic", quality, metrics, section, warnings)
    section["predictive"].sort(key=lambda row: (row["method"], -(row["fit"] or 0.0)))
    return section


def study_report(data: StudyData, params: dict, progress: Progress | None) -> dict:
    if data.is_empty():
        raise NothingToAnalyse("the study has no judgment to analyse")
    warnings: list[str] = []
    systems: set[str] = set()
    sections: dict[str, dict | None] = {"behaviours": None, "likert": None, "comparative": None}
    # Table 5 compares the methods downsampled to one size, so they are drawn together.
    methods: list = []
    if data.behaviours is not None and not data.behaviours.is_empty():
        report_progress(progress, "Behaviour rates, comparisons and agreement")
        sections["behaviours"] = behaviour_section(data.behaviours, params, warnings, methods)
        systems |= set(data.behaviours.system.tolist())
    if data.likert is not None and not data.likert.is_empty():
        report_progress(progress, "Likert means, t-tests and agreement")
        sections["likert"] = likert_section(data.likert, params, warnings, methods)
        systems |= set(data.likert.system.tolist())
    if data.comparative is not None and not data.comparative.is_empty():
        report_progress(progress, "Win/tie/loss shares, sign tests and agreement")
        sections["comparative"] = comparative_section(data.comparative, params, warnings, methods)
        systems |= set(data.comparative.system_a.tolist()) | set(data.comparative.system_b.tolist())
    report_progress(progress, "Table 5 downsampled")
    add_downsampled(sections, methods, params)
    report_progress(progress, "Predictive and incremental validity")
    validity = validity_section(data, warnings)
    return {
        "subject": data.subject,
        "kind": data.kind,
        "campaigns": [
            {"slug": slug, "kind": kind, "judgments": judgments}
            for slug, kind, judgments in data.campaigns
        ],
        "systems": sorted(systems),
        "judgments": sum(judgments for _, _, judgments in data.campaigns),
        **sections,
        "validity": validity,
        "warnings": warnings,
    }
