"""Predictive and incremental validity of evaluation metrics (ABC-Eval Figures 2 and 3).

ABC-Eval (Finch et al., 2023, sections 7.2 and 7.4) asks how much of conversation quality
each metric explains:

* predictive validity: a univariate regression of quality on one metric, scored by R^2
  (linear regression, for dialogue-level Likert quality) or McFadden's pseudo-R^2 (logistic
  regression, for the binary comparative quality choice, predictors being differences
  between the two conversations);
* a comparative verdict does not depend on which conversation of the pair is called the
  first: swapping them turns "second better" (1) into "first better" (0) and every
  difference x into -x. An ordinary logistic regression with an intercept is not invariant
  to that (its pseudo-R^2 changes with the order the pairs were shown in), so
  ``model="symmetric-logistic"`` fits P(second better) = 1 / (1 + exp(-x b)) without an
  intercept, the model whose likelihood is the same in both orientations (fitting the
  ordinary model to every pair in both orientations gives the same coefficients and an
  intercept of 0); its null model is b = 0, P = 1/2;
* incremental validity: backward stepwise regression from all metrics of a method, removing
  one predictor at a time by a beam search (k = 100) keeping the models with the highest
  adjusted R^2 (or adjusted pseudo-R^2). The R^2 path, with a flag telling whether every
  predictor still contributes positively to the adjusted fit, is Figure 3.

Fits are ordinary least squares and maximum-likelihood logistic regression (Newton-Raphson)
with an intercept, in numpy. Definitions, with n observations, k predictors:

* R^2 = 1 - SSR / SST;  adjusted R^2 = 1 - (1 - R^2) (n - 1) / (n - k - 1);
* McFadden pseudo-R^2 = 1 - LL / LL_0 (LL_0: intercept-only model; n log 1/2 for the
  symmetric model); adjusted = 1 - (LL - k) / LL_0 (McFadden 1974), which is 0 for the null
  model as adjusted R^2 is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "EliminationStep",
    "ModelFit",
    "PredictiveValidity",
    "backward_elimination",
    "fit_model",
    "predictive_validity",
]

Model = Literal["linear", "logistic", "symmetric-logistic"]
_MODELS = ("linear", "logistic", "symmetric-logistic")
_MAX_NEWTON_STEPS = 100


@dataclass(frozen=True)
class ModelFit:
    """R^2 (linear) or McFadden's pseudo-R^2 (logistic) of one model, and its adjusted value."""

    model: Model
    predictors: tuple[str, ...]
    n: int
    fit: float
    adjusted_fit: float
    log_likelihood: float | None = None
    null_log_likelihood: float | None = None


@dataclass(frozen=True)
class PredictiveValidity:
    """Univariate fit of quality on ``metric`` (Figure 2), over its ``fit.n`` complete rows."""

    metric: str
    fit: ModelFit


@dataclass(frozen=True)
class EliminationStep:
    """One model of the backward path: its predictors, the one just removed, and its fit.

    ``all_contribute`` is Figure 3's filled marker: removing any one predictor would lower
    the adjusted fit (for a single predictor: its adjusted fit is above the null model's 0).
    """

    predictors: tuple[str, ...]
    removed: str | None
    fit: ModelFit
    all_contribute: bool


def _check_model(model: str) -> None:
    if model not in _MODELS:
        raise ValueError(f"model must be one of {_MODELS}, got {model!r}")


def _linear(y: np.ndarray, design: np.ndarray) -> tuple[float, float]:
    n, k = design.shape[0], design.shape[1] - 1
    coefficients, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ coefficients
    total = float(((y - y.mean()) ** 2).sum())
    if total == 0.0:
        raise ValueError("quality has no variance: R^2 is undefined")
    r_squared = 1.0 - float(residual @ residual) / total
    if n - k - 1 <= 0:
        raise ValueError(f"{n} observations cannot fit {k} predictors and an intercept")
    return r_squared, 1.0 - (1.0 - r_squared) * (n - 1) / (n - k - 1)


def _log_likelihood(y: np.ndarray, linear_predictor: np.ndarray) -> float:
    # log(1 + e^eta) computed stably as logaddexp(0, eta).
    return float((y * linear_predictor - np.logaddexp(0.0, linear_predictor)).sum())


def _logistic(
    y: np.ndarray, design: np.ndarray, symmetric: bool = False
) -> tuple[float, float, float, float]:
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("logistic quality must be coded 0/1")
    mean = y.mean()
    if symmetric:
        # The null model of the orientation-free model: either conversation equally likely.
        null = float(y.size * np.log(0.5))
    elif mean in (0.0, 1.0):
        raise ValueError("quality has a single outcome: pseudo-R^2 is undefined")
    else:
        null = float(y.size * (mean * np.log(mean) + (1 - mean) * np.log(1 - mean)))
    coefficients = np.zeros(design.shape[1])
    previous = -np.inf
    for _ in range(_MAX_NEWTON_STEPS):
        eta = design @ coefficients
        probability = 1.0 / (1.0 + np.exp(-eta))
        weight = probability * (1.0 - probability)
        gradient = design.T @ (y - probability)
        hessian = design.T @ (design * weight[:, None])
        coefficients = coefficients + np.linalg.lstsq(hessian, gradient, rcond=None)[0]
        current = _log_likelihood(y, design @ coefficients)
        if abs(current - previous) < 1e-10:
            break
        previous = current
    else:
        raise ValueError("logistic regression did not converge (perfect separation?)")
    if current > -1e-6:
        # The likelihood only tends to 1 when the classes are perfectly separated.
        raise ValueError("logistic regression is perfectly separated: pseudo-R^2 is undefined")
    k = design.shape[1] - (0 if symmetric else 1)
    return 1.0 - current / null, 1.0 - (current - k) / null, current, null


def _columns(
    quality: ArrayLike, metrics: Mapping[str, ArrayLike], names: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(quality, dtype=float).ravel()
    columns = []
    for name in names:
        column = np.asarray(metrics[name], dtype=float).ravel()
        if column.shape != y.shape:
            raise ValueError(f"metric {name!r} has {column.size} values, quality {y.size}")
        columns.append(column)
    x = np.column_stack(columns) if columns else np.empty((y.size, 0))
    complete = np.isfinite(y) & np.isfinite(x).all(axis=1)
    return y[complete], x[complete]


def fit_model(
    quality: ArrayLike, metrics: Mapping[str, ArrayLike], model: Model = "linear"
) -> ModelFit:
    """Fit quality on all ``metrics`` (with an intercept) over the complete rows.

    Rows with a NaN in quality or any metric are dropped. Raises ValueError when the fit is
    undefined (constant quality, too few rows, perfect separation).
    """
    _check_model(model)
    names = tuple(metrics)
    y, x = _columns(quality, metrics, names)
    return _fit(y, x, names, model)


def _fit(y: np.ndarray, x: np.ndarray, names: tuple[str, ...], model: Model) -> ModelFit:
    if model == "symmetric-logistic":
        if not names:
            raise ValueError("the symmetric logistic model needs at least one predictor")
        fit, adjusted, log_likelihood, null = _logistic(y, x, symmetric=True)
        return ModelFit(model, names, int(y.size), fit, adjusted, log_likelihood, null)
    design = np.column_stack([np.ones(y.size), x])
    if model == "linear":
        fit, adjusted = _linear(y, design)
        return ModelFit(model, names, int(y.size), fit, adjusted)
    fit, adjusted, log_likelihood, null = _logistic(y, design)
    return ModelFit(model, names, int(y.size), fit, adjusted, log_likelihood, null)


def predictive_validity(
    quality: ArrayLike, metrics: Mapping[str, ArrayLike], model: Model = "linear"
) -> tuple[PredictiveValidity, ...]:
    """Figure 2: a univariate model of quality per metric, each over its own complete rows.

    Sorted by decreasing fit.
    """
    _check_model(model)
    results = [
        PredictiveValidity(name, fit_model(quality, {name: metrics[name]}, model))
        for name in metrics
    ]
    return tuple(sorted(results, key=lambda r: -r.fit.fit))


def backward_elimination(
    quality: ArrayLike,
    metrics: Mapping[str, ArrayLike],
    model: Model = "linear",
    *,
    beam_width: int = 100,
) -> tuple[EliminationStep, ...]:
    """Figure 3: backward stepwise regression by beam search on the adjusted fit.

    Starting from all metrics (rows complete in every metric, so all models share the same
    data), each step removes one predictor. Every path in the beam is extended by every
    possible removal, and the ``beam_width`` paths whose new model has the highest adjusted
    fit are kept (ties: higher sum of adjusted fits along the path). With ``beam_width=1``
    this is greedy elimination. Returns the path that ends in the best single-predictor
    model: the full model first, then one step per removal.
    """
    _check_model(model)
    if beam_width < 1:
        raise ValueError(f"beam_width must be at least 1, got {beam_width!r}")
    names = tuple(metrics)
    if not names:
        raise ValueError("backward elimination needs at least one metric")
    y, x = _columns(quality, metrics, names)
    cache: dict[frozenset[str], ModelFit] = {}

    def fit_of(subset: frozenset[str]) -> ModelFit:
        if subset not in cache:
            kept = tuple(n for n in names if n in subset)
            cache[subset] = _fit(y, x[:, [names.index(n) for n in kept]], kept, model)
        return cache[subset]

    def adjusted(subset: frozenset[str]) -> float:
        return fit_of(subset).adjusted_fit if subset else 0.0

    # A path is (removals, score); its current model is all names minus the removals.
    beam: list[tuple[tuple[str, ...], float]] = [((), adjusted(frozenset(names)))]
    for _ in range(len(names) - 1):
        candidates: dict[frozenset[str], tuple[tuple[str, ...], float]] = {}
        for removals, score in beam:
            remaining = frozenset(names) - set(removals)
            for name in names:
                if name not in remaining:
                    continue
                subset = remaining - {name}
                path = (removals + (name,), score + adjusted(subset))
                # Paths reaching the same model compete on their history only.
                if subset not in candidates or path[1] > candidates[subset][1]:
                    candidates[subset] = path
        ranked = sorted(
            candidates.items(), key=lambda item: (-adjusted(item[0]), -item[1][1], sorted(item[0]))
        )
        beam = [path for _, path in ranked[:beam_width]]
    removals = beam[0][0]
    steps = []
    remaining = set(names)
    for removed in (None, *removals):
        if removed is not None:
            remaining.discard(removed)
        subset = frozenset(remaining)
        contributes = all(adjusted(subset) > adjusted(subset - {n}) for n in subset)
        steps.append(
            EliminationStep(fit_of(subset).predictors, removed, fit_of(subset), contributes)
        )
    return tuple(steps)
