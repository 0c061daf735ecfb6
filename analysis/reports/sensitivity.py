"""Parts the dimensional reports (abc_eval, likert, comparative, study) share: ABC-Eval's
Table 5, the pairs of systems each metric tells apart, on all the data and downsampled.

The paper compares the methods' sensitivity after downsampling each to the same number of
conversations per bot (32, matching the 32 conversation pairs per bot pair of its
comparative evaluation). Each section's ``sensitivity`` counts what the data gives as it
comes; ``sensitivity_downsampled`` repeats draws of ``per_group`` conversations per bot
(pairs of conversations per bot pair for comparative judgments), the same number for every
method of the report: ``sensitivity_conversations``, or fewer when a bot (or bot pair) of
some method has fewer, so that no method is compared on more data than another. Contract of
a section's ``sensitivity_downsampled`` (null with ``sensitivity_downsample=false``)::

    {"requested": n, "per_group": n, "group": "bot" | "bot pair", "draws": n,
     "rows": [{"metric", "alpha", "pairs", "mean", "low", "high", "min", "max", "adjusted"}]}

``low``/``high`` are the 2.5 and 97.5 percentiles of the count over the draws.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field

from evalstats.sensitivity import count_significant, downsampled_significance


@dataclass(frozen=True)
class NamedTest:
    """A pair test under another metric name (a Likert dimension at turn level)."""

    metric: str
    pvalue: float
    pvalue_adjusted: float


@dataclass(frozen=True)
class SensitivityMethod:
    """One method's units per group and how to test the systems on a subset of them."""

    section: str
    group: str
    units: dict[Hashable, list[Hashable]]
    tests_for: Callable[[set], Iterable] = field(compare=False)


def sensitivity_rows(tests, params: dict) -> list[dict]:
    """ABC-Eval's Table 5 on all the data: per metric and level, the pairs told apart."""
    return [
        {
            "metric": count.metric,
            "alpha": count.alpha,
            "significant": count.n_significant,
            "pairs": count.n_pairs,
            "adjusted": count.adjusted,
        }
        for count in count_significant(
            tests, params["significance_levels"], adjusted=params["sensitivity_adjusted"]
        )
    ]


def common_per_group(methods: list[SensitivityMethod], requested: int) -> int:
    """The draw size every method can reach: ``requested``, or the fewest units of a group."""
    sizes = [len(units) for method in methods for units in method.units.values()]
    return min([requested, *sizes])


def add_downsampled(sections: dict[str, dict | None], methods, params: dict) -> None:
    """Set each section's ``sensitivity_downsampled`` (None when turned off or untestable)."""
    for section in sections.values():
        if section is not None:
            section["sensitivity_downsampled"] = None
    methods = [m for m in methods if m.units]
    if not params["sensitivity_downsample"] or not methods:
        return
    per_group = common_per_group(methods, params["sensitivity_conversations"])
    for name in dict.fromkeys(m.section for m in methods):
        rows = []
        draws = 1
        for method in (m for m in methods if m.section == name):
            counts = downsampled_significance(
                method.units,
                method.tests_for,
                per_group=per_group,
                draws=params["sensitivity_draws"],
                alphas=params["significance_levels"],
                adjusted=params["sensitivity_adjusted"],
                rng=params["seed"],
            )
            draws = max([draws, *(c.draws for c in counts)])
            rows += [
                {
                    "metric": c.metric,
                    "alpha": c.alpha,
                    "pairs": c.n_pairs,
                    "mean": c.mean,
                    "low": c.low,
                    "high": c.high,
                    "min": c.minimum,
                    "max": c.maximum,
                    "adjusted": c.adjusted,
                }
                for c in counts
            ]
        sections[name]["sensitivity_downsampled"] = {
            "requested": params["sensitivity_conversations"],
            "per_group": per_group,
            "group": methods[[m.section for m in methods].index(name)].group,
            "draws": draws,
            "rows": rows,
        }
