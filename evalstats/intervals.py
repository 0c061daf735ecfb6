r"""Interval-censored Spot The Bot judgments: the data every survival method here works on.

Deriu et al. (2020), "Spot The Bot" (EMNLP), sections 3.3 and 4.2: an annotator who sees the
first ``k`` exchanges of a conversation and labels a speaker "bot" tells us the bot was
spotted at some time in :math:`(0, k]`; "human" or "unsure" tells us it survived past ``k``
(right-censored, :math:`(k, \infty)`). Every judgment is therefore interval-censored, and
in fact *current status* data: each one is either :math:`(0, k]` or :math:`(k, \infty)`.

:func:`spot_the_bot_intervals` / :func:`aggregate_intervals` turn per-judgment arrays into
distinct intervals with per-system counts (a study has a handful of segment lengths and
thousands of judgments, so every fit works on at most ``2 x n_lengths`` weighted rows).
The estimators are :mod:`evalstats.turnbull` (survival curves),
:mod:`evalstats.interval_logrank` (tests) and :mod:`evalstats.interval_cox`
(feature effects).

Interval convention (the ``interval`` package's default): an observation ``(left, right)``
with ``left < right`` means the event time :math:`T` satisfies ``left < T <= right``;
``right = inf`` is right-censoring at ``left``; ``left == right`` is an exact event time.

Labels use the integer codes of :mod:`evalstats.pairwise` (``BOT``, ``UNSURE``,
``HUMAN``). Pure numpy: no I/O, no Django.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evalstats.pairwise import BOT, HUMAN, UNSURE

__all__ = ["IntervalCensoredData", "aggregate_intervals", "spot_the_bot_intervals"]


# Label codes shared with the win-rate analysis, so one encoding serves both.
_LABEL_CODES = (BOT, UNSURE, HUMAN)


def read_only_array(array: npt.ArrayLike, dtype: npt.DTypeLike = None) -> np.ndarray:
    out = np.array(array, dtype=dtype, copy=True)
    out.setflags(write=False)
    return out


# eq=False: the fields are numpy arrays, whose elementwise == makes a generated __eq__ useless.
@dataclass(frozen=True, eq=False)
class IntervalCensoredData:
    """Distinct censoring intervals with a count per group.

    ``counts[g, i]`` is how many observations of group ``groups[g]`` have the interval
    ``(left[i], right[i])`` (see the module docstring for the convention).
    """

    left: np.ndarray
    right: np.ndarray
    counts: np.ndarray
    groups: np.ndarray

    def counts_of(self, group: object) -> np.ndarray:
        """Counts of one group (by label, e.g. a system index)."""
        index = np.flatnonzero(self.groups == group)
        if index.size != 1:
            raise KeyError(f"no group {group!r}")
        return self.counts[index[0]]


def validate_intervals(left: np.ndarray, right: np.ndarray) -> None:
    if left.shape != right.shape or left.ndim != 1:
        raise ValueError("left and right must be 1-d arrays of the same length")
    if np.isnan(left).any() or np.isnan(right).any():
        raise ValueError("interval endpoints must not be NaN")
    if not np.isfinite(left).all():
        raise ValueError("left endpoints must be finite")
    if (left < 0).any():
        raise ValueError("event times are non-negative: left endpoints must be >= 0")
    if (right < left).any():
        raise ValueError("every interval needs left <= right")


def aggregate_intervals(
    left: npt.ArrayLike, right: npt.ArrayLike, group: npt.ArrayLike | None = None
) -> IntervalCensoredData:
    """Collapse per-observation intervals to distinct ``(left, right)`` rows with counts.

    ``group`` (optional, e.g. the system of each judgment) gives one row of ``counts`` per
    distinct group, in sorted order; without it there is a single group ``0``.
    """
    left = np.asarray(left, dtype=float)
    right = np.asarray(right, dtype=float)
    validate_intervals(left, right)
    group = np.zeros(left.shape, dtype=int) if group is None else np.asarray(group)
    if group.shape != left.shape:
        raise ValueError("group must have one entry per interval")
    pairs, pair_index = unique_rows(np.column_stack([left, right]))
    groups, group_index = np.unique(group, return_inverse=True)
    cell = group_index.ravel() * pairs.shape[0] + pair_index
    counts = np.bincount(cell, minlength=groups.size * pairs.shape[0])
    counts = counts.reshape(groups.size, pairs.shape[0]).astype(np.int64)
    return IntervalCensoredData(
        left=read_only_array(pairs[:, 0]),
        right=read_only_array(pairs[:, 1]),
        counts=read_only_array(counts),
        groups=read_only_array(groups),
    )


def unique_rows(matrix: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(matrix, axis=0, return_inverse=True)`` for a 2-d numeric matrix without NaN.

    numpy sorts whole rows as records, seconds for 10^5 rows; here each column is coded by
    its sorted distinct values and the codes combined into one integer per row (first column
    most significant), so one integer sort gives the same rows in the same order.
    """
    matrix = np.asarray(matrix)
    if matrix.ndim != 2:
        raise ValueError("matrix must be 2-d")
    values = [np.unique(column) for column in matrix.T]
    sizes = [v.size for v in values]
    space = float(np.prod(np.array(sizes, dtype=float)))
    if matrix.shape[0] == 0 or space >= 2.0**62:
        rows, inverse = np.unique(matrix, axis=0, return_inverse=True)
        return rows, inverse.ravel()
    key = np.zeros(matrix.shape[0], dtype=np.int64)
    for column, distinct in zip(matrix.T, values, strict=True):
        # a sort of the column and a binary search per row beat an argsort of the column
        key = key * distinct.size + np.searchsorted(distinct, column)
    if space <= max(4 * matrix.shape[0], 1 << 16):
        # few possible rows (segment lengths x preference codes): count them, no sort at all
        present = np.bincount(key, minlength=int(space)) > 0
        rank = np.cumsum(present) - 1
        used = np.flatnonzero(present)
    else:
        used, inverse = np.unique(key, return_inverse=True)
        rank = None
    # decode the used keys back into rows, last column least significant
    rows = np.empty((used.size, matrix.shape[1]), dtype=matrix.dtype)
    rest = used
    for j in range(matrix.shape[1] - 1, -1, -1):
        rows[:, j] = values[j][rest % sizes[j]]
        rest = rest // sizes[j]
    return rows, (rank[key] if rank is not None else inverse.ravel())


def spotted_mask(label: npt.ArrayLike, bot_label: int) -> np.ndarray:
    label = np.asarray(label)
    if not np.issubdtype(label.dtype, np.integer) or not np.isin(label, _LABEL_CODES).all():
        raise ValueError(
            f"labels must be the integer codes of evalstats.pairwise "
            f"(bot={BOT}, unsure={UNSURE}, human={HUMAN})"
        )
    return label == bot_label


def segment_lengths(segment_length: npt.ArrayLike) -> np.ndarray:
    k = np.asarray(segment_length, dtype=float)
    if not (np.isfinite(k).all() and (k > 0).all()):
        raise ValueError("segment lengths must be positive and finite")
    return k


def spot_the_bot_intervals(
    system: npt.ArrayLike,
    segment_length: npt.ArrayLike,
    label: npt.ArrayLike,
    *,
    bot_label: int = BOT,
) -> IntervalCensoredData:
    r"""Spot The Bot judgments as aggregated interval-censored observations per system.

    A speaker of system ``s`` judged on a segment of ``k`` exchanges contributes
    :math:`(0, k]` if it was labelled ``bot_label`` (spotted within the first ``k``
    exchanges) and :math:`(k, \infty)` otherwise (it survived ``k`` exchanges), following
    Deriu et al. (2020), section 3.3. Identical intervals are counted, not repeated.
    """
    k = segment_lengths(segment_length)
    spotted = spotted_mask(label, bot_label)
    system = np.asarray(system)
    if not (k.shape == spotted.shape == system.shape):
        raise ValueError("system, segment_length and label must have the same length")
    left = np.where(spotted, 0.0, k)
    right = np.where(spotted, k, np.inf)
    return aggregate_intervals(left, right, system)


def observed_intervals(
    left: npt.ArrayLike, right: npt.ArrayLike, counts: npt.ArrayLike | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validated float arrays restricted to the intervals somebody has, and that mask.

    Intervals with a zero count must go: Turnbull's intervals depend on the observed
    endpoints.
    """
    left = np.asarray(left, dtype=float)
    right = np.asarray(right, dtype=float)
    validate_intervals(left, right)
    counts = np.ones(left.shape) if counts is None else np.asarray(counts, dtype=float)
    if counts.shape[-1] != left.size:
        raise ValueError("counts must have one column per interval")
    if (counts < 0).any() or not np.isfinite(counts).all():
        raise ValueError("counts must be finite and non-negative")
    observed = counts.reshape(-1, left.size).sum(axis=0) > 0
    if not observed.any():
        raise ValueError("no observations")
    return left[observed], right[observed], counts[..., observed], observed
