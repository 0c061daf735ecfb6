"""Proportions from clustered binary observations: design effects and effective counts.

When a unit is observed several times (a bot turn labelled by two annotators, or every turn
of one conversation, whose turns are not independent), counting each observation as if it
were independent overstates the information: intervals shrink and tests reject too often.
Rao & Scott (1992) correct a proportion for clustering by its **design effect** ``d``, the
variance of the estimate under the actual (clustered) design divided by its variance under
independent sampling, and analyse the **effective counts** ``count / d`` out of ``nobs / d``
with the ordinary methods (Wilson intervals, the pooled z-test of two proportions).

With ``N`` observations ``y_i`` (0/1) in ``G`` clusters, cluster totals ``y_g`` and sizes
``m_g``, and ``p = sum(y) / N``:

* clustered variance (the ratio estimator's, the cluster-robust "sandwich" variance of an
  intercept-only regression with its usual small-sample factor):
  ``v_c = G / (G - 1) * sum_g (y_g - p m_g)^2 / N^2``;
* variance if the observations were independent, with the same small-sample convention
  (the ordinary least-squares variance of the mean): ``v_i = N / (N - 1) * p (1 - p) / N``;
* ``d = v_c / v_i``. With one observation per cluster ``v_c = v_i`` and ``d = 1`` exactly,
  so the classical analysis of independent observations is the special case.

``d`` is 1 when ``p`` is 0 or 1 (no variation to inflate) or when ``N == 1``, and NaN when
all observations come from a single cluster of several (its variance cannot be estimated).

Source: J. N. K. Rao and A. J. Scott (1992), "A simple method for the analysis of clustered
binary data", Biometrics 48, 577-585; L. Kish (1965), Survey Sampling, section 8.2.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ClusteredProportion", "clustered_proportions", "design_effects"]


@dataclass(frozen=True)
class ClusteredProportion:
    """``count`` of ``nobs`` observations in ``n_clusters`` clusters, with the design effect
    and the effective counts (``count / design_effect`` of ``nobs / design_effect``)."""

    count: int
    nobs: int
    n_clusters: int
    proportion: float
    design_effect: float
    effective_count: float
    effective_nobs: float


def design_effects(
    totals: ArrayLike, sizes: ArrayLike, groups: ArrayLike, n_groups: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per group: (count, nobs, clusters, design effect), from one row per cluster.

    ``totals[k]`` and ``sizes[k]`` are the successes and observations of cluster ``k``,
    ``groups[k]`` its group's code in ``range(n_groups)``. Vectorised with ``bincount``: the
    sums over clusters are all a draw of conversations needs (``evalstats.sensitivity``).
    """
    y = np.asarray(totals, dtype=float)
    m = np.asarray(sizes, dtype=float)
    g = np.asarray(groups, dtype=np.int64)
    if y.shape != m.shape or y.shape != g.shape or y.ndim != 1:
        raise ValueError("totals, sizes and groups must be 1-D arrays of one length")
    if np.any(m < 1) or np.any(y < 0) or np.any(y > m):
        raise ValueError("each cluster needs 0 <= successes <= observations and observations >= 1")
    count = np.bincount(g, weights=y, minlength=n_groups)
    nobs = np.bincount(g, weights=m, minlength=n_groups)
    clusters = np.bincount(g, minlength=n_groups).astype(float)
    # sum_g (y_g - p m_g)^2 expanded into sums over clusters: sum y^2 - 2 p sum y m + p^2 sum m^2.
    yy = np.bincount(g, weights=y * y, minlength=n_groups)
    ym = np.bincount(g, weights=y * m, minlength=n_groups)
    mm = np.bincount(g, weights=m * m, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = count / nobs
        squares = np.maximum(yy - 2 * p * ym + p * p * mm, 0.0)
        clustered = clusters / (clusters - 1) * squares / nobs**2
        independent = nobs / (nobs - 1) * p * (1 - p) / nobs
        effect = clustered / independent
    singletons = clusters == nobs
    no_variation = (count == 0) | (count == nobs)
    effect = np.where(singletons | no_variation, 1.0, effect)
    effect = np.where((clusters == 1) & ~singletons & ~no_variation, np.nan, effect)
    return count, nobs, clusters, effect


def clustered_proportions(
    present: ArrayLike, clusters: Sequence[Hashable], groups: Sequence[Hashable]
) -> dict[Hashable, ClusteredProportion]:
    """Per group, the proportion of ``present`` observations with its design effect.

    ``present``, ``clusters`` and ``groups`` are aligned, one entry per observation; a
    cluster must lie within one group. Keyed by group in sorted order.
    """
    flags = np.asarray(present, dtype=bool).ravel()
    if not len(flags) == len(clusters) == len(groups):
        raise ValueError("present, clusters and groups must have one entry per observation")
    group_names = sorted(set(groups), key=repr)
    group_code = {name: code for code, name in enumerate(group_names)}
    cluster_code: dict[Hashable, int] = {}
    cluster_group: list[int] = []
    codes = np.empty(len(flags), dtype=np.int64)
    for index, (cluster, group) in enumerate(zip(clusters, groups, strict=True)):
        code = cluster_code.setdefault(cluster, len(cluster_code))
        if code == len(cluster_group):
            cluster_group.append(group_code[group])
        elif cluster_group[code] != group_code[group]:
            raise ValueError(f"cluster {cluster!r} lies in more than one group")
        codes[index] = code
    totals = np.bincount(codes, weights=flags, minlength=len(cluster_code))
    sizes = np.bincount(codes, minlength=len(cluster_code))
    count, nobs, n_clusters, effect = design_effects(
        totals, sizes, np.array(cluster_group, dtype=np.int64), len(group_names)
    )
    return {
        name: ClusteredProportion(
            count=int(count[k]),
            nobs=int(nobs[k]),
            n_clusters=int(n_clusters[k]),
            proportion=float(count[k] / nobs[k]),
            design_effect=float(effect[k]),
            effective_count=float(count[k] / effect[k]),
            effective_nobs=float(nobs[k] / effect[k]),
        )
        for k, name in enumerate(group_names)
    }
