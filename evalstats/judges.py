"""Automatic judges measured against human annotators.

For items judged both by humans and by an automatic judge (an LLM with a rubric):

* :func:`kappa_with_majority`: Cohen's kappa between the judge and the human majority label
  of each item (optionally weighted, for ordinal labels);
* :func:`alpha_with_judge`: Krippendorff's alpha of the humans alone and with the judge as
  one more coder (does adding the judge lower agreement?);
* :func:`ranking_correlation`: Spearman's rho and Kendall's tau-b between the system rankings
  by human and by judge scores (systems ranked by their mean score over conversations), with
  bootstrap intervals that resample conversations within each system;
* :func:`convergence`: the correlation of a ranking built from n dialogues per system with a
  target ranking, as n grows (bipartite-play, Sato et al., 2022, section 5: how many
  dialogues the ranking needs to converge);
* :func:`bradley_terry_comparison`: for pairwise battles (an arena), the Bradley-Terry
  ratings from the human verdicts and from the judge's on the same battles, and the rank
  correlation of the two.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from evalstats.agreement import (
    CohenKappaResult,
    KrippendorffAlphaResult,
    cohen_kappa,
    krippendorff_alpha,
)
from evalstats.bradley_terry import fit_bradley_terry
from evalstats.pairwise import win_count_matrices

__all__ = [
    "BradleyTerryComparison",
    "ConvergencePoint",
    "JudgeAlpha",
    "JudgeKappa",
    "RankingCorrelation",
    "alpha_with_judge",
    "bradley_terry_comparison",
    "convergence",
    "kappa_with_majority",
    "ranking_correlation",
    "system_mean",
]

Level = Literal["nominal", "ordinal", "interval"]


@dataclass(frozen=True)
class JudgeKappa:
    """Kappa of the judge against the human majority over ``kappa.n_items`` items;
    ``n_tied_majority`` items had no single majority label and were left out, ``n_missing``
    items lacked a human or a judge label. ``observed`` is the raw agreement on the same
    items: the share where the judge's label is the majority's (NaN without items)."""

    kappa: CohenKappaResult
    n_tied_majority: int
    n_missing: int
    observed: float = math.nan


def kappa_with_majority(
    human_labels: Mapping[Hashable, Sequence[Hashable]],
    judge_labels: Mapping[Hashable, Hashable],
    *,
    labels: Sequence[Hashable] | None = None,
    weights: Literal["linear", "quadratic"] | None = None,
) -> JudgeKappa:
    """Cohen's kappa between the judge and the majority of the human labels of each item.

    Items where the most frequent human labels tie are left out (no majority to compare
    with). ``labels`` orders the label set for weighted kappa, as in
    :func:`evalstats.agreement.cohen_kappa` (scikit-learn's ``cohen_kappa_score``).
    """
    majority, judge = [], []
    tied = missing = 0
    for item in sorted(set(human_labels) | set(judge_labels), key=repr):
        given = human_labels.get(item, ())
        if not given or item not in judge_labels:
            missing += 1
            continue
        (top, top_count), *rest = Counter(given).most_common() + [(None, 0)]
        if rest and rest[0][1] == top_count:
            tied += 1
            continue
        majority.append(top)
        judge.append(judge_labels[item])
    kappa = cohen_kappa(majority, judge, labels=labels, weights=weights)
    # On kappa's items: those whose labels are in the label set.
    known = set(labels) if labels is not None else None
    pairs = [
        (m, j) for m, j in zip(majority, judge, strict=True) if known is None or {m, j} <= known
    ]
    observed = sum(m == j for m, j in pairs) / len(pairs) if pairs else math.nan
    return JudgeKappa(kappa, tied, missing, observed)


@dataclass(frozen=True)
class JudgeAlpha:
    """Alpha among the humans, and with the judge as one more coder, on the same items:
    those with at least two human values and a judge value (``n_items``)."""

    humans: KrippendorffAlphaResult
    with_judge: KrippendorffAlphaResult
    n_items: int = 0


def alpha_with_judge(
    human_labels: Mapping[Hashable, Mapping[Hashable, Hashable]],
    judge_labels: Mapping[Hashable, Hashable],
    level: Level = "nominal",
) -> JudgeAlpha:
    """Krippendorff's alpha of the human coders, then with the judge added as a coder.

    ``human_labels`` maps item -> {annotator: value}. Nominal values may be any hashable
    (they are coded); ordinal and interval values must be numbers. Both alphas are computed
    on the same items, those with at least two human values and a judge value: an item with
    one human value does not enter the humans' alpha, and letting it enter the alpha with
    the judge (where the judge's value pairs it) would compare the two on different items.
    Raises ValueError when no item has two human values and a judge value.
    """
    items = sorted(
        (i for i, by in human_labels.items() if len(by) >= 2 and i in judge_labels), key=repr
    )
    if not items:
        raise ValueError("no item has two human values and a judge value")
    annotators = sorted({a for i in items for a in human_labels[i]}, key=repr)
    values = [v for i in items for v in human_labels[i].values()] + [judge_labels[i] for i in items]
    if level == "nominal":
        codes = {value: float(k) for k, value in enumerate(dict.fromkeys(values))}
    else:
        codes = {value: float(value) for value in values}
    matrix = np.full((len(annotators) + 1, len(items)), np.nan)
    row_of = {annotator: r for r, annotator in enumerate(annotators)}
    for column, item in enumerate(items):
        for annotator, value in human_labels[item].items():
            matrix[row_of[annotator], column] = codes[value]
        matrix[-1, column] = codes[judge_labels[item]]
    return JudgeAlpha(
        humans=krippendorff_alpha(matrix[:-1], level),
        with_judge=krippendorff_alpha(matrix, level),
        n_items=len(items),
    )


# --- rankings ------------------------------------------------------------------------------

# Decimals a system's mean is rounded to: systems tied in exact arithmetic are tied, whatever
# order their scores were summed in (scores are ratings or shares, far coarser than this).
MEAN_DECIMALS = 12


def system_mean(scores: Iterable[float]) -> float:
    """A system's mean score, the one figure its rank, the tables and the correlations use:
    the exactly rounded sum (``math.fsum``, which does not depend on the order of the
    scores) over their number, rounded to ``MEAN_DECIMALS`` decimals."""
    values = [float(v) for v in scores]
    if not values:
        raise ValueError("a mean needs at least one score")
    return round(math.fsum(values) / len(values), MEAN_DECIMALS)


@dataclass(frozen=True)
class RankingCorrelation:
    """Rank correlation of the systems' mean human and judge scores, with bootstrap intervals.

    ``human_means``/``judge_means`` are aligned with ``systems`` (:func:`system_mean` over
    the conversations both scored): the correlations are scipy's Spearman and Kendall tau-b
    on exactly these numbers. Bounds are NaN when a resample leaves no variation (e.g. fewer
    than three systems).
    """

    systems: tuple[str, ...]
    human_means: tuple[float, ...]
    judge_means: tuple[float, ...]
    spearman: float
    spearman_low: float
    spearman_high: float
    kendall: float
    kendall_low: float
    kendall_high: float
    confidence_level: float
    n_resamples: int
    method: str


def _spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho along the last axis: Pearson's r of average ranks (as scipy)."""
    rx = stats.rankdata(x, axis=-1) - (x.shape[-1] + 1) / 2
    ry = stats.rankdata(y, axis=-1) - (y.shape[-1] + 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(-1) / np.sqrt((rx * rx).sum(-1) * (ry * ry).sum(-1))


def _kendall(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b along the last axis (scipy's default variant), by pair signs."""
    i, j = np.triu_indices(x.shape[-1], k=1)
    dx = np.sign(x[..., i] - x[..., j])
    dy = np.sign(y[..., i] - y[..., j])
    with np.errstate(invalid="ignore", divide="ignore"):
        return (dx * dy).sum(-1) / np.sqrt((dx * dx).sum(-1) * (dy * dy).sum(-1))


def _paired_scores(
    human_scores: Mapping[str, Mapping[Hashable, float]],
    judge_scores: Mapping[str, Mapping[Hashable, float]],
) -> tuple[tuple[str, ...], list[np.ndarray], list[np.ndarray]]:
    """Per system, human and judge scores of the conversations both scored."""
    systems = tuple(sorted(set(human_scores) & set(judge_scores)))
    humans, judges = [], []
    for system in systems:
        shared = sorted(set(human_scores[system]) & set(judge_scores[system]), key=repr)
        if not shared:
            raise ValueError(f"system {system!r} has no conversation scored by both")
        humans.append(np.array([human_scores[system][c] for c in shared], dtype=float))
        judges.append(np.array([judge_scores[system][c] for c in shared], dtype=float))
    if len(systems) < 2:
        raise ValueError(f"a ranking correlation needs at least two systems, got {len(systems)}")
    return systems, humans, judges


def ranking_correlation(
    human_scores: Mapping[str, Mapping[Hashable, float]],
    judge_scores: Mapping[str, Mapping[Hashable, float]],
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 2_000,
    method: Literal["percentile", "basic", "BCa"] = "percentile",
    rng: int | np.random.Generator = 0,
) -> RankingCorrelation:
    """Spearman and Kendall correlation of the system rankings by humans and by the judge.

    ``*_scores`` map system -> {conversation: score}; only conversations scored by both are
    used, and a system's score is its mean. The interval comes from
    ``scipy.stats.bootstrap`` with one sample per system, so conversations are resampled
    within each system (the same resample for the human and the judge score of a
    conversation); both correlations are computed on the same resamples. The bounds are NaN
    when a system has fewer than two conversations scored by both.
    """
    systems, humans, judges = _paired_scores(human_scores, judge_scores)
    human_means = np.array([system_mean(h) for h in humans])
    judge_means = np.array([system_mean(j) for j in judges])

    def statistic_of(correlation):
        def statistic(*indices, axis=-1):
            human = np.stack(
                [
                    np.moveaxis(h[i], axis, -1).mean(-1)
                    for h, i in zip(humans, indices, strict=True)
                ],
                axis=-1,
            )
            judge = np.stack(
                [
                    np.moveaxis(j[i], axis, -1).mean(-1)
                    for j, i in zip(judges, indices, strict=True)
                ],
                axis=-1,
            )
            # Rounded as system_mean rounds, so that tied resampled means stay tied.
            return correlation(np.round(human, MEAN_DECIMALS), np.round(judge, MEAN_DECIMALS))

        return statistic

    bounds = {"spearman": (np.nan, np.nan), "kendall": (np.nan, np.nan)}
    if min(h.size for h in humans) < 2:
        # A system scored on one conversation cannot be resampled: no interval.
        correlations = ()
    else:
        correlations = (("spearman", _spearman), ("kendall", _kendall))
    for name, correlation in correlations:
        seed = rng if isinstance(rng, int) else rng.integers(2**63)
        # The same seed for both statistics: the same resamples of conversations.
        result = stats.bootstrap(
            tuple(np.arange(h.size) for h in humans),
            statistic_of(correlation),
            n_resamples=n_resamples,
            vectorized=True,
            paired=False,
            confidence_level=confidence_level,
            method=method,
            rng=seed,
        )
        bounds[name] = (
            float(result.confidence_interval.low),
            float(result.confidence_interval.high),
        )
    return RankingCorrelation(
        systems=systems,
        human_means=tuple(float(v) for v in human_means),
        judge_means=tuple(float(v) for v in judge_means),
        spearman=float(_spearman(human_means, judge_means)),
        spearman_low=bounds["spearman"][0],
        spearman_high=bounds["spearman"][1],
        kendall=float(_kendall(human_means, judge_means)),
        kendall_low=bounds["kendall"][0],
        kendall_high=bounds["kendall"][1],
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        method=method,
    )


@dataclass(frozen=True)
class ConvergencePoint:
    """Correlation with the target ranking using ``n_dialogues`` dialogues per system,
    over ``n_repeats`` random subsets: mean and 2.5 / 97.5 percentiles."""

    n_dialogues: int
    spearman_mean: float
    spearman_low: float
    spearman_high: float
    kendall_mean: float
    kendall_low: float
    kendall_high: float
    n_repeats: int


def _summary(values: np.ndarray) -> tuple[float, float, float]:
    """Mean, 2.5 and 97.5 percentiles of the defined values; NaN when none is (every
    subset tied, e.g. a judge that gives every system the same score)."""
    defined = values[~np.isnan(values)]
    if not defined.size:
        return (math.nan, math.nan, math.nan)
    low, high = np.percentile(defined, [2.5, 97.5])
    return (float(defined.mean()), float(low), float(high))


def convergence(
    scores: Mapping[str, Sequence[float]],
    target: Mapping[str, float],
    sizes: Sequence[int],
    *,
    n_repeats: int = 200,
    rng: int | np.random.Generator = 0,
) -> tuple[ConvergencePoint, ...]:
    """How the ranking from n dialogues per system approaches ``target`` as n grows.

    ``scores`` are the per-dialogue scores of each system (e.g. the judge's), ``target`` the
    reference score per system (e.g. the human mean on all dialogues). For each n in
    ``sizes``, ``n_repeats`` times: draw n dialogues per system without replacement, rank the
    systems by their mean, correlate with the target ranking. NaN correlations (a subset
    with all means tied) are left out of the summaries.
    """
    systems = sorted(set(scores) & set(target))
    if len(systems) < 2:
        raise ValueError(f"convergence needs at least two systems, got {len(systems)}")
    samples = [np.asarray(scores[s], dtype=float) for s in systems]
    smallest = min(sample.size for sample in samples)
    reference = np.array([target[s] for s in systems], dtype=float)
    generator = np.random.default_rng(rng)
    points = []
    for n in sizes:
        if not 1 <= n <= smallest:
            raise ValueError(f"size {n} must be between 1 and {smallest} dialogues per system")
        # Random subsets without replacement: the first n of a random permutation per repeat.
        means = np.stack(
            [
                np.take_along_axis(
                    np.broadcast_to(sample, (n_repeats, sample.size)),
                    generator.permuted(np.tile(np.arange(sample.size), (n_repeats, 1)), axis=1)[
                        :, :n
                    ],
                    axis=1,
                ).mean(axis=1)
                for sample in samples
            ],
            axis=-1,
        )
        spearman = _summary(_spearman(means, np.broadcast_to(reference, means.shape)))
        kendall = _summary(_kendall(means, np.broadcast_to(reference, means.shape)))
        points.append(ConvergencePoint(int(n), *spearman, *kendall, n_repeats=n_repeats))
    return tuple(points)


# --- Bradley-Terry ratings of pairwise battles ------------------------------------------------

# Decimals ratings are rounded to before ranking: systems the fit leaves equal stay tied.
RATING_DECIMALS = 9


@dataclass(frozen=True)
class BradleyTerryComparison:
    """Bradley-Terry ratings (Elo-like scale, mean 1000) of the same battles from the human
    verdicts and from the judge's, aligned with the system indices, and Spearman's rho and
    Kendall's tau-b between them (scipy's, on the ratings rounded to ``RATING_DECIMALS``;
    NaN when one side rates every system alike). ``warnings`` come from the fits (virtual
    ties added where a system never lost or never won)."""

    human_ratings: np.ndarray
    judge_ratings: np.ndarray
    spearman: float
    kendall: float
    n_battles: int
    warnings: tuple[str, ...]


def bradley_terry_comparison(
    system_a: Sequence[int],
    system_b: Sequence[int],
    human_outcome: Sequence[int],
    judge_outcome: Sequence[int],
    n_systems: int,
    *,
    labels: Sequence[str] | None = None,
) -> BradleyTerryComparison:
    """Fit Bradley-Terry to the same battles twice: with the humans' outcomes and with the
    judge's (``evalstats.pairwise`` codes: ``A_WINS``, ``B_WINS``, ``TIE``, a tie half a win
    each way, as the arena's leaderboard counts it), and correlate the two ratings."""
    if not len(system_a) == len(system_b) == len(human_outcome) == len(judge_outcome):
        raise ValueError("every battle needs its two systems and both outcomes")
    if n_systems < 2:
        raise ValueError(f"a comparison of ratings needs at least two systems, got {n_systems}")
    fits = []
    for outcome in (human_outcome, judge_outcome):
        wins, ties = win_count_matrices(system_a, system_b, outcome, n_systems)
        fits.append(fit_bradley_terry(wins, ties, labels=labels))
    human, judge = (np.round(fit.ratings, RATING_DECIMALS) for fit in fits)
    return BradleyTerryComparison(
        human_ratings=human,
        judge_ratings=judge,
        spearman=float(_spearman(human, judge)),
        kendall=float(_kendall(human, judge)),
        n_battles=len(system_a),
        warnings=tuple(dict.fromkeys(w for fit in fits for w in fit.warnings)),
    )
