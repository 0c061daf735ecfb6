"""The ChatEval reading of an A/B experiment (Sedoc et al., 2019), beside the ranking of
``ab``: the submission's wins, ties and losses against each baseline with Wilson intervals
and an exact sign test (ties dropped, Holm over the baselines by default), agreement as
Cohen's weighted kappa (linear weights over b better < tie < a better) between the first
two workers of every item judged more than once, and each worker's weighted kappa against
the majority of the other workers on the same items, flagged as an outlier below
``outlier_kappa`` ("we examine the worker against the other annotators").

In an A/B campaign ``system_a`` is the submission and ``system_b`` the baseline (see
``annotation.kinds.ab``). Identical responses are ties from every judge, weighed as in the
ranking (``automatic_weight``); they never enter the kappas.

Section contract (``chateval``)::

    {"baselines": [{"system", "baseline", "n", "wins", "ties", "losses",
                    "win_share", "win_low", "win_high", "tie_share", "loss_share",
                    "sign_statistic", "p_value", "p_adjusted"}],
     "kappa": {"weights": "linear", "kappa", "items"} | null,
     "workers": [{"worker_id", "items", "kappa", "outlier"}],   # lowest kappa first
     "outliers": n}
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from analysis.reports.common import category_codes
from analysis.reports.data import ABData, plain_rows
from evalstats.agreement import cohen_kappa
from evalstats.judges import kappa_with_majority
from evalstats.pairwise import adjust_pvalues
from evalstats.proportions import sign_test_from_counts, wilson_interval

ORDER = ("b", "tie", "a")


def _tallies(data: ABData):
    """(system, baseline, wins, ties, losses) of every compared pair in sorted order, with
    automatic ties weighed as in the ranking (counted with array operations)."""
    names = np.unique(np.concatenate([data.system_a, data.system_b]))
    n = len(names)
    pair = np.searchsorted(names, data.system_a) * n + np.searchsorted(names, data.system_b)
    choice = category_codes(data.choice, {"a": 0, "tie": 1, "b": 2})
    weight = np.where(data.automatic, data.automatic_weight, 1)
    # Sums of integer weights, exact in float64 far beyond any campaign's size.
    counts = np.bincount(pair * 3 + choice, weights=weight, minlength=n * n * 3)
    counts = counts.astype(np.int64).reshape(n * n, 3)
    for cell in np.flatnonzero(np.bincount(pair, minlength=n * n)).tolist():
        wins, ties, losses = counts[cell].tolist()
        yield str(names[cell // n]), str(names[cell % n]), wins, ties, losses


def _baselines(data: ABData, params: dict) -> list[dict]:
    rows = []
    for system, baseline, wins, ties, losses in _tallies(data):
        n = wins + ties + losses
        test = sign_test_from_counts(wins, losses, n_ties=ties)
        win = wilson_interval(wins, n)
        rows.append(
            {
                "system": system,
                "baseline": baseline,
                "n": n,
                "wins": wins,
                "ties": ties,
                "losses": losses,
                "win_share": win.proportion,
                "win_low": win.confidence_interval.low,
                "win_high": win.confidence_interval.high,
                "tie_share": ties / n,
                "loss_share": losses / n,
                "sign_statistic": test.statistic,
                "p_value": test.pvalue,
            }
        )
    adjusted = adjust_pvalues(np.array([row["p_value"] for row in rows]), params["correction"])
    for row, p in zip(rows, adjusted, strict=True):
        row["p_adjusted"] = float(p)
    return rows


def chateval_section(data: ABData, params: dict) -> dict:
    by_item: dict[int, dict[int, str]] = defaultdict(dict)
    judged = ~data.automatic
    for item, worker, choice in plain_rows(data, "item", "worker", "choice", where=judged):
        by_item[item].setdefault(worker, choice)
    first, second = [], []
    for choices in by_item.values():
        if len(choices) >= 2:
            one, two = list(choices.values())[:2]
            first.append(one)
            second.append(two)
    kappa = None
    if first:
        result = cohen_kappa(first, second, labels=ORDER, weights="linear")
        kappa = {"weights": "linear", "kappa": result.statistic, "items": result.n_items}
    workers = []
    for worker in sorted({w for choices in by_item.values() for w in choices}):
        own = {item: c[worker] for item, c in by_item.items() if worker in c and len(c) > 1}
        others = {
            item: [choice for w, choice in by_item[item].items() if w != worker] for item in own
        }
        if not own:
            continue
        result = kappa_with_majority(others, own, labels=ORDER, weights="linear").kappa
        outlier = (
            result.n_items >= params["outlier_min_items"]
            and not np.isnan(result.statistic)
            and result.statistic < params["outlier_kappa"]
        )
        workers.append(
            {
                "worker_id": worker,
                "items": result.n_items,
                "kappa": result.statistic,
                "outlier": bool(outlier),
            }
        )
    workers.sort(key=lambda row: (np.nan_to_num(row["kappa"], nan=np.inf), row["worker_id"]))
    return {
        "baselines": _baselines(data, params),
        "kappa": kappa,
        "workers": workers,
        "outliers": sum(row["outlier"] for row in workers),
    }
