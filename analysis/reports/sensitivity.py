"""Parts the dimensional reports (abc_eval, likert, comparative, study) share."""

from __future__ import annotations

from evalstats.sensitivity import count_significant


def sensitivity_rows(tests, params: dict) -> list[dict]:
    """ABC-Eval's Table 5: per metric and level, the pairs told apart."""
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
