"""The ABC-Eval behaviour report (Finch et al., 2023): per system and label the share of bot
turns showing the behaviour with its Wilson interval (Figures 4-5), pooled z-tests between
systems with the count of significant pairs (Table 5), and per-label Krippendorff's alpha
with a BCa interval over conversations annotated more than once (Figure 1). Rates count
the first annotation of each conversation by default (``annotations``); with every
annotation, intervals and tests use each rate's design effect over ``behaviour_clusters``
(``evalstats.clustered``).

Section contract (``behaviours``)::

    {"annotations_used": "all" | "first",       # which annotations the rates count
     "unit": "bot turn",                        # what n_turns counts (once per annotation)
     "clusters": "turn" | "conversation",       # what the design effect clusters
     "conversations": n, "conversations_annotated_more_than_once": n,
     "labels": [{"label", "group": "undesirable" | "desirable"}],
     "rates": [{"system", "label", "group", "n_turns", "n_present", "rate", "low", "high",
                "clusters", "design_effect", "effective_n"}],
     "comparisons": [{"label", "a", "b", "rate_a", "rate_b", "z", "p_value", "p_adjusted"}],
     "sensitivity": [{"metric", "alpha", "significant", "pairs", "adjusted"}],
     "sensitivity_downsampled": <see analysis.reports.sensitivity> | null,
     "agreement": [{"label", "alpha", "low", "high", "conversations", "turns", "positives"}]}
"""

from __future__ import annotations

import numpy as np

from analysis.reports.common import Progress, report_progress
from analysis.reports.data import UNDESIRABLE_LABELS, BehaviourData, NothingToAnalyse, plain_rows
from analysis.reports.sensitivity import SensitivityMethod, add_downsampled, sensitivity_rows
from evalstats.behaviour import (
    BehaviourJudgment,
    behaviour_agreement,
    behaviour_comparisons,
    rate_clusters,
    rates_of,
)


def label_group(label: str) -> str:
    return "undesirable" if label in UNDESIRABLE_LABELS else "desirable"


def behaviour_judgments(data: BehaviourData) -> list[BehaviourJudgment]:
    return [
        BehaviourJudgment(conversation, system, turn, annotation, label, bool(present))
        for conversation, system, turn, annotation, label, present in plain_rows(
            data, "conversation", "system", "turn", "annotation", "label", "present"
        )
    ]


def behaviour_section(
    data: BehaviourData, params: dict, warnings: list[str], methods: list | None = None
) -> dict:
    """The ``behaviours`` section; appends its Table 5 method to ``methods`` (the report
    downsamples the methods together, ``analysis.reports.sensitivity``)."""
    judgments = behaviour_judgments(data)
    annotations: dict[str, set[int]] = {}
    for judgment in judgments:
        annotations.setdefault(judgment.conversation, set()).add(judgment.annotation)
    # A conversation is annotated more than once for a label when two judgments label it.
    per_label: dict[tuple[str, str], set[int]] = {}
    for judgment in judgments:
        per_label.setdefault((judgment.conversation, judgment.label), set()).add(
            judgment.annotation
        )
    repeated = {conversation for (conversation, _), ids in per_label.items() if len(ids) > 1}
    table = rate_clusters(
        judgments, use=params["annotations"], clusters=params["behaviour_clusters"]
    )
    rates = rates_of(table)
    comparisons = behaviour_comparisons(rates, correction=params["correction"])
    if methods is not None:
        methods.append(
            SensitivityMethod(
                "behaviours",
                "bot",
                table.conversations_of(),
                lambda chosen: behaviour_comparisons(
                    rates_of(table, conversations=chosen), correction=params["correction"]
                ),
            )
        )
    agreement = behaviour_agreement(
        judgments, n_resamples=params["alpha_resamples"], rng=params["seed"]
    )
    for label, entry in agreement.items():
        if entry.alpha.n_undefined_resamples:
            warnings.append(
                f"Agreement on {label!r}: {entry.alpha.n_undefined_resamples} resamples "
                "without variation, no interval."
            )
    labels = sorted({judgment.label for judgment in judgments})
    return {
        "annotations_used": params["annotations"],
        "unit": "bot turn",
        "clusters": params["behaviour_clusters"],
        "conversations": len(annotations),
        "conversations_annotated_more_than_once": len(repeated),
        "labels": [{"label": label, "group": label_group(label)} for label in labels],
        "rates": [
            {
                "system": rate.system,
                "label": rate.label,
                "group": label_group(rate.label),
                "n_turns": rate.n_turns,
                "n_present": rate.n_present,
                "rate": rate.rate,
                "low": rate.low,
                "high": rate.high,
                "clusters": rate.n_clusters,
                "design_effect": rate.design_effect,
                "effective_n": rate.effective_n,
            }
            for rate in rates
        ],
        "comparisons": [
            {
                "label": test.metric,
                "a": test.system_a,
                "b": test.system_b,
                "rate_a": test.rate_a,
                "rate_b": test.rate_b,
                "z": test.statistic,
                "p_value": test.pvalue,
                "p_adjusted": test.pvalue_adjusted,
            }
            for test in comparisons
        ],
        "sensitivity": sensitivity_rows(comparisons, params),
        "agreement": [
            {
                "label": label,
                "alpha": entry.alpha.statistic,
                "low": entry.alpha.low,
                "high": entry.alpha.high,
                "conversations": entry.n_conversations,
                "turns": entry.n_turns,
                "positives": entry.n_positive,
            }
            for label, entry in agreement.items()
        ],
    }


def abc_eval_report(data: BehaviourData, params: dict, progress: Progress | None) -> dict:
    if data.is_empty():
        raise NothingToAnalyse("no behaviour label to analyse")
    warnings: list[str] = []
    report_progress(progress, "Behaviour rates, comparisons and agreement")
    methods: list = []
    section = behaviour_section(data, params, warnings, methods)
    report_progress(progress, "Table 5 downsampled")
    add_downsampled({"behaviours": section}, methods, params)
    return {
        "subject": data.subject,
        "kind": data.kind,
        "systems": np.unique(data.system).tolist(),
        "judgments": len(np.unique(data.annotation)),
        "behaviours": section,
        "warnings": warnings,
    }
