"""Inter-annotator agreement statistics for human chatbot evaluations.

* :func:`label_cooccurrence_agreement`: the per-system, per-label agreement of Spot The Bot
  (Deriu et al., 2020, "On Inter-Annotator Agreement", Table 3).
* :func:`cohen_kappa`: Cohen's (1960) kappa and Cohen's (1968) weighted kappa for two raters,
  as used by ChatEval for its A/B tests.
* :func:`krippendorff_alpha`: Krippendorff's alpha for nominal, ordinal and interval data,
  computed from the coincidence matrix as in Krippendorff (2011), "Computing Krippendorff's
  Alpha-Reliability".
* :func:`krippendorff_alpha_bca`: a bias-corrected and accelerated bootstrap interval for
  alpha that resamples units, as reported for every label by ABC-Eval (Finch et al., 2023,
  Figure 1: "BCa confidence intervals with k=10,000 Monte Carlo case resamples").
* :func:`binary_label_agreement`: ABC-Eval style per-label alpha with its BCa interval for
  binary turn labels.

All functions are pure numpy/scipy: no I/O, no Django. Undefined statistics (no variation,
no data) are ``nan`` as in scipy, except where documented otherwise.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import special

__all__ = [
    "AlphaBootstrapResult",
    "BinaryLabelAgreement",
    "BinaryTurnJudgment",
    "CohenKappaResult",
    "EntityJudgment",
    "KrippendorffAlphaResult",
    "LabelCooccurrence",
    "binary_label_agreement",
    "cohen_kappa",
    "krippendorff_alpha",
    "krippendorff_alpha_bca",
    "label_cooccurrence_agreement",
]

Level = Literal["nominal", "ordinal", "interval"]
_LEVELS = ("nominal", "ordinal", "interval")
SPOT_THE_BOT_LABELS = ("human", "bot", "unsure")

# Bootstrap resamples are evaluated in batches of at most this many (resample x unit)
# multiplicity entries, so memory stays bounded whatever the number of units.
_MAX_BATCH_CELLS = 4_000_000


# --- Spot The Bot: label co-occurrence ---------------------------------------------------------


@dataclass(frozen=True)
class EntityJudgment:
    """One annotator's verdict on one speaker (entity) of one annotated unit.

    ``unit`` identifies what an annotator was shown (in Spot The Bot: one segment of one
    conversation), ``speaker`` the entity within it, ``system`` the system behind that
    speaker (e.g. "human" for the speakers of human-human conversations).
    """

    unit: Hashable
    speaker: Hashable
    system: str
    annotator: Hashable
    label: str


@dataclass(frozen=True)
class LabelCooccurrence:
    r"""Share of annotator pairs that both gave ``label`` when at least one did.

    .. math:: \mathrm{share} = \frac{\#\{\text{pairs: both gave } l\}}
                                    {\#\{\text{pairs: at least one gave } l\}}

    ``share`` is ``nan`` when no pair used the label.
    """

    system: str
    label: str
    n_pairs_with_label: int
    n_pairs_both: int
    share: float


def _labels_by_entity(
    judgments: Iterable[EntityJudgment], labels: Sequence[str]
) -> dict[tuple[Hashable, Hashable], tuple[str, dict[Hashable, str]]]:
    known_labels = set(labels)
    entities: dict[tuple[Hashable, Hashable], tuple[str, dict[Hashable, str]]] = {}
    for judgment in judgments:
        if judgment.label not in known_labels:
            raise ValueError(f"unknown label {judgment.label!r}; expected one of {labels}")
        key = (judgment.unit, judgment.speaker)
        system, by_annotator = entities.setdefault(key, (judgment.system, {}))
        if system != judgment.system:
            raise ValueError(
                f"speaker {key} is attributed to both {system!r} and {judgment.system!r}"
            )
        if judgment.annotator in by_annotator:
            raise ValueError(f"annotator {judgment.annotator!r} judged speaker {key} twice")
        by_annotator[judgment.annotator] = judgment.label
    return entities


def label_cooccurrence_agreement(
    judgments: Iterable[EntityJudgment], labels: Sequence[str] = SPOT_THE_BOT_LABELS
) -> tuple[LabelCooccurrence, ...]:
    """Spot The Bot's agreement per system and label (Deriu et al., 2020, Table 3).

    The paper computes, "per bot and label, the percentage of cases where both annotators
    annotate the label if one of them does", over entities judged by two annotators.

    Counting: judgments are grouped by (unit, speaker). Every unordered pair of distinct
    annotators of the same (unit, speaker) is one case, so an entity judged by ``m``
    annotators contributes ``m(m-1)/2`` pairs (one pair when ``m = 2``, as in the paper) and
    an entity judged once contributes nothing. For each label, a pair is counted in the
    denominator if at least one of the two gave the label and in the numerator if both did.
    Pairs are pooled over all units of a system; the paper's Table 3 further averages the
    shares over domains and segment lengths, which callers do by calling this per stratum.

    Returns one entry per (system, label) for every system with at least one pair, sorted
    by system and then in the order of ``labels``. Raises ValueError for an unknown label,
    an annotator judging the same speaker twice, or a speaker attributed to two systems.
    """
    with_label: dict[tuple[str, str], int] = defaultdict(int)
    both: dict[tuple[str, str], int] = defaultdict(int)
    systems_with_pairs: set[str] = set()
    for system, by_annotator in _labels_by_entity(judgments, labels).values():
        for first, second in itertools.combinations(by_annotator.values(), 2):
            systems_with_pairs.add(system)
            with_label[system, first] += 1
            if second != first:
                with_label[system, second] += 1
            else:
                both[system, first] += 1
    return tuple(
        LabelCooccurrence(
            system=system,
            label=label,
            n_pairs_with_label=with_label[system, label],
            n_pairs_both=both[system, label],
            share=(
                both[system, label] / with_label[system, label]
                if with_label[system, label]
                else math.nan
            ),
        )
        for system in sorted(systems_with_pairs)
        for label in labels
    )


# --- Cohen's kappa -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CohenKappaResult:
    r"""Cohen's kappa of two raters.

    .. math:: \kappa = 1 - \frac{\sum_{ij} w_{ij} O_{ij}}{\sum_{ij} w_{ij} E_{ij}},
              \qquad E_{ij} = \frac{O_{i\cdot}\, O_{\cdot j}}{N}

    with ``O`` the confusion matrix over the label set and weights :math:`w_{ij} = [i \ne j]`
    (unweighted, Cohen 1960), :math:`|i - j|` (linear) or :math:`(i - j)^2` (quadratic,
    Cohen 1968), ``i, j`` being positions in the ordered label set.

    Attributes: ``statistic`` (``nan`` when undefined), ``n_items`` (pairs of ratings used),
    ``weights`` (None, "linear" or "quadratic").
    """

    statistic: float
    n_items: int
    weights: Literal["linear", "quadratic"] | None


def cohen_kappa(
    rater_a: Sequence[Hashable],
    rater_b: Sequence[Hashable],
    *,
    labels: Sequence[Hashable] | None = None,
    weights: Literal["linear", "quadratic"] | None = None,
) -> CohenKappaResult:
    """Cohen's kappa, optionally weighted, between two raters of the same items.

    ``labels`` gives the ordered label set (its order sets the weights); items where either
    rating is outside it are ignored. By default it is the sorted union of both raters'
    labels. Same definition and conventions as scikit-learn's ``cohen_kappa_score``; the
    statistic is ``nan`` when there is no item or no chance disagreement (a single label).
    """
    if len(rater_a) != len(rater_b):
        raise ValueError(f"raters have {len(rater_a)} and {len(rater_b)} ratings")
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    label_order = sorted(set(rater_a) | set(rater_b)) if labels is None else list(labels)
    position = {label: i for i, label in enumerate(label_order)}
    pairs = [
        (position[a], position[b])
        for a, b in zip(rater_a, rater_b, strict=True)
        if a in position and b in position
    ]
    n_labels = len(label_order)
    confusion = np.zeros((n_labels, n_labels))
    if pairs:
        np.add.at(confusion, tuple(np.array(pairs).T), 1)
    return CohenKappaResult(
        statistic=_kappa_from_confusion(confusion, weights), n_items=len(pairs), weights=weights
    )


def _kappa_from_confusion(
    confusion: np.ndarray, weights: Literal["linear", "quadratic"] | None
) -> float:
    n_items = confusion.sum()
    if n_items == 0:
        return math.nan
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / n_items
    positions = np.arange(confusion.shape[0])
    distance = np.abs(positions[:, None] - positions[None, :]).astype(float)
    if weights is None:
        disagreement_weight = (distance > 0).astype(float)
    elif weights == "linear":
        disagreement_weight = distance
    else:
        disagreement_weight = distance**2
    expected_disagreement = (disagreement_weight * expected).sum()
    if expected_disagreement == 0:
        return math.nan
    return float(1 - (disagreement_weight * confusion).sum() / expected_disagreement)


# --- Krippendorff's alpha ----------------------------------------------------------------------


@dataclass(frozen=True)
class KrippendorffAlphaResult:
    r"""Krippendorff's alpha, :math:`\alpha = 1 - D_o / D_e`.

    From the coincidence matrix :math:`o_{ck} = \sum_u \frac{n_{uck}}{m_u - 1}` (``n_uck``:
    ordered pairs of values ``c, k`` from different coders in unit ``u``, ``m_u`` its number
    of values, units with ``m_u < 2`` left out), :math:`n_c = \sum_k o_{ck}`,
    :math:`n = \sum_c n_c`:

    .. math:: D_o = \frac{1}{n} \sum_{c,k} o_{ck}\, \delta^2_{ck}, \qquad
              D_e = \frac{1}{n(n-1)} \sum_{c,k} n_c n_k\, \delta^2_{ck}

    with :math:`\delta^2_{ck}` = ``[c != k]`` (nominal), :math:`(c - k)^2` (interval) and
    :math:`\big(\sum_{g=c}^{k} n_g - \frac{n_c + n_k}{2}\big)^2` (ordinal). Krippendorff (2011),
    "Computing Krippendorff's Alpha-Reliability", sections B-D.

    Attributes: ``statistic`` (``nan`` when :math:`D_e = 0`, i.e. all pairable values are
    equal), ``level``, ``n_units`` (pairable units), ``n_values`` (pairable values ``n``),
    ``observed_disagreement`` :math:`D_o`, ``expected_disagreement`` :math:`D_e`.
    """

    statistic: float
    level: Level
    n_units: int
    n_values: int
    observed_disagreement: float
    expected_disagreement: float


def _check_level(level: str) -> None:
    if level not in _LEVELS:
        raise ValueError(f"level must be one of {_LEVELS}, got {level!r}")


def _as_reliability_matrix(reliability_data: npt.ArrayLike) -> np.ndarray:
    data = np.asarray(reliability_data, dtype=float)
    if data.ndim != 2:
        raise ValueError(f"reliability data must be raters x units, got shape {data.shape}")
    if np.isinf(data).any():
        raise ValueError("reliability data must be finite or NaN (missing)")
    return data


def _pairable_value_counts(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values (sorted) and, per pairable unit, how many coders gave each value.

    Only units with at least two values are kept: the others cannot form a pair and do not
    enter alpha at all.
    """
    n_units = data.shape[1]
    observed = ~np.isnan(data)
    values, codes = np.unique(data[observed], return_inverse=True)
    # np.nonzero walks the matrix in the same row-major order as the boolean indexing above.
    unit_of_each_value = np.nonzero(observed)[1]
    counts = np.bincount(
        unit_of_each_value * len(values) + codes, minlength=n_units * len(values)
    ).reshape(n_units, len(values))
    return values, counts[counts.sum(axis=1) >= 2].astype(float)


def _unit_coincidences(counts: np.ndarray) -> np.ndarray:
    """Each unit's contribution to the coincidence matrix, shape (units, V, V).

    Unit ``u`` adds ``(n_uc n_uk - [c = k] n_uc) / (m_u - 1)``: the ordered pairs of its values
    taken from different coders, each pair weighted by ``1 / (m_u - 1)``.
    """
    pair_weight = 1.0 / (counts.sum(axis=1) - 1.0)
    pairs = counts[:, :, None] * counts[:, None, :]
    diagonal = np.arange(counts.shape[1])
    pairs[:, diagonal, diagonal] -= counts
    return pairs * pair_weight[:, None, None]


def _total_coincidences(counts: np.ndarray) -> np.ndarray:
    """The coincidence matrix, the sum over units of :func:`_unit_coincidences`.

    Computed as one (V x units) @ (units x V) product rather than materialising every unit's
    matrix.
    """
    weighted = counts / (counts.sum(axis=1, keepdims=True) - 1.0)
    return weighted.T @ counts - np.diag(weighted.sum(axis=0))


def _squared_distances(values: np.ndarray, marginals: np.ndarray, level: Level) -> np.ndarray:
    """The metric difference delta^2 between every pair of values, shape (..., V, V).

    ``marginals`` (..., V) are the n_c; only the ordinal metric depends on them.
    """
    if level == "nominal":
        return 1.0 - np.eye(len(values))
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    # Ordinal: sum_{g=c..k} n_g - (n_c + n_k)/2 is the difference of the "mid-rank" positions
    # cumsum(n)_c - n_c/2 of the two values, which is symmetric and vectorises.
    midranks = np.cumsum(marginals, axis=-1) - marginals / 2
    return (midranks[..., :, None] - midranks[..., None, :]) ** 2


def _alpha_from_coincidences(
    coincidences: np.ndarray, values: np.ndarray, level: Level
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Alpha, D_o and D_e from coincidence matrices of shape (..., V, V), vectorised."""
    marginals = coincidences.sum(axis=-2)
    n_values = marginals.sum(axis=-1)
    distances = _squared_distances(values, marginals, level)
    observed = (coincidences * distances).sum(axis=(-2, -1)) / n_values
    expected = np.einsum("...c,...k,...ck->...", marginals, marginals, distances) / (
        n_values * (n_values - 1)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = np.where(expected > 0, 1 - observed / expected, np.nan)
    return alpha, observed, expected


def krippendorff_alpha(
    reliability_data: npt.ArrayLike, level: Level = "nominal"
) -> KrippendorffAlphaResult:
    """Krippendorff's alpha of a raters x units matrix of numeric codes, NaN for missing.

    Matches ``krippendorff.alpha(reliability_data=..., level_of_measurement=level)``. Any
    number of raters and missing values per unit; units with fewer than two values are
    ignored. Memory is O(V^2) for V distinct values (the coincidence matrix).

    Raises ValueError if no unit has two values.
    """
    _check_level(level)
    values, counts = _pairable_value_counts(_as_reliability_matrix(reliability_data))
    if counts.shape[0] == 0:
        raise ValueError("no unit has values from at least two raters")
    coincidences = _total_coincidences(counts)
    alpha, observed, expected = _alpha_from_coincidences(coincidences, values, level)
    return KrippendorffAlphaResult(
        statistic=float(alpha),
        level=level,
        n_units=counts.shape[0],
        n_values=int(counts.sum()),
        observed_disagreement=float(observed),
        expected_disagreement=float(expected),
    )


@dataclass(frozen=True)
class AlphaBootstrapResult:
    """Krippendorff's alpha with a BCa bootstrap confidence interval over units.

    Attributes
    ----------
    statistic : float
        Alpha on the original data.
    low, high : float
        Bounds of the two-sided BCa interval (``nan`` if it cannot be computed, e.g. when
        some resample or jackknife sample has no variation so that alpha is undefined).
    confidence_level : float
    n_resamples : int
    n_units : int
        Pairable units, the observations that are resampled.
    n_undefined_resamples : int
        Resamples whose alpha is undefined (all values equal); any makes the interval nan.
    standard_error : float
        Sample standard deviation of the bootstrap distribution.
    """

    statistic: float
    low: float
    high: float
    confidence_level: float
    n_resamples: int
    n_units: int
    n_undefined_resamples: int
    standard_error: float


def _resampled_alpha_statistic(unit_coincidences: np.ndarray, values: np.ndarray, level: Level):
    """A scipy-vectorised statistic: alpha of the units whose indices are on the last axis."""
    n_units, n_values, _ = unit_coincidences.shape
    flat_unit_coincidences = unit_coincidences.reshape(n_units, n_values * n_values)

    def alpha_of_units(unit_indices: np.ndarray, axis: int = -1) -> np.ndarray:
        indices = np.moveaxis(np.asarray(unit_indices), axis, -1)
        rows = indices.reshape(-1, indices.shape[-1])
        # Multiplicity of each unit in each resample; a resample's coincidence matrix is the
        # multiplicity-weighted sum of unit contributions, one matrix product for the batch.
        offsets = np.arange(rows.shape[0])[:, None] * n_units
        multiplicity = np.bincount(
            (rows + offsets).ravel(), minlength=rows.shape[0] * n_units
        ).reshape(rows.shape[0], n_units)
        coincidences = (multiplicity @ flat_unit_coincidences).reshape(-1, n_values, n_values)
        alpha, _, _ = _alpha_from_coincidences(coincidences, values, level)
        return alpha.reshape(indices.shape[:-1])

    return alpha_of_units


def _cluster_coincidences(
    data: np.ndarray, clusters: Sequence[Hashable], unit_contributions: np.ndarray
) -> np.ndarray:
    """Sum the pairable units' coincidence contributions per cluster, shape (clusters, V, V)."""
    labels = list(clusters)
    if len(labels) != data.shape[1]:
        raise ValueError(f"clusters has {len(labels)} labels for {data.shape[1]} units")
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    index: dict[Hashable, int] = {}
    owner = [
        index.setdefault(label, len(index))
        for label, keep in zip(labels, pairable, strict=True)
        if keep
    ]
    summed = np.zeros((len(index),) + unit_contributions.shape[1:])
    np.add.at(summed, np.asarray(owner, dtype=int), unit_contributions)
    return summed


def _bca_bounds(
    estimate: float, distribution: np.ndarray, jackknife: np.ndarray, confidence_level: float
) -> tuple[float, float]:
    """The two-sided BCa interval (Efron & Tibshirani 1993, 14.3) from the bootstrap
    distribution and the leave-one-out estimates, computed as ``scipy.stats.bootstrap(...,
    method="BCa")`` does (a test checks they agree). scipy gets the leave-one-out values by
    calling the statistic n times on n - 1 units, O(n^2) for alpha; here they come from the
    coincidence matrix minus each unit's own contribution, O(n)."""
    share_below = (
        np.count_nonzero(distribution < estimate) + np.count_nonzero(distribution <= estimate)
    ) / (2 * distribution.size)
    bias = special.ndtri(share_below)
    n = jackknife.size
    deviations = (n - 1) * (jackknife.mean() - jackknife)
    acceleration = (
        1 / 6 * (np.sum(deviations**3) / n**3) / (np.sum(deviations**2) / n**2) ** (3 / 2)
    )
    z_tail = float(special.ndtri((1 - confidence_level) / 2))
    levels = [
        special.ndtr(bias + (bias + z) / (1 - acceleration * (bias + z))) for z in (z_tail, -z_tail)
    ]
    with warnings.catch_warnings():
        # NaN levels (an undefined leave-one-out alpha) give NaN bounds, which the result says.
        warnings.simplefilter("ignore", RuntimeWarning)
        if np.isnan(levels).any():
            return math.nan, math.nan
        # numpy's default ("linear") is the method scipy.stats.quantile uses for the bounds.
        low, high = np.quantile(distribution, levels)
    return float(low), float(high)


def _bootstrap_distribution(
    statistic, n_units: int, n_resamples: int, batch: int, rng: int | np.random.Generator
) -> np.ndarray:
    """The statistic over ``n_resamples`` resamples of the unit indices, drawn exactly as
    ``scipy.stats.bootstrap((np.arange(n_units),), statistic, vectorized=True, batch=batch,
    rng=rng)`` draws them (a test checks the two distributions are equal).

    Written out because importing scipy.stats costs half a second of every ``manage.py
    analyze`` (issue 22's start-up target), and this loop was all the Spot The Bot report
    took from it."""
    generator = np.random.default_rng(rng)
    batches = []
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        batches.append(statistic(generator.integers(0, n_units, (size, n_units)), axis=-1))
    return np.concatenate(batches, axis=-1)


def krippendorff_alpha_bca(
    reliability_data: npt.ArrayLike,
    level: Level = "nominal",
    *,
    clusters: Sequence[Hashable] | None = None,
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    rng: int | np.random.Generator = 0,
) -> AlphaBootstrapResult:
    """Alpha with a BCa bootstrap interval, resampling pairable units with replacement.

    The bootstrap (Efron & Tibshirani 1993, ch. 14) is ``scipy.stats.bootstrap(
    (np.arange(n_units),), statistic, method="BCa", rng=rng)``: each resample draws
    ``n_units`` pairable units (columns of the matrix with at least two values) with
    replacement and recomputes alpha; the bias correction comes from the share of resamples
    below alpha and the acceleration from the leave-one-unit-out jackknife. Units that
    cannot form a pair are dropped first, as they never enter alpha. This is the "case
    resampling" interval of ABC-Eval, not Krippendorff's (2004) pair-resampling bootstrap.

    ``clusters`` (one label per column) resamples whole clusters instead of units, e.g. the
    conversations whose turns are the units, since turns of one conversation are not
    independent: a resample's alpha counts every unit of a drawn cluster, with multiplicity.
    ``n_units`` of the result is then the number of clusters with a pairable unit.

    ``rng`` seeds the resampling (default 0, so stored results are reproducible). Raises
    ValueError with fewer than two pairable units (or clusters). When alpha itself is
    undefined (no variation at all) the bounds are NaN and no resampling is done.
    """
    _check_level(level)
    data = _as_reliability_matrix(reliability_data)
    values, counts = _pairable_value_counts(data)
    contributions = _unit_coincidences(counts)
    if clusters is not None:
        contributions = _cluster_coincidences(data, clusters, contributions)
    n_units = contributions.shape[0]
    if n_units < 2:
        raise ValueError(f"the bootstrap needs at least two pairable units, got {n_units}")
    statistic = _resampled_alpha_statistic(contributions, values, level)
    alpha = float(statistic(np.arange(n_units)))
    if math.isnan(alpha):
        return AlphaBootstrapResult(
            alpha, math.nan, math.nan, confidence_level, n_resamples, n_units, n_resamples, math.nan
        )
    # The resamples are drawn as scipy's bootstrap draws them; the BCa correction is computed
    # below as scipy computes it, with the jackknife in closed form.
    distribution = _bootstrap_distribution(
        statistic, n_units, n_resamples, max(1, _MAX_BATCH_CELLS // n_units), rng
    )
    jackknife, _, _ = _alpha_from_coincidences(
        contributions.sum(axis=0) - contributions, values, level
    )
    low, high = _bca_bounds(alpha, distribution, jackknife, confidence_level)
    return AlphaBootstrapResult(
        statistic=alpha,
        low=low,
        high=high,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        n_units=n_units,
        n_undefined_resamples=int(np.isnan(distribution).sum()),
        standard_error=float(np.std(distribution, ddof=1)),
    )


# --- ABC-Eval: per-label agreement on binary turn labels ---------------------------------------


@dataclass(frozen=True)
class BinaryTurnJudgment:
    """One annotator's decision whether ``label`` applies to one chatbot ``turn``."""

    turn: Hashable
    annotator: Hashable
    label: str
    present: bool


@dataclass(frozen=True)
class BinaryLabelAgreement:
    """Nominal alpha of one binary label over the turns annotated at least twice.

    ``n_turns`` is the number of such turns, ``n_positive`` the number of judgments of those
    turns that marked the label present (few positives mean wide intervals, cf. ABC-Eval's
    footnote on !Soc and !Int), ``alpha`` the statistic with its BCa interval.
    """

    label: str
    n_turns: int
    n_positive: int
    alpha: AlphaBootstrapResult


def _turn_matrix(decisions: dict[Hashable, dict[Hashable, bool]]) -> np.ndarray:
    """Raters x turns matrix of 0/1 for turns judged at least twice.

    Rows are annotation slots (a turn's first, second, ... judgment), not annotators: alpha
    depends only on the values within each unit, and slots keep the matrix small when many
    crowd workers each annotate a few turns.
    """
    paired = [by_annotator for by_annotator in decisions.values() if len(by_annotator) >= 2]
    n_slots = max((len(by_annotator) for by_annotator in paired), default=0)
    matrix = np.full((n_slots, len(paired)), np.nan)
    for column, by_annotator in enumerate(paired):
        matrix[: len(by_annotator), column] = [float(v) for v in by_annotator.values()]
    return matrix


def binary_label_agreement(
    judgments: Iterable[BinaryTurnJudgment],
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    rng: int | np.random.Generator = 0,
) -> dict[str, BinaryLabelAgreement]:
    """ABC-Eval per-label agreement: nominal alpha with a BCa interval for each label.

    For each label, alpha is computed over the turns that at least two annotators judged
    for that label (ABC-Eval double-annotated a subset of conversations), treating
    present/absent as nominal values, with :func:`krippendorff_alpha_bca` resampling turns.
    A label with fewer than two such turns is left out. Raises ValueError if an annotator
    judged the same turn twice for the same label.

    Returns a dict keyed by label, in sorted label order.
    """
    decisions: dict[str, dict[Hashable, dict[Hashable, bool]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for judgment in judgments:
        by_annotator = decisions[judgment.label][judgment.turn]
        if judgment.annotator in by_annotator:
            raise ValueError(
                f"annotator {judgment.annotator!r} judged turn {judgment.turn!r} twice "
                f"for label {judgment.label!r}"
            )
        by_annotator[judgment.annotator] = bool(judgment.present)
    agreements = {}
    for label in sorted(decisions):
        matrix = _turn_matrix(decisions[label])
        if matrix.shape[1] < 2:
            continue
        agreements[label] = BinaryLabelAgreement(
            label=label,
            n_turns=matrix.shape[1],
            n_positive=int(np.nansum(matrix)),
            alpha=krippendorff_alpha_bca(
                matrix,
                "nominal",
                confidence_level=confidence_level,
                n_resamples=n_resamples,
                rng=rng,
            ),
        )
    return agreements
