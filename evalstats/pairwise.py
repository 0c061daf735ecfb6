"""Pairwise win rates and their significance, as in Spot The Bot (and plain A/B judgments).

Spot The Bot (Deriu et al., 2020, "Spot The Bot: A Robust and Efficient Framework for the
Evaluation of Conversational Dialogue Systems", section 3.2 "Ranking"):

* Win function: in one annotation of a bot-bot conversation segment each of the two
  speakers is labelled ``human``, ``unsure`` or ``bot``; with the order
  ``human > unsure > bot`` the speaker with the strictly higher label wins the segment and
  equal labels are a tie.
* Win rate (their Equation 1): ``WINS(i, j) / (WINS(i, j) + WINS(j, i))``; ties count
  towards neither side.
* Significance: section 4.1 "Ranking Results" tests each pair with a chi-square test. We
  default to the exact two-sided binomial test of wins against losses (the chi-square
  goodness-of-fit test is its large-sample approximation) and correct for the number of
  pairs with Holm's step-down procedure (the paper corrects its survival comparisons for
  multiple comparisons; the same need applies to b (b - 1) / 2 pairwise win rates).
  ``test="chi-square-2x2"`` is what the released code computes
  (``segment_analysis/win_significance.py``): ``scipy.stats.chi2_contingency`` with Yates'
  correction on the table ``[[w, l], [n - w, n - l]]``, n the pair's judgments ties included
  (:func:`contingency_pvalues`).

A/B preference judgments (ACUTE-Eval style, ABC-Eval's comparative metrics) use the same
machinery: each judgment is an outcome code ``A_WINS``, ``B_WINS`` or ``TIE``.

Systems are integer indices ``0 .. n_systems - 1``; the caller maps them to names. All
functions are pure (numpy/scipy only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import chdtrc

from evalstats.proportions import ConfidenceInterval, sign_test_from_counts, wilson_interval

__all__ = [
    "A_WINS",
    "BOT",
    "B_WINS",
    "HUMAN",
    "LABEL_CODES",
    "TIE",
    "UNSURE",
    "FeatureWinRates",
    "PairwiseResult",
    "adjust_pvalues",
    "binomial_pvalues",
    "chi_square_pvalues",
    "contingency_pvalues",
    "encode_labels",
    "feature_win_rates",
    "pairwise_comparison",
    "spot_the_bot_outcome",
    "spot_the_bot_outcomes",
    "win_count_matrices",
    "win_rate_matrix",
]

# Label codes, ordered so that a larger code is the more human-like label.
BOT, UNSURE, HUMAN = 0, 1, 2
LABEL_CODES: Mapping[str, int] = {"bot": BOT, "unsure": UNSURE, "human": HUMAN}

# Outcome codes of one judgment between the systems in slots a and b. They match the
# "preferred" codes of feature annotations (0 -> a, 1 -> b, -1 -> no difference).
A_WINS, B_WINS, TIE = 0, 1, -1

PairTest = Literal["binomial", "chi-square", "chi-square-2x2"]
Correction = Literal["holm", "bonferroni", "none"]


# --- the Spot The Bot win function -----------------------------------------------------------


def encode_labels(labels: ArrayLike) -> np.ndarray:
    """Map ``"bot"``/``"unsure"``/``"human"`` (case-insensitive) to ``BOT``/``UNSURE``/``HUMAN``."""
    flat = np.asarray(labels, dtype=object).ravel()
    try:
        codes = [LABEL_CODES[str(label).strip().lower()] for label in flat]
    except KeyError as error:
        raise ValueError(
            f"unknown label {error.args[0]!r}; expected one of {list(LABEL_CODES)}"
        ) from None
    return np.asarray(codes, dtype=np.int64).reshape(np.shape(labels))


def spot_the_bot_outcome(label_a: str, label_b: str) -> int:
    """Winner of one annotated segment: ``A_WINS``, ``B_WINS`` or ``TIE``.

    ``human > unsure > bot``; the speaker with the strictly higher label wins.
    """
    return int(spot_the_bot_outcomes(encode_labels([label_a]), encode_labels([label_b]))[0])


def spot_the_bot_outcomes(codes_a: ArrayLike, codes_b: ArrayLike) -> np.ndarray:
    """Vectorised win function over arrays of label codes (``BOT``, ``UNSURE``, ``HUMAN``).

    Returns an int array of ``A_WINS`` / ``B_WINS`` / ``TIE`` with the broadcast shape.
    """
    a = np.asarray(codes_a)
    b = np.asarray(codes_b)
    valid = (BOT, UNSURE, HUMAN)
    if not (np.isin(a, valid).all() and np.isin(b, valid).all()):
        raise ValueError(f"label codes must be in {valid}; use encode_labels() for strings")
    return np.where(a > b, A_WINS, np.where(b > a, B_WINS, TIE)).astype(np.int64)


# --- counting --------------------------------------------------------------------------------


def _system_indices(
    system_a: ArrayLike, system_b: ArrayLike, n_systems: int | None
) -> tuple[np.ndarray, np.ndarray, int]:
    a = np.asarray(system_a).ravel()
    b = np.asarray(system_b).ravel()
    if a.shape != b.shape:
        raise ValueError("system_a and system_b must have the same length")
    for arr in (a, b):
        if arr.size and (not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0):
            raise ValueError("system indices must be non-negative integers")
    inferred = int(max(a.max(initial=-1), b.max(initial=-1))) + 1
    n = inferred if n_systems is None else int(n_systems)
    if inferred > n:
        raise ValueError(f"system index {inferred - 1} out of range for n_systems={n}")
    if np.any(a == b):
        # A system "beating itself" would inflate both its wins and its losses.
        raise ValueError("a judgment compares a system with itself")
    return a.astype(np.int64), b.astype(np.int64), n


def _outcome_codes(outcome: ArrayLike, size: int) -> np.ndarray:
    codes = np.asarray(outcome).ravel()
    if codes.size != size:
        raise ValueError("outcome must have one entry per judgment")
    if not np.isin(codes, (A_WINS, B_WINS, TIE)).all():
        raise ValueError("outcome codes must be A_WINS (0), B_WINS (1) or TIE (-1)")
    return codes.astype(np.int64)


def win_count_matrices(
    system_a: ArrayLike,
    system_b: ArrayLike,
    outcome: ArrayLike,
    n_systems: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Aggregate judgments into ``(wins, ties)`` matrices of shape ``(n, n)``.

    ``wins[i, j]`` is the number of judgments that system i won against system j, whichever
    slot each system was shown in; ``ties[i, j] == ties[j, i]`` counts ties between them. The
    diagonals are zero. ``n_systems`` defaults to ``1 + max index``.
    """
    a, b, n = _system_indices(system_a, system_b, n_systems)
    codes = _outcome_codes(outcome, a.size)
    # One pass over the judgments (Arena-sized inputs have millions): count each
    # (a, b, outcome) cell, then read wins and ties off the cells.
    slot = np.where(codes == TIE, 2, codes)  # A_WINS = 0, B_WINS = 1
    cells = np.bincount((a * n + b) * 3 + slot, minlength=n * n * 3).reshape(n, n, 3)
    wins = cells[:, :, A_WINS] + cells[:, :, B_WINS].T
    tied = cells[:, :, 2]
    return wins, tied + tied.T


def win_rate_matrix(wins: ArrayLike) -> np.ndarray:
    """Spot The Bot Equation 1: ``wins[i, j] / (wins[i, j] + wins[j, i])``, NaN if undecided."""
    w = np.asarray(wins, dtype=float)
    decisive = w + w.T
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(decisive > 0, w / np.where(decisive > 0, decisive, 1.0), np.nan)


# --- significance ----------------------------------------------------------------------------


def binomial_pvalues(wins_a: ArrayLike, wins_b: ArrayLike) -> np.ndarray:
    """Two-sided exact binomial test of ``H0: P(a wins | decisive) = 1/2`` per pair.

    Under ``H0`` wins_a ~ Binomial(wins_a + wins_b, 1/2); this is the exact sign test
    (``proportions.sign_test_from_counts``). NaN where a pair has no decisive outcome.
    """
    a = np.asarray(wins_a, dtype=np.int64)
    b = np.asarray(wins_b, dtype=np.int64)
    flat = [
        sign_test_from_counts(int(x), int(y)).pvalue if x + y > 0 else np.nan
        for x, y in zip(a.ravel(), b.ravel(), strict=True)
    ]
    return np.asarray(flat, dtype=float).reshape(a.shape)


def chi_square_pvalues(wins_a: ArrayLike, wins_b: ArrayLike) -> np.ndarray:
    """Chi-square goodness-of-fit test of wins vs losses against a 50/50 split (the paper's).

    ``X^2 = (wins_a - wins_b)^2 / (wins_a + wins_b)`` on 1 degree of freedom (Pearson's
    statistic with expected counts ``(wins_a + wins_b) / 2`` each, no continuity correction).
    NaN where a pair has no decisive outcome.
    """
    a = np.asarray(wins_a, dtype=float)
    b = np.asarray(wins_b, dtype=float)
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = np.where(total > 0, (a - b) ** 2 / np.where(total > 0, total, 1.0), np.nan)
    return chdtrc(1, statistic)  # scipy.stats.chi2.sf, without importing scipy.stats


def contingency_pvalues(wins_a: ArrayLike, wins_b: ArrayLike, ties: ArrayLike) -> np.ndarray:
    """The released Spot The Bot code's pair test: a chi-square test of independence, with
    Yates' continuity correction, on the 2x2 table ``[[w, l], [n - w, n - l]]``.

    ``w = wins_a``, ``l = wins_b`` and ``n = w + l + ties`` (every judgment of the pair),
    i.e. ``scipy.stats.chi2_contingency(table)`` with its default ``correction=True``. The
    table compares a's share of wins with b's share among the same n judgments, so ties
    dilute both. NaN where the pair has no decisive outcome (the table has an empty row).
    """
    a = np.asarray(wins_a, dtype=np.int64)
    b = np.asarray(wins_b, dtype=np.int64)
    t = np.asarray(ties, dtype=np.int64)
    # Here, not at the top: only the "as published" preset runs this test, and scipy.stats
    # costs every other analysis half a second to import.
    from scipy.stats import chi2_contingency

    flat = []
    for won, lost, tie in zip(a.ravel(), b.ravel(), t.ravel(), strict=True):
        n = won + lost + tie
        if won + lost == 0:
            flat.append(np.nan)
            continue
        table = np.array([[won, lost], [n - won, n - lost]])
        flat.append(float(chi2_contingency(table, correction=True).pvalue))
    return np.asarray(flat, dtype=float).reshape(a.shape)


def adjust_pvalues(pvalues: ArrayLike, method: Correction = "holm") -> np.ndarray:
    """Family-wise error correction of a family of p-values.

    * Bonferroni: ``min(1, m p_i)``.
    * Holm (1979, "A simple sequentially rejective multiple test procedure", Scand. J.
      Statist. 6): with ``p_(1) <= ... <= p_(m)``, ``p_adj_(k) = max_{j <= k}
      min(1, (m - j + 1) p_(j))``; uniformly more powerful than Bonferroni, same guarantee.
    * ``"none"``: unchanged.

    NaN entries (pairs never decided) are not tests: they stay NaN and do not count in ``m``.
    """
    p = np.asarray(pvalues, dtype=float)
    if np.any((p < 0) | (p > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    adjusted = p.copy()
    tested = ~np.isnan(p)
    family = p[tested]
    m = family.size
    if method == "none" or m == 0:
        return adjusted
    if method == "bonferroni":
        adjusted[tested] = np.minimum(1.0, m * family)
    elif method == "holm":
        order = np.argsort(family, kind="stable")
        step_down = np.minimum(1.0, (m - np.arange(m)) * family[order])
        in_order = np.empty(m)
        in_order[order] = np.maximum.accumulate(step_down)
        adjusted[tested] = in_order
    else:
        raise ValueError(f"unknown correction {method!r}; use 'holm', 'bonferroni' or 'none'")
    return adjusted


# --- the full pairwise analysis --------------------------------------------------------------


@dataclass(frozen=True)
class PairwiseResult:
    """Pairwise win rates of ``n_systems`` systems; per-pair arrays are aligned with ``pairs``.

    Attributes
    ----------
    pairs : ndarray, shape (P, 2)
        Every unordered pair ``(a, b)`` with ``a < b``, in ``np.triu_indices`` order.
    wins_a, wins_b, ties : ndarray of int, shape (P,)
        Judgments won by ``a``, won by ``b``, and tied.
    win_rate_a : ndarray, shape (P,)
        ``wins_a / (wins_a + wins_b)``; NaN when the pair has no decisive judgment.
    win_rate_a_ci : ConfidenceInterval of arrays, shape (P,)
        Wilson score interval of ``win_rate_a`` (ABC-Eval Figure 7).
    p_value, p_adjusted : ndarray, shape (P,)
        Per-pair test of ``H0: win rate = 1/2`` and the corrected p-value (NaN if undecided).
    wins, ties_matrix : ndarray, shape (n, n)
        ``wins[i, j]`` = wins of i over j; symmetric tie counts.
    system_wins, system_losses, system_ties : ndarray of int, shape (n,)
        Totals per system over all opponents.
    system_win_rate : ndarray, shape (n,)
        ``system_wins / (system_wins + system_losses)`` (NaN without decisive judgments).
    system_win_rate_ci : ConfidenceInterval of arrays, shape (n,)
        Wilson score interval of ``system_win_rate``.
    test, correction : str
        The pair test (``"binomial"``, ``"chi-square"`` or ``"chi-square-2x2"``) and
        correction used.
    """

    n_systems: int
    pairs: np.ndarray
    wins_a: np.ndarray
    wins_b: np.ndarray
    ties: np.ndarray
    win_rate_a: np.ndarray
    win_rate_a_ci: ConfidenceInterval
    p_value: np.ndarray
    p_adjusted: np.ndarray
    wins: np.ndarray
    ties_matrix: np.ndarray
    system_wins: np.ndarray
    system_losses: np.ndarray
    system_ties: np.ndarray
    system_win_rate: np.ndarray
    system_win_rate_ci: ConfidenceInterval
    test: str
    correction: str

    def pair_records(self, names: Sequence[str] | None = None) -> list[dict[str, object]]:
        """One JSON-safe dict per pair (NaN becomes None), system names if ``names`` given."""
        label = (lambda i: names[i]) if names is not None else int
        return [
            {
                "system_a": label(int(a)),
                "system_b": label(int(b)),
                "wins_a": int(self.wins_a[k]),
                "wins_b": int(self.wins_b[k]),
                "ties": int(self.ties[k]),
                "win_rate_a": _none_if_nan(self.win_rate_a[k]),
                "win_rate_a_low": _none_if_nan(self.win_rate_a_ci.low[k]),
                "win_rate_a_high": _none_if_nan(self.win_rate_a_ci.high[k]),
                "p_value": _none_if_nan(self.p_value[k]),
                "p_adjusted": _none_if_nan(self.p_adjusted[k]),
            }
            for k, (a, b) in enumerate(self.pairs)
        ]


def _none_if_nan(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _pair_pvalues(
    wins_a: np.ndarray, wins_b: np.ndarray, ties: np.ndarray, test: PairTest
) -> np.ndarray:
    if test == "binomial":
        return binomial_pvalues(wins_a, wins_b)
    if test == "chi-square":
        return chi_square_pvalues(wins_a, wins_b)
    if test == "chi-square-2x2":
        return contingency_pvalues(wins_a, wins_b, ties)
    raise ValueError(f"unknown test {test!r}; use 'binomial', 'chi-square' or 'chi-square-2x2'")


def pairwise_comparison(
    system_a: ArrayLike,
    system_b: ArrayLike,
    outcome: ArrayLike,
    n_systems: int | None = None,
    *,
    test: PairTest = "binomial",
    correction: Correction = "holm",
    confidence: float = 0.95,
) -> PairwiseResult:
    """Win rates, per-pair significance and per-system win rates from flat judgment arrays.

    ``system_a[k]`` and ``system_b[k]`` are the system indices shown in judgment k and
    ``outcome[k]`` is ``A_WINS``, ``B_WINS`` or ``TIE`` (e.g. from ``spot_the_bot_outcomes``).
    Ties are counted and reported but excluded from every rate and test (Spot The Bot Eq. 1).
    The correction runs over the pairs that have at least one decisive judgment.
    """
    wins, ties_matrix = win_count_matrices(system_a, system_b, outcome, n_systems)
    n = wins.shape[0]
    rows, cols = np.triu_indices(n, k=1)
    wins_a, wins_b = wins[rows, cols], wins[cols, rows]
    p_value = _pair_pvalues(wins_a, wins_b, ties_matrix[rows, cols], test)
    pair_ci = wilson_interval(wins_a, wins_a + wins_b, confidence).confidence_interval
    system_wins = wins.sum(axis=1)
    system_losses = wins.sum(axis=0)
    system_interval = wilson_interval(system_wins, system_wins + system_losses, confidence)
    return PairwiseResult(
        n_systems=n,
        pairs=np.column_stack([rows, cols]),
        wins_a=wins_a,
        wins_b=wins_b,
        ties=ties_matrix[rows, cols],
        win_rate_a=win_rate_matrix(wins)[rows, cols],
        win_rate_a_ci=ConfidenceInterval(np.atleast_1d(pair_ci.low), np.atleast_1d(pair_ci.high)),
        p_value=p_value,
        p_adjusted=adjust_pvalues(p_value, correction),
        wins=wins,
        ties_matrix=ties_matrix,
        system_wins=system_wins,
        system_losses=system_losses,
        system_ties=ties_matrix.sum(axis=1),
        system_win_rate=np.atleast_1d(system_interval.proportion),
        system_win_rate_ci=ConfidenceInterval(
            np.atleast_1d(system_interval.confidence_interval.low),
            np.atleast_1d(system_interval.confidence_interval.high),
        ),
        test=test,
        correction=correction,
    )


# --- per-feature win rates (Spot The Bot Table 2) --------------------------------------------


@dataclass(frozen=True)
class FeatureWinRates:
    """Per-system preference counts for one feature (e.g. fluency).

    ``win_rate[i] = wins[i] / (wins[i] + losses[i])``: the share of decisive preferences
    between i and its opponents that went to i (NaN if none); ``no_difference[i]`` counts
    judgments involving i where neither side was preferred.
    """

    wins: np.ndarray
    losses: np.ndarray
    no_difference: np.ndarray
    win_rate: np.ndarray


def _preference_codes(preferred: ArrayLike) -> np.ndarray:
    # Annotation exports carry "no difference" as -1, None or NaN; normalise them all to TIE.
    raw = np.asarray(preferred, dtype=object).ravel()
    codes = np.empty(raw.size, dtype=np.int64)
    for k, value in enumerate(raw):
        if value is None or (isinstance(value, float) and np.isnan(value)):
            codes[k] = TIE
        elif value in (A_WINS, B_WINS, TIE):
            codes[k] = int(value)
        else:
            raise ValueError(f"preferred must be 0 (a), 1 (b), -1 or None, got {value!r}")
    return codes


def feature_win_rates(
    system_a: ArrayLike,
    system_b: ArrayLike,
    preferred: ArrayLike,
    n_systems: int | None = None,
) -> FeatureWinRates:
    """Per-feature win rate of each system (Spot The Bot Table 2, computed like Eq. 1).

    ``preferred[k]`` is 0 if system_a[k] was better on the feature, 1 if system_b[k] was,
    -1/None/NaN if the annotator saw no difference. Call once per feature.
    """
    a = np.asarray(system_a).ravel()
    codes = _preference_codes(preferred)
    wins, ties = win_count_matrices(a, system_b, codes, n_systems)
    system_wins = wins.sum(axis=1)
    system_losses = wins.sum(axis=0)
    decisive = system_wins + system_losses
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(decisive > 0, system_wins / np.where(decisive > 0, decisive, 1), np.nan)
    return FeatureWinRates(
        wins=system_wins,
        losses=system_losses,
        no_difference=ties.sum(axis=1),
        win_rate=rate,
    )
