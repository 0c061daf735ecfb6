"""The ChatEval reading of an A/B experiment (Sedoc et al., 2019), beside the ranking of
``ab``: the submission's wins, ties and losses against each baseline with Wilson intervals
and an exact sign test (ties dropped, Holm over the baselines by default), agreement as
Cohen's weighted kappa (linear weights over b better < tie < a better) between the first
two workers of every item judged more than once, and each worker's weighted kappa against
the majority of the other workers on the same items, flagged as an outlier below
``outlier_kappa`` ("we examine the worker against the other annotators").

The paper removes the outliers ("there are occasionally bad workers, which we automatically
remove from our results"): with ``remove_outliers`` (on in the "as-published" preset) the
flagged workers' judgments leave the whole A/B report, the ranking, alpha and the
baselines here (``removed_outliers``, ``removed_judgments``). Agreement is reported both
ways whatever the setting: ``kappa`` over every worker, ``kappa_without_outliers`` over
the others.

In an A/B campaign ``system_a`` is the submission and ``system_b`` the baseline (see
``annotation.kinds.ab``). Identical responses are ties from every judge, weighed as in the
ranking (``automatic_weight``); they never enter the kappas.

Section contract (``chateval``)::

    {"baselines": [{"system", "baseline", "n", "wins", "ties", "losses",
                    "win_share", "win_low", "win_high", "tie_share", "loss_share",
                    "sign_statistic", "p_value", "p_adjusted"}],
     "kappa": {"weights": "linear", "kappa", "items"} | null,       # every worker
     "kappa_without_outliers": {"weights": "linear", "kappa", "items"} | null,
     "workers": [{"worker_id", "items", "kappa", "outlier"}],   # lowest kappa first
     "outliers": n,
     "removed_outliers": true | false,          # the baselines (and the whole A/B
     "removed_judgments": n}                    # report) without the outliers' judgments
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


def _choices_by_item(data: ABData) -> dict[int, dict[int, str]]:
    """item -> {worker: choice} of the workers' (not automatic) judgments, in input order."""
    by_item: dict[int, dict[int, str]] = defaultdict(dict)
    judged = ~data.automatic
    for item, worker, choice in plain_rows(data, "item", "worker", "choice", where=judged):
        by_item[item].setdefault(worker, choice)
    return by_item


def _pair_kappa(by_item: dict[int, dict[int, str]], leave_out: set[int]) -> dict | None:
    """Cohen's weighted kappa between the first two workers (not left out) of each item."""
    first, second = [], []
    for choices in by_item.values():
        kept = [choice for worker, choice in choices.items() if worker not in leave_out]
        if len(kept) >= 2:
            first.append(kept[0])
            second.append(kept[1])
    if not first:
        return None
    result = cohen_kappa(first, second, labels=ORDER, weights="linear")
    return {"weights": "linear", "kappa": result.statistic, "items": result.n_items}


def worker_agreement(data: ABData, params: dict) -> list[dict]:
    """Each worker's weighted kappa against the other workers' majority, outliers flagged;
    lowest kappa first."""
    by_item = _choices_by_item(data)
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
    return workers


def without_workers(data: ABData, workers: set[int]) -> ABData:
    """The judgments of every other worker (automatic ties stay)."""
    keep = data.automatic | ~np.isin(data.worker, sorted(workers))
    return ABData(
        subject=data.subject,
        item=data.item[keep],
        worker=data.worker[keep],
        system_a=data.system_a[keep],
        system_b=data.system_b[keep],
        choice=data.choice[keep],
        automatic=data.automatic[keep],
        automatic_weight=data.automatic_weight,
    )


def chateval_section(
    data: ABData, params: dict, workers: list[dict] | None = None, analysed: ABData | None = None
) -> dict:
    """The section: ``workers`` are ``worker_agreement(data, params)`` (computed when not
    given) and ``analysed`` the judgments the baselines count (``data`` without the
    outliers' judgments when ``remove_outliers``)."""
    if workers is None:
        workers = worker_agreement(data, params)
    outliers = {row["worker_id"] for row in workers if row["outlier"]}
    if analysed is None:
        analysed = without_workers(data, outliers) if params["remove_outliers"] else data
    by_item = _choices_by_item(data)
    return {
        "baselines": _baselines(analysed, params),
        "kappa": _pair_kappa(by_item, set()),
        "kappa_without_outliers": _pair_kappa(by_item, outliers),
        "workers": workers,
        "outliers": len(outliers),
        "removed_outliers": bool(params["remove_outliers"]),
        "removed_judgments": int(len(data.choice) - len(analysed.choice)),
    }
