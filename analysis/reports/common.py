"""Parts every report kind shares: the ranking (pairwise table, TrueSkill clusters,
Bradley-Terry), ranking stability, Krippendorff's alpha, digests and JSON safety."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from evalstats import pairwise as pw
from evalstats import trueskill as ts
from evalstats.agreement import krippendorff_alpha, krippendorff_alpha_bca
from evalstats.bradley_terry import bradley_terry_from_judgments
from evalstats.stability import (
    SubsampleRankings,
    leave_one_out_stability,
    subsample_rankings,
)

from .jsonable import Progress, canonical_digest, json_safe  # noqa: F401  (re-exported)

# Label codes ordered bot < unsure < human, as the win function and the ordinal alpha use.
LABEL_CODE = {"bot": pw.BOT, "unsure": pw.UNSURE, "human": pw.HUMAN}
AB_OUTCOME = {"a": pw.A_WINS, "b": pw.B_WINS, "tie": pw.TIE}
# pairwise codes (a=0, b=1, tie=-1) to trueskill codes (a=+1, b=-1, draw=0)
_TO_TRUESKILL = {pw.A_WINS: ts.A_WINS, pw.B_WINS: ts.B_WINS, pw.TIE: ts.DRAW}
_SIGNIFICANCE = 0.05


def category_codes(values: np.ndarray, codes: Mapping[str, int]) -> np.ndarray:
    """Each value's code as int64 (array operations, no Python call per entry); a value
    without a code raises KeyError, as the dict lookup per entry did."""
    coded = np.zeros(values.shape, dtype=np.int64)
    known = np.zeros(values.shape, dtype=bool)
    for value, code in codes.items():
        matches = values == value
        coded[matches] = code
        known |= matches
    if not known.all():
        raise KeyError(str(values[~known][0]))
    return coded


def report_progress(progress: Progress | None, text: str) -> None:
    if progress is not None:
        progress(text)


@dataclass(frozen=True)
class Matches:
    """Decisive-or-tied comparisons between two systems (indices into ``names``)."""

    names: list[str]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray  # pairwise codes
    conversation: np.ndarray  # what the stability analysis subsamples


def ranking_section(matches: Matches, params: dict, warnings: list[str]):
    """Pairwise table, TrueSkill clusters and Bradley-Terry fit, oriented best first."""
    n = len(matches.names)
    pairwise = pw.pairwise_comparison(
        matches.a,
        matches.b,
        matches.outcome,
        n,
        test=params["pair_test"],
        correction=params["correction"],
    )
    bootstrap = _trueskill_bootstrap(matches, params, warnings)
    order = (
        [int(p) for p in bootstrap.order]
        if bootstrap is not None
        else sorted(range(n), key=lambda i: (-_nan_low(pairwise.system_win_rate[i]), i))
    )
    ranking = []
    if bootstrap is not None:
        for p in order:
            ranking.append(
                {
                    "system": matches.names[p],
                    "win_rate": pairwise.system_win_rate[p],
                    "mu": bootstrap.mean_mu[p],
                    "sigma": float(bootstrap.sigma[:, p].mean()),
                    "rank_range": [int(bootstrap.rank_lower[p]), int(bootstrap.rank_upper[p])],
                    "cluster": int(bootstrap.cluster[p]),
                }
            )
    pairs = _pairwise_rows(pairwise, matches.names, order)
    bradley_terry = _bradley_terry_rows(matches, params, warnings)
    return [matches.names[p] for p in order], pairs, ranking, bradley_terry


def _trueskill_outcomes(outcome: np.ndarray) -> np.ndarray:
    """Pairwise outcome codes as TrueSkill's (array operations, no Python call per match)."""
    outcome = np.asarray(outcome)
    converted = np.empty(outcome.shape, dtype=np.int8)
    known = np.zeros(outcome.shape, dtype=bool)
    for code, trueskill_code in _TO_TRUESKILL.items():
        converted[outcome == code] = trueskill_code
        known |= outcome == code
    if not known.all():
        raise ValueError("unknown pairwise outcome code")
    return converted


def _trueskill_bootstrap(matches: Matches, params: dict, warnings: list[str]):
    """The TrueSkill bootstrap (rank ranges, clusters), or None with a warning."""
    ts_outcome = _trueskill_outcomes(matches.outcome)
    setting = {"resample": True, "coverage": params["coverage"]}
    if params["trueskill"] == "released-code":
        setting = {"env": ts.TrueSkillEnv.as_released(), "resample": False, "coverage": 0.995}
    try:
        return ts.trueskill_bootstrap(
            matches.a,
            matches.b,
            ts_outcome,
            n_players=len(matches.names),
            n_replicates=params["replicates"],
            seed=params["seed"],
            **setting,
        )
    except ValueError as error:
        warnings.append(f"No TrueSkill ranking: {error}.")
        return None


def _pairwise_rows(pairwise, names: list[str], order: list[int]) -> list[dict]:
    """One row per compared pair, the better-ranked system as ``a``, in ranking order."""
    position = {system: rank for rank, system in enumerate(order)}
    pairs = []
    for k, (i, j) in enumerate(pairwise.pairs):
        i, j = int(i), int(j)
        wins_i, wins_j, rate_i = pairwise.wins_a[k], pairwise.wins_b[k], pairwise.win_rate_a[k]
        if position[j] < position[i]:
            i, j, wins_i, wins_j, rate_i = j, i, wins_j, wins_i, 1.0 - rate_i
        pairs.append(
            {
                "a": names[i],
                "b": names[j],
                "wins_a": int(wins_i),
                "wins_b": int(wins_j),
                "ties": int(pairwise.ties[k]),
                "win_rate_a": rate_i,
                "p_value": pairwise.p_value[k],
                "p_adjusted": pairwise.p_adjusted[k],
            }
        )
    place = {names[p]: rank for p, rank in position.items()}
    pairs.sort(key=lambda row: (place[row["a"]], place[row["b"]]))
    return pairs


def _bradley_terry_rows(matches: Matches, params: dict, warnings: list[str]) -> list[dict]:
    """The Bradley-Terry ratings with bootstrap intervals, best rank first."""
    bt = bradley_terry_from_judgments(
        matches.a,
        matches.b,
        matches.outcome,
        len(matches.names),
        n_bootstrap=params["bt_bootstrap"],
        confidence=params["coverage"],
        seed=params["seed"],
        labels=matches.names,
    )
    warnings.extend(f"Bradley-Terry: {message}" for message in bt.warnings)
    return sorted(
        (
            {
                "system": matches.names[p],
                "rating": bt.ratings[p],
                "ci": [bt.confidence_interval.low[p], bt.confidence_interval.high[p]],
                "rank": int(bt.ranks[p]),
            }
            for p in range(len(matches.names))
        ),
        key=lambda row: (row["rank"], -row["rating"]),
    )


def _nan_low(value: float) -> float:
    return -math.inf if math.isnan(value) else value


@dataclass(frozen=True)
class StabilityPart:
    """What ``stability_subsamples`` computed: the ranked subsamples (None when there is no
    stability analysis), the leave-one-out rows and the warnings."""

    subsamples: SubsampleRankings | None
    leave_one_out: list[dict]
    warnings: list[str]


def stability_subsamples(matches: Matches, params: dict) -> StabilityPart:
    """The costly part of the stability section: the reference ranking, every subsample
    ranked, and the leave-one-out analyses when asked for. It needs nothing else of the
    report, so it can be computed beside the rest of it (``analysis.runs.background``)."""
    # Integer codes, not a Python object per judgment: the unordered pair of each match, and
    # the distinct (pair, conversation) combinations counted per pair.
    n_systems = len(matches.names)
    pair_id = np.minimum(matches.a, matches.b) * n_systems + np.maximum(matches.a, matches.b)
    _, conversation_index = np.unique(matches.conversation, return_inverse=True)
    n_conversations = int(conversation_index.max(initial=-1)) + 1
    pair_conversations = np.unique(pair_id * n_conversations + conversation_index.ravel())
    _, conversations_per_pair = np.unique(pair_conversations // n_conversations, return_counts=True)
    if conversations_per_pair.size < 2:
        return StabilityPart(
            None, [], ["No stability analysis: it needs at least two pairs of systems."]
        )
    # Pairs never compared (e.g. bipartite-play) are simply absent from every subsample.
    fewest = int(conversations_per_pair.min())
    if fewest < 2:
        return StabilityPart(
            None, [], ["No stability analysis: a pair of systems has a single conversation."]
        )
    grid = sorted(
        {int(round(x)) for x in np.linspace(1, fewest, params["stability_points"] + 1)[1:]}
    )
    options = {
        "n_subsamples": params["stability_subsamples"],
        "n_replicates": params["stability_replicates"],
        "seed": params["seed"],
        "coverage": params["coverage"],
        "precision": params["stability_precision"],
    }
    args = (
        matches.a,
        matches.b,
        _trueskill_outcomes(matches.outcome),
        matches.conversation,
        pair_id,
        grid,
    )
    try:
        # Drawing each point to a precision needs the reference ranking first: the TrueSkill
        # bootstrap of all the matches with the replicates, seed and coverage of the ranking
        # section, and EvalHub's TrueSkill setting, the one the subsamples are ranked with
        # (the ranking section's clusters unless trueskill="released-code").
        subsamples = subsample_rankings(*args, **options, reference_replicates=params["replicates"])
    except ValueError as error:
        return StabilityPart(None, [], [f"No stability analysis: {error}."])
    leave_one_out = []
    if params["leave_one_out"] and len(matches.names) > 2:
        for entry in leave_one_out_stability(
            *args, **options, reference_replicates=params["replicates"]
        ):
            leave_one_out.append(
                {
                    "left_out": matches.names[entry.left_out],
                    "n_conversations": entry.stability.n_conversations,
                    "share_reproduced": entry.stability.share_reproduced,
                    "reproduced_low": entry.stability.reproduced_low,
                    "reproduced_high": entry.stability.reproduced_high,
                    "subsamples_drawn": entry.stability.n_drawn,
                    "keeps_full_ranking": entry.keeps_full_ranking,
                }
            )
    return StabilityPart(subsamples, leave_one_out, [])


def stability_section(
    matches: Matches,
    params: dict,
    warnings: list[str],
    part: StabilityPart,
) -> dict:
    """How often subsamples of n conversations per pair reproduce the cluster ranking.

    ``part`` is ``stability_subsamples``' result: the subsamples ranked, each grid point
    drawn until its share is known to ``stability_precision``, against the reference
    ranking rated with them (the TrueSkill bootstrap of all the matches with the ranking
    section's replicates, seed and coverage, in EvalHub's TrueSkill setting as the
    subsamples).
    """
    warnings.extend(part.warnings)
    if part.subsamples is None:
        return {}
    result = part.subsamples.against(part.subsamples.reference)
    short = [
        int(n)
        for n, low, high, share in zip(
            result.n_conversations,
            result.reproduced_low,
            result.reproduced_high,
            result.share_reproduced,
            strict=True,
        )
        if max(share - low, high - share) > result.precision
    ]
    if short:
        warnings.append(
            f"Stability at {', '.join(map(str, short))} conversations per pair: "
            f"{result.n_subsamples} subsamples (stability_subsamples) do not pin the share "
            f"down to ±{result.precision}."
        )
    return {
        "n_conversations": result.n_conversations,
        "share_reproduced": result.share_reproduced,
        "reproduced_low": result.reproduced_low,
        "reproduced_high": result.reproduced_high,
        "share_modal": result.share_modal,
        "reference": [[matches.names[p] for p in cluster] for cluster in result.reference],
        "subsamples": result.n_subsamples,
        "subsamples_drawn": result.n_drawn,
        "precision": result.precision,
        "replicates": result.n_replicates,
        "leave_one_out": part.leave_one_out,
    }


def alpha_section(units: Mapping[object, list[int]], params: dict, warnings: list[str]):
    """Krippendorff's alpha over units coded at least twice (slots x units matrix).

    Rows are "first, second, ... value of the unit", not workers: alpha only pairs values
    within a unit from different coders, so the slot a value sits in does not matter, and the
    matrix stays (redundancy x units) however many workers there are.
    """
    coded = [values for values in units.values() if len(values) >= 2]
    if len(coded) < 2:
        return None
    width = max(len(values) for values in coded)
    matrix = np.full((width, len(coded)), np.nan)
    for column, values in enumerate(coded):
        matrix[: len(values), column] = values
    nominal = krippendorff_alpha(matrix, "nominal")
    if math.isnan(nominal.statistic):
        return {
            "nominal": {"alpha": None, "low": None, "high": None, "units": len(coded)},
            "ordinal": {"alpha": None},
        }
    interval = krippendorff_alpha_bca(
        matrix, "nominal", n_resamples=params["alpha_resamples"], rng=params["seed"]
    )
    if interval.n_undefined_resamples:
        warnings.append(
            f"Krippendorff's alpha: {interval.n_undefined_resamples} resamples without "
            "variation, no interval."
        )
    return {
        "nominal": {
            "alpha": nominal.statistic,
            "low": interval.low,
            "high": interval.high,
            "units": len(coded),
        },
        "ordinal": {"alpha": krippendorff_alpha(matrix, "ordinal").statistic},
    }
