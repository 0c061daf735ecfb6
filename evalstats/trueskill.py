"""TrueSkill ratings for 1-vs-1 matches with draws, vectorised over bootstrap replicates.

This is the ranking procedure of Spot The Bot (Deriu et al., EMNLP 2020, section "Ranking"),
which follows Dušek et al. (2018, "Findings of the E2E NLG challenge") and WMT (Sakaguchi, Post
and Van Durme 2014, "Efficient elicitation of annotations for human evaluation of machine
translation"): systems are rated with TrueSkill (Herbrich, Minka and Graepel 2006) from pairwise
outcomes; the matches are bootstrap-resampled, each replicate is rated in a random order, the
spread of each system's rank over the replicates gives a rank range, and systems whose rank
ranges overlap form a cluster.

Update rule
-----------
For one match between ``first`` (the winner, or player a of a draw) and ``second``, with
``s_i^2 = sigma_i^2 + tau^2`` (the dynamic factor is added before the match)::

    c^2 = 2 beta^2 + s_first^2 + s_second^2
    t = (mu_first - mu_second) / c          eps = draw_margin / c
    mu_first  += s_first^2 / c * v          mu_second -= s_second^2 / c * v
    sigma_i^2  = s_i^2 * (1 - s_i^2 / c^2 * w)

with the truncated-Gaussian corrections (phi, Phi: standard normal pdf and cdf)::

    win:   x = t - eps,  v = phi(x) / Phi(x),  w = v (v + x)
    draw:  a = eps - |t|,  b = -eps - |t|,  D = Phi(a) - Phi(b)
           v = sign(t) (phi(b) - phi(a)) / D,  w = v^2 + (a phi(a) - b phi(b)) / D

    draw_margin = Phi^-1((draw_probability + 1) / 2) * sqrt(2) * beta

These are exactly what ``trueskill.TrueSkill(...).rate_1vs1`` (trueskill 0.4.5, H. Lee) computes
through its factor graph for two one-player teams; matches are applied one after the other, the
winner passed first, a draw in (a, b) order. See J. Moser, "Computing your skill" (2010) for the
derivation.

Normal-distribution backends
----------------------------
``backend="scipy"`` (default) evaluates phi/Phi with ``scipy.special`` and rewrites v and w in
scaled form (``erfcx``, a continued fraction for ``v + x``) so that they stay finite and accurate
in the far tails, where ``trueskill.TrueSkill(backend="scipy")`` divides 0 by 0 or raises
``FloatingPointError``; elsewhere they agree to the package's own rounding error (1e-12 for
|t| <= 6, where the package still has that precision). ``backend="builtin"`` reproduces the
package's default backend (``backend=None``): its rational ``erfc`` approximation (relative error
up to 1.2e-7) and its Newton-refined inverse, so ratings computed with the package's defaults,
e.g. by the WMT and Spot The Bot scripts, can be reproduced to rounding error.

Environment defaults (Spot The Bot)
-----------------------------------
``TrueSkillEnv.from_matches`` uses mu=0, sigma=0.5, tau=0 (WMT and Spot The Bot) and

* ``beta = 0.025 * sigma^2 * n_matches``: the Spot The Bot code
  (``segmented_bootstrap_sampling.compute_trueskill_ranking``:
  ``env.beta = 0.025 * (0.5 ** 2) * len(matches)``); the paper only names TrueSkill. Scaling
  beta, the performance noise, with the amount of data makes each match move mu by O(1/n) and
  barely shrink sigma, so a pass ends with mu close to an average of the match results whose
  scale does not depend on n and hardly on the order of the matches; the bootstrap spread then
  reflects sampling variation. The WMT code does the same with ``beta = sigma * n / 40``
  (about twice as large for sigma=0.5). (That Spot The Bot code then calls the module-level
  ``rate_1vs1`` without ``env=``, so its runs actually used the package's global defaults
  beta=25/6, tau=25/300, draw probability 0.1: ``TrueSkillEnv.as_released()``; the default
  here is the setting it intended.)
* ``draw_probability`` = the share of draws among the matches (WMT fixes 0.25, the Spot The Bot
  code leaves the package default 0.10).

Ranking and clusters
--------------------
Per replicate, systems are ranked by ``mu - k * sigma`` (k=0 by default: by mu, as WMT and Spot
The Bot do), rank 1 being the best. A system's rank range keeps the central ``coverage`` of its
replicate ranks: the ``ceil(R (1 - coverage) / 2)`` lowest and highest ranks are dropped (WMT
``eval/cluster.py``; for R=1000, coverage=0.95 that is the 2.5th and 97.5th percentile).
Clusters: systems sorted by mean rank are cut between positions i and i+1 iff every range above
the cut ends before every range below it starts; overlapping ranges therefore chain into one
cluster, as in WMT's cluster boundaries and Spot The Bot's ``create_clusters``.

The Spot The Bot code differs in two details: its TrueSkill branch only shuffles the matches
(``resample=False`` here) and its rank range is the one, among those holding more than 99.5% of
the replicates, with the lowest start (``coverage=0.995`` comes close).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import special

from evalstats.match_waves import WaveScheduler

__all__ = [
    "A_WINS",
    "B_WINS",
    "DRAW",
    "TrueSkillBootstrap",
    "TrueSkillEnv",
    "TrueSkillRatings",
    "bootstrap_match_indices",
    "clusters_from_rank_ranges",
    "rank_ranges",
    "rate_matches",
    "rate_replicate_sets",
    "rate_replicates",
    "ranks_from_scores",
    "summarise_replicates",
    "trueskill_bootstrap",
    "truncation_corrections",
]

#: Outcome codes, the sign of "a's score minus b's score" (Spot The Bot's win function).
A_WINS = 1
DRAW = 0
B_WINS = -1

Backend = Literal["scipy", "builtin"]

_SQRT2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# Below this standardised margin the direct formulas lose digits (cancellation in v + x) or
# underflow (Phi(a) - Phi(b)), so the scaled forms take over. At -4 both agree to ~1e-15.
_TAIL = -4.0
# Terms of the continued fraction for v + x; 40 reach full double precision for x <= -4.
_CF_TERMS = 40
# Match positions x rows scheduled at a time (~120 bytes each in reused buffers: ~60 MB).
# Larger blocks have fewer barriers (0.53 waves per match at 1 << 19 and 1000 rows, 0.50 at
# 1 << 20, 0.47 unbounded) but measured no faster; smaller ones lose more to barriers.
_BLOCK_ELEMENTS = 1 << 19


@dataclass(frozen=True, kw_only=True)
class TrueSkillEnv:
    """TrueSkill constants, as in ``trueskill.TrueSkill(mu, sigma, beta, tau, draw_probability)``.

    ``beta`` and ``draw_probability`` have no default because the Spot The Bot setting derives
    them from the data: use :meth:`from_matches`. ``backend`` picks the normal-distribution
    functions: ``"scipy"`` (exact, stable in the tails) or ``"builtin"`` (the package's default
    approximations, to reproduce results computed with ``trueskill.TrueSkill()`` as is).
    """

    mu: float = 0.0
    sigma: float = 0.5
    beta: float
    tau: float = 0.0
    draw_probability: float
    backend: Backend = "scipy"

    def __post_init__(self):
        if not self.sigma > 0:
            raise ValueError(f"sigma must be positive, got {self.sigma}")
        if not self.beta > 0:
            raise ValueError(f"beta must be positive, got {self.beta}")
        if not self.tau >= 0:
            raise ValueError(f"tau must be non-negative, got {self.tau}")
        if not 0 <= self.draw_probability < 1:
            raise ValueError(f"draw_probability must be in [0, 1), got {self.draw_probability}")
        if self.backend not in ("scipy", "builtin"):
            raise ValueError(f"backend must be 'scipy' or 'builtin', got {self.backend!r}")

    @classmethod
    def from_matches(
        cls,
        outcome,
        *,
        mu: float = 0.0,
        sigma: float = 0.5,
        tau: float = 0.0,
        beta: float | None = None,
        beta_scale: float = 0.025,
        draw_probability: float | None = None,
        backend: Backend = "scipy",
    ) -> TrueSkillEnv:
        """Spot The Bot environment for these matches.

        ``beta = beta_scale * sigma**2 * len(outcome)`` and ``draw_probability`` = share of
        ``DRAW`` outcomes, unless given explicitly (see the module docstring for the sources).
        """
        outcome = _as_outcome(outcome)
        if outcome.size == 0:
            raise ValueError("need at least one match")
        if beta is None:
            beta = beta_scale * sigma**2 * outcome.size
        if draw_probability is None:
            draw_probability = float(np.mean(outcome == DRAW))
            if draw_probability == 1.0:
                raise ValueError("every match is a draw: TrueSkill cannot separate the systems")
        return cls(
            mu=mu,
            sigma=sigma,
            beta=beta,
            tau=tau,
            draw_probability=draw_probability,
            backend=backend,
        )

    @classmethod
    def as_released(cls) -> TrueSkillEnv:
        """What the released Spot The Bot code ran: its ratings start at mu=0, sigma=0.5, but
        it rates them with the module-level ``trueskill.rate_1vs1``, so the package's global
        environment applies: beta=25/6, tau=25/300, draw probability 0.10 and the builtin
        normal approximations (see the module docstring)."""
        return cls(
            mu=0.0,
            sigma=0.5,
            beta=25 / 6,
            tau=25 / 300,
            draw_probability=0.10,
            backend="builtin",
        )

    @property
    def draw_margin(self) -> float:
        """``Phi^-1((p + 1) / 2) * sqrt(2) * beta``, as ``trueskill.calc_draw_margin(p, 2)``."""
        ppf = special.ndtri if self.backend == "scipy" else _builtin_ppf
        # same operation order as the package, so the builtin backend matches it bit for bit
        return float(ppf((self.draw_probability + 1) / 2.0)) * _SQRT2 * self.beta


@dataclass(frozen=True, eq=False)
class TrueSkillRatings:
    """Ratings after a pass: ``mu`` and ``sigma`` of shape ``(n_players,)`` for a single pass,
    ``(n_replicates, n_players)`` for replicates."""

    mu: np.ndarray
    sigma: np.ndarray
    env: TrueSkillEnv


@dataclass(frozen=True, eq=False)
class TrueSkillBootstrap:
    """Bootstrap TrueSkill ranking (WMT / Dušek et al. 2018 / Spot The Bot).

    Attributes
    ----------
    env : environment used for every replicate.
    mu, sigma : (R, n_players) ratings per replicate.
    ranks : (R, n_players) rank per replicate, 1 = best, by ``mu - conservative_k * sigma``
        (ties go to the lower player index).
    mean_mu, mean_rank : (n_players,) averages over the replicates.
    rank_lower, rank_upper : (n_players,) rank range covering ``coverage`` of the replicates.
    order : (n_players,) player indices best first (by mean rank, then mean mu).
    cluster : (n_players,) cluster number per player, 1 = best.
    clusters : the clusters best first, each a tuple of player indices in ranking order.
    """

    env: TrueSkillEnv
    mu: np.ndarray
    sigma: np.ndarray
    ranks: np.ndarray
    mean_mu: np.ndarray
    mean_rank: np.ndarray
    rank_lower: np.ndarray
    rank_upper: np.ndarray
    order: np.ndarray
    cluster: np.ndarray
    coverage: float
    conservative_k: float
    clusters: tuple[tuple[int, ...], ...] = field(init=False)

    def __post_init__(self):
        # Players of each cluster in ranking order, best cluster first: the form in which the
        # stability analysis compares rankings.
        grouped = tuple(
            tuple(int(p) for p in self.order if self.cluster[p] == number)
            for number in range(1, int(self.cluster.max(initial=0)) + 1)
        )
        object.__setattr__(self, "clusters", grouped)


def truncation_corrections(t, eps, drawn, backend: Backend = "scipy"):
    """The TrueSkill corrections ``(v, w)`` for standardised difference ``t`` and margin ``eps``.

    ``drawn`` selects the draw formulas per element (module docstring). Arrays broadcast. With
    ``backend="builtin"`` the package's approximations are used and, like the package,
    ``FloatingPointError`` is raised where ``w`` leaves (0, 1) (win) or the draw mass is zero.
    """
    t, eps, drawn = np.broadcast_arrays(
        np.asarray(t, dtype=float), np.asarray(eps, dtype=float), np.asarray(drawn, dtype=bool)
    )
    shape = t.shape
    t, eps, drawn = t.ravel(), eps.ravel(), drawn.ravel()
    # draws first, the layout the passes give the corrections
    order = np.argsort(~drawn, kind="stable")
    n_draws = int(drawn.sum())
    v, w, mass = np.empty(t.size), np.empty(t.size), np.empty(t.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        _CORRECTIONS[backend](t[order], eps[order], n_draws, v, w, mass[:n_draws])
    if backend == "builtin":
        _check_builtin(w, mass, drawn[order])
    v_out, w_out = np.empty(t.size), np.empty(t.size)
    v_out[order], w_out[order] = v, w
    # [()] turns 0-d results into numpy scalars, like a ufunc would
    return v_out.reshape(shape)[()], w_out.reshape(shape)[()]


def bootstrap_match_indices(
    n_matches: int, n_replicates: int, *, seed=0, resample: bool = True, dtype=np.int64
):
    """``(n_replicates, n_matches)`` match indices, one row per replicate, each row in random
    order.

    ``resample=True`` draws with replacement (the bootstrap); ``resample=False`` only shuffles
    (what the Spot The Bot code's TrueSkill branch does). ``seed`` is an int or a
    ``numpy.random.Generator``. ``dtype=np.int32`` gives the same values at half the memory.
    """
    return _match_indices(n_matches, n_replicates, seed, resample, dtype)


def _match_indices(n_matches, n_replicates, seed, resample, dtype):
    """``bootstrap_match_indices`` in ``dtype``: the generator yields the same values for
    int32 as for int64 (same bounded-integer algorithm), at half the memory."""
    if n_matches < 1 or n_replicates < 1:
        raise ValueError("need at least one match and one replicate")
    rng = np.random.default_rng(seed)
    if resample:
        return rng.integers(0, n_matches, size=(n_replicates, n_matches), dtype=dtype)
    return rng.permuted(np.tile(np.arange(n_matches, dtype=dtype), (n_replicates, 1)), axis=1)


def _index_dtype(n_matches):
    return np.int32 if n_matches < np.iinfo(np.int32).max else np.int64


def rate_replicates(
    player_a, player_b, outcome, match_indices, *, n_players: int | None = None, env=None
) -> TrueSkillRatings:
    """TrueSkill passes, one per row of ``match_indices`` (``(R, L)`` indices into the matches).

    Row r processes matches ``match_indices[r, 0], match_indices[r, 1], ...`` in that order from
    the prior, exactly like ``env.rate_1vs1`` applied match by match; all rows advance together,
    so R passes cost about as much as a few single passes. ``env`` defaults to
    ``TrueSkillEnv.from_matches(outcome)``.
    """
    a, b, outcome, n_players = _validate_matches(player_a, player_b, outcome, n_players)
    env = TrueSkillEnv.from_matches(outcome) if env is None else env
    match_indices = np.asarray(match_indices)
    if match_indices.ndim != 2:
        raise ValueError("match_indices must be a 2-D (replicates, positions) array")
    if match_indices.size and (match_indices.min() < 0 or match_indices.max() >= outcome.size):
        raise ValueError("match_indices out of range")
    # A win is rated with the winner first, as rate_1vs1(winner, loser); a draw keeps (a, b).
    first = np.where(outcome == B_WINS, b, a)
    second = np.where(outcome == B_WINS, a, b)
    mu, var = _run_passes(first, second, outcome == DRAW, match_indices, n_players, env)
    return TrueSkillRatings(mu=_frozen(mu), sigma=_frozen(np.sqrt(var)), env=env)


def rate_matches(
    player_a, player_b, outcome, *, n_players: int | None = None, env=None
) -> TrueSkillRatings:
    """One TrueSkill pass over the matches in the given order: ``mu``, ``sigma`` per player."""
    n_matches = np.asarray(outcome).size
    rated = rate_replicates(
        player_a,
        player_b,
        outcome,
        np.arange(n_matches)[np.newaxis, :],
        n_players=n_players,
        env=env,
    )
    return TrueSkillRatings(mu=rated.mu[0], sigma=rated.sigma[0], env=rated.env)


def ranks_from_scores(scores):
    """Rank per row, 1 = highest score; equal scores are ranked by player index."""
    scores = np.asarray(scores, dtype=float)
    best_first = np.argsort(-scores, axis=-1, kind="stable")
    ranks = np.empty(scores.shape, dtype=np.int64)
    positions = np.broadcast_to(np.arange(1, scores.shape[-1] + 1), scores.shape)
    np.put_along_axis(ranks, best_first, positions, axis=-1)
    return ranks


def rank_ranges(ranks, coverage: float = 0.95):
    """``(lower, upper)`` rank range per player (column) covering ``coverage`` of the rows.

    Drops the ``ceil(R (1 - coverage) / 2)`` best and worst ranks of each player, as WMT's
    ``eval/cluster.py`` does; for R=1000 and 0.95 these are the 2.5th and 97.5th percentiles.
    """
    ranks = np.asarray(ranks)
    if ranks.ndim != 2 or ranks.shape[0] == 0:
        raise ValueError("ranks must be a non-empty (replicates, players) array")
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage must be in (0, 1], got {coverage}")
    n_rows = ranks.shape[0]
    # the tolerance keeps 1000 * (1 - 0.95) / 2 = 25.000000000000004 at 25
    dropped = math.ceil((n_rows - n_rows * coverage) / 2 - 1e-9)
    dropped = min(max(dropped, 0), (n_rows - 1) // 2)
    ordered = np.sort(ranks, axis=0)
    return ordered[dropped], ordered[n_rows - 1 - dropped]


def clusters_from_rank_ranges(lower, upper, order=None):
    """Cluster number per player (1 = best) from rank ranges.

    ``order`` lists the players best first (default: by lower, then upper bound). A cluster
    boundary is placed after position i iff the largest upper bound among positions <= i is
    smaller than the smallest lower bound among positions > i, so no pair of overlapping ranges
    is ever split and overlaps chain transitively along the order.
    """
    lower = np.asarray(lower)
    upper = np.asarray(upper)
    if lower.shape != upper.shape or lower.ndim != 1:
        raise ValueError("lower and upper must be 1-D arrays of the same length")
    if np.any(lower > upper):
        raise ValueError("every lower bound must be <= its upper bound")
    if order is None:
        order = np.lexsort((upper, lower))
    order = np.asarray(order)
    if sorted(order.tolist()) != list(range(lower.size)):
        raise ValueError("order must be a permutation of the players")
    if lower.size == 0:
        return np.zeros(0, dtype=np.int64)
    worst_so_far = np.maximum.accumulate(upper[order])
    best_after = np.minimum.accumulate(lower[order][::-1])[::-1]
    boundary_after = worst_so_far[:-1] < best_after[1:]
    cluster = np.empty(lower.size, dtype=np.int64)
    cluster[order] = 1 + np.concatenate(([0], np.cumsum(boundary_after)))
    return cluster


def trueskill_bootstrap(
    player_a,
    player_b,
    outcome,
    *,
    n_players: int | None = None,
    env: TrueSkillEnv | None = None,
    n_replicates: int = 1000,
    seed=0,
    resample: bool = True,
    coverage: float = 0.95,
    conservative_k: float = 0.0,
) -> TrueSkillBootstrap:
    """Bootstrap TrueSkill ranking with rank ranges and clusters.

    Replicate r rates the matches ``bootstrap_match_indices(n, n_replicates, seed=seed,
    resample=resample)[r]`` in that order with ``env`` (default
    ``TrueSkillEnv.from_matches(outcome)``, estimated once on all matches). Every player index
    below ``n_players`` is ranked, including players without matches (they keep the prior).
    """
    a, b, outcome, n_players = _validate_matches(player_a, player_b, outcome, n_players)
    env = TrueSkillEnv.from_matches(outcome) if env is None else env
    indices = _match_indices(outcome.size, n_replicates, seed, resample, _index_dtype(outcome.size))
    rated = rate_replicates(a, b, outcome, indices, n_players=n_players, env=env)
    return summarise_replicates(rated, coverage=coverage, conservative_k=conservative_k)


def summarise_replicates(
    rated: TrueSkillRatings, *, coverage: float = 0.95, conservative_k: float = 0.0
) -> TrueSkillBootstrap:
    """Ranks, rank ranges, order and clusters of replicate ratings ``rated`` (R, n_players)."""
    n_players = rated.mu.shape[1]
    ranks = ranks_from_scores(rated.mu - conservative_k * rated.sigma)
    lower, upper = rank_ranges(ranks, coverage)
    mean_mu = rated.mu.mean(axis=0)
    mean_rank = ranks.mean(axis=0)
    order = np.lexsort((np.arange(n_players), -mean_mu, mean_rank))
    return TrueSkillBootstrap(
        env=rated.env,
        mu=rated.mu,
        sigma=rated.sigma,
        ranks=_frozen(ranks),
        mean_mu=_frozen(mean_mu),
        mean_rank=_frozen(mean_rank),
        rank_lower=_frozen(lower),
        rank_upper=_frozen(upper),
        order=_frozen(order),
        cluster=_frozen(clusters_from_rank_ranges(lower, upper, order)),
        coverage=coverage,
        conservative_k=conservative_k,
    )


def rate_replicate_sets(sets) -> list[TrueSkillRatings]:
    """``rate_replicates`` for several match sets at once, each with its own environment.

    ``sets`` holds tuples ``(player_a, player_b, outcome, match_indices, n_players, env)``; the
    result is the list of what ``rate_replicates`` returns for each, element for element, but
    all rows of all sets advance together (many small bootstraps, as in the stability
    analysis, cost about as many steps as the longest one). The environments must share
    ``tau`` and ``backend``.
    """
    prepared = []
    for player_a, player_b, outcome, match_indices, n_players, env in sets:
        a, b, outcome, n_players = _validate_matches(player_a, player_b, outcome, n_players)
        match_indices = np.asarray(match_indices)
        if match_indices.ndim != 2:
            raise ValueError("match_indices must be a 2-D (replicates, positions) array")
        if match_indices.size and (match_indices.min() < 0 or match_indices.max() >= outcome.size):
            raise ValueError("match_indices out of range")
        prepared.append((a, b, outcome, match_indices, n_players, env))
    if not prepared:
        return []
    envs = [item[5] for item in prepared]
    if len({(e.tau, e.backend) for e in envs}) > 1:
        raise ValueError("all match sets must share tau and backend")
    # longest sets first, so that the rows still running always form a prefix (_run_rows)
    by_length = sorted(range(len(prepared)), key=lambda i: -prepared[i][3].shape[1])
    ordered = [prepared[i] for i in by_length]
    firsts, seconds, drawn, offsets = [], [], [], []
    bases, mu0, var0, two_beta2, margin, lengths = [], [], [], [], [], []
    set_rows = [None] * len(prepared)
    match_offset = flat_offset = 0
    for i, (a, b, outcome, indices, n_players, env) in zip(by_length, ordered, strict=True):
        firsts.append(np.where(outcome == B_WINS, b, a))
        seconds.append(np.where(outcome == B_WINS, a, b))
        drawn.append(outcome == DRAW)
        offsets.append(match_offset)
        match_offset += outcome.size
        n_rows, n_positions = indices.shape
        bases.append(flat_offset + np.arange(n_rows) * n_players)
        size = n_rows * n_players
        mu0.append(np.full(size, float(env.mu)))
        var0.append(np.full(size, float(env.sigma) ** 2))
        set_rows[i] = (flat_offset, n_rows, n_players)
        flat_offset += size
        two_beta2.append(np.full(n_rows, 2.0 * float(env.beta) ** 2))
        margin.append(np.full(n_rows, env.draw_margin))
        lengths.append(np.full(n_rows, n_positions))

    def columns(start, stop, n_active, out):
        row = 0
        for (_, _, _, indices, _, _), offset in zip(ordered, offsets, strict=True):
            if row >= n_active:
                break
            rows = slice(row, row + indices.shape[0])
            part = indices[:, start:stop].T
            np.add(part, offset, out=out[: part.shape[0], rows])
            out[part.shape[0] :, rows] = offset  # past the set's end: any valid match
            row = rows.stop

    mu, var = _run_rows(
        np.concatenate(firsts),
        np.concatenate(seconds),
        np.concatenate(drawn),
        columns,
        np.concatenate(lengths),
        np.concatenate(bases),
        np.concatenate(mu0),
        np.concatenate(var0),
        np.concatenate(two_beta2),
        np.concatenate(margin),
        float(envs[0].tau) ** 2,
        envs[0].backend,
    )
    results = []
    for (start, n_rows, n_players), env in zip(set_rows, envs, strict=True):
        stop = start + n_rows * n_players
        results.append(
            TrueSkillRatings(
                mu=_frozen(mu[start:stop].reshape(n_rows, n_players)),
                sigma=_frozen(np.sqrt(var[start:stop]).reshape(n_rows, n_players)),
                env=env,
            )
        )
    return results


# --- the vectorised passes -------------------------------------------------------------------


def _run_passes(first, second, drawn, match_indices, n_players, env):
    """Run all rows of ``match_indices`` in lockstep; returns ``(mu, var)`` of shape (R, k)."""
    n_rows, n_positions = match_indices.shape
    mu, var = _run_rows(
        first,
        second,
        drawn,
        lambda start, stop, n_active, out: np.copyto(out, match_indices[:n_active, start:stop].T),
        np.full(n_rows, n_positions),
        np.arange(n_rows) * n_players,
        np.full(n_rows * n_players, float(env.mu)),
        np.full(n_rows * n_players, float(env.sigma) ** 2),
        2.0 * float(env.beta) ** 2,
        env.draw_margin,
        float(env.tau) ** 2,
        env.backend,
    )
    return mu.reshape(n_rows, n_players), var.reshape(n_rows, n_players)


def _run_rows(
    first, second, drawn, columns, lengths, base, mu, var, two_beta2, margin, tau2, backend
):
    """TrueSkill passes, one per row, all rows advancing together; updates ``mu``/``var``.

    Rows are sorted by length, longest first; ``columns(start, stop, n, out)`` writes the
    match indices of positions [start, stop) of the first n rows into ``out``, shaped
    (stop - start, n) (row r only uses its first ``lengths[r]`` positions). The ratings of
    row r live in the flat vectors at ``base[r] + player``. ``two_beta2`` and ``margin`` are
    scalars or one value per row (rows rated with different environments).

    Within a block of positions every row's matches run in waves of matches without a common
    player (``match_waves``): the same arithmetic on the same values as match by match, in
    about half as many numpy steps of twice the width (per-call overhead, not arithmetic,
    dominated steps of ~1000 elements). A block ends with a barrier (all its waves before the
    next block's), which bounds the memory and keeps the result exact. Only the rows still
    running enter a block.
    """
    n_rows = lengths.size
    n_positions = int(lengths.max(initial=0))
    per_row = np.ndim(two_beta2) > 0 or np.ndim(margin) > 0
    two_beta2_rows = np.broadcast_to(two_beta2, n_rows)
    margin_rows = np.broadcast_to(margin, n_rows)
    # one gather per entry instead of three (the match tables of a batch of stability
    # subsamples reach tens of megabytes, so each gather misses the cache)
    match_codes = _match_codes(first, second, drawn)
    scheduler = WaveScheduler(mu.size)
    buffer = scheduler.buffer
    start = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        while start < n_positions:
            # only the rows still running (a prefix), in blocks of about _BLOCK_ELEMENTS
            n_active = int(np.count_nonzero(lengths > start))
            stop = min(start + max(1, _BLOCK_ELEMENTS // n_active), n_positions)
            first_flat, second_flat, drawn_flat = _block_slots(
                columns, match_codes, base[:n_active], start, stop, buffer
            )
            active = None
            if lengths[n_active - 1] < stop:
                active = np.arange(start, stop)[:, None] < lengths[None, :n_active]
            schedule = scheduler.schedule(first_flat, second_flat, drawn_flat, active)
            order = schedule.order
            n_entries = order.size
            if per_row:
                rows = np.remainder(order, n_active, out=buffer("rows", n_entries, np.intp))
                two_beta2_block = _take(two_beta2_rows, rows, buffer("two_beta2", n_entries, float))
                margin_block = _take(margin_rows, rows, buffer("margin", n_entries, float))
            else:
                two_beta2_block, margin_block = two_beta2, margin
            w, mass = buffer("w", n_entries, float), buffer("mass", n_entries, float)
            _run_steps(
                schedule,
                _take(first_flat.ravel(), order, buffer("first_steps", n_entries, np.intp)),
                _take(second_flat.ravel(), order, buffer("second_steps", n_entries, np.intp)),
                mu,
                var,
                two_beta2_block,
                margin_block,
                tau2,
                backend,
                w,
                mass,
                buffer("v_pairs", 2 * n_entries, float),
            )
            if backend == "builtin":
                drawn_in_order = schedule.drawn()
                _check_builtin(w, mass, drawn_in_order)
            start = stop
    return mu, var


def _block_slots(columns, match_codes, base, start, stop, buffer):
    """Rating slots of both players and the draw flag (0/1) of positions [start, stop) of
    the first ``base.size`` rows, each ``(stop - start, rows)``, in ``buffer``s."""
    shape = (stop - start, base.size)
    matches = buffer("matches", shape, np.intp)
    columns(start, stop, base.size, matches)
    codes = _take(match_codes, matches, buffer("codes", shape, np.int64))
    first = np.right_shift(codes, 32, out=buffer("first", shape, np.intp))
    first += base
    second = np.right_shift(codes, 1, out=buffer("second", shape, np.intp))
    second &= _PLAYER_MASK
    second += base
    drawn = np.bitwise_and(codes, 1, out=buffer("drawn", shape, np.int8))
    return first, second, drawn


def _run_steps(
    schedule, first, second, mu, var, two_beta2, margin, tau2, backend, w_block, mass_block, v_pairs
):
    """The steps of one block's ``schedule``, updating ``mu`` and ``var`` in place.

    ``first`` and ``second`` are the rating slots of the entries in schedule order. A step
    of k matches gathers its 2k ratings at once (first players, then second players) and
    updates both players of every match with one ufunc over 2k elements per term of the
    update (the second player's mu step is the first's with -v: the same rounding).
    ``two_beta2`` and ``margin`` are scalars or one value per entry of the schedule.

    Every entry's w and every draw's mass are kept in ``w_block`` and ``mass_block`` for the
    builtin backend's checks: the package raises where a win's w leaves (0, 1) or a draw's
    mass is 0; such values can only make later steps of the block nan or inf, so one check
    per block raises in exactly the same cases as one check per match.
    """
    per_entry = np.ndim(two_beta2) > 0
    corrections = _CORRECTIONS[backend]
    for lo, hi, nd in schedule.steps():
        k = hi - lo
        slots = np.concatenate((first[lo:hi], second[lo:hi]))
        mu_pair, var_pair = mu.take(slots), var.take(slots)
        if tau2:
            var_pair += tau2
        c2, c = np.empty(2 * k), np.empty(2 * k)
        np.add(two_beta2[lo:hi] if per_entry else two_beta2, var_pair[:k], out=c2[:k])
        c2[:k] += var_pair[k:]
        c2[k:] = c2[:k]
        np.sqrt(c2[:k], out=c[:k])
        c[k:] = c[:k]
        eps = (margin[lo:hi] if per_entry else margin) / c[:k]
        t = mu_pair[:k] - mu_pair[k:]
        t /= c[:k]
        v, w = v_pairs[2 * lo : 2 * hi], w_block[lo:hi]
        corrections(t, eps, nd, v[:k], w, mass_block[lo : lo + nd])
        np.negative(v[:k], out=v[k:])
        # mu_first + var_first / c * v and mu_second - var_second / c * v
        step = var_pair / c
        step *= v
        step += mu_pair
        mu[slots] = step
        # var * (1 - var / c2 * w)
        shrink = var_pair / c2
        shrink[:k] *= w
        shrink[k:] *= w
        np.subtract(1.0, shrink, out=shrink)
        shrink *= var_pair
        var[slots] = shrink


_PLAYER_MASK = (1 << 31) - 1


def _match_codes(first, second, drawn):
    """``first << 32 | second << 1 | drawn`` per match, as int64."""
    if first.size and max(first.max(), second.max()) > _PLAYER_MASK:
        raise ValueError("too many players")
    codes = first.astype(np.int64) << 32
    codes |= second.astype(np.int64) << 1
    codes |= drawn
    return codes


def _take(values, indices, out):
    """``values[indices]`` into ``out``; the indices are known to be in range. (With the
    default mode="raise", ``np.take`` copies through a temporary buffer whenever ``out`` is
    given, which costs as much as the gather.)"""
    return np.take(values, indices, out=out, mode="clip")


# --- v and w -----------------------------------------------------------------------------------
#
# ``_CORRECTIONS[backend](t, eps, n_draws, v, w, mass)`` writes the corrections of a step into
# ``v`` and ``w``: the first ``n_draws`` elements are draws, the rest wins; the draw masses go to
# ``mass``. The normal cdf and pdf are evaluated once for all draw bounds and win margins, and
# every temporary is reused in place: at the widths of a step (a few thousand) the fixed cost of
# a numpy call still outweighs its arithmetic. Each formula keeps the operations, and their order,
# of the module docstring (and of the package), so results do not depend on this arrangement.


def _draw_bounds(t, eps, bounds):
    """``a = eps - |t|`` and ``b = -eps - |t|`` of draws into ``bounds`` (a then b); returns |t|."""
    n = t.size
    s = np.abs(t)
    np.subtract(eps, s, out=bounds[:n])
    np.negative(eps, out=bounds[n:])
    bounds[n:] -= s
    return s


def _draw_from(a, b, cdf_a, cdf_b, pdf_a, pdf_b, v, w, mass):
    """Unsigned draw corrections into ``v``, ``w``; overwrites ``pdf_b``."""
    np.subtract(cdf_a, cdf_b, out=mass)
    np.subtract(pdf_b, pdf_a, out=v)
    v /= mass
    np.multiply(a, pdf_a, out=w)
    pdf_b *= b
    w -= pdf_b
    w /= mass
    w += v * v


def _apply_sign(v, t):
    """``v *= sign(t)`` with sign(0) = 1 (a faster form of ``np.where(t < 0, -1.0, 1.0)``,
    equal for every t the passes produce: a difference of equal ratings is +0, never -0)."""
    v *= np.copysign(1.0, t)


def _pdf(x):
    """``phi(x) = exp(-x^2 / 2) / sqrt(2 pi)``."""
    y = x * x
    y /= -2.0
    np.exp(y, out=y)
    y *= _INV_SQRT_2PI
    return y


# --- scipy backend (exact, stable in the tails) ----------------------------------------------


def _corrections_scipy(t, eps, n_draws, v, w, mass):
    if n_draws < t.size:
        _win_scipy(t[n_draws:] - eps[n_draws:], v[n_draws:], w[n_draws:])
    if n_draws:
        _draw_scipy(t[:n_draws], eps[:n_draws], v[:n_draws], w[:n_draws], mass)


def _win_scipy(x, v, w):
    # phi(x) / Phi(x) = sqrt(2/pi) / erfcx(-x/sqrt2): no underflow of Phi for x << 0
    np.divide(x, -_SQRT2, out=v)
    special.erfcx(v, out=v)
    np.divide(_SQRT_2_OVER_PI, v, out=v)
    np.add(v, x, out=w)
    # one reduction (fmin skips nan, as the mask would); the mask only when needed (rarely)
    if np.fmin.reduce(x) < _TAIL:
        tail = x < _TAIL
        w[tail] = _v_plus_x_tail(-x[tail])
    w *= v


def _v_plus_x_tail(z):
    """``v(-z) - z`` for z >= 4 without the cancellation of two ~z sized terms.

    Laplace's continued fraction of the Mills ratio R(z) = 1/(z + 1/(z + 2/(z + 3/(z + ...))))
    gives ``1/R(z) - z = 1/(z + 2/(z + 3/(z + ...)))``, evaluated from the innermost term.
    """
    h = z
    for k in range(_CF_TERMS, 1, -1):
        h = z + k / h
    return 1.0 / h


def _draw_scipy(t, eps, v, w, mass):
    n = t.size
    bounds = np.empty(2 * n)
    s = _draw_bounds(t, eps, bounds)
    a, b = bounds[:n], bounds[n:]
    cdf, pdf = special.ndtr(bounds), _pdf(bounds)
    _draw_from(a, b, cdf[:n], cdf[n:], pdf[:n], pdf[n:], v, w, mass)
    if np.fmin.reduce(a) < _TAIL:
        tail = a < _TAIL
        v[tail], w[tail] = _draw_scipy_tail(a[tail], b[tail], eps[tail], s[tail])
    _apply_sign(v, t)


def _draw_scipy_tail(a, b, eps, s):
    """Draw corrections for a < -4, with phi(a) factored out of every term.

    With r = phi(b)/phi(a) = exp(-2 eps |t|) and Phi(x) = phi(x) sqrt(pi/2) erfcx(-x/sqrt2):
    v = sqrt(2/pi) (r - 1) / D and w = v^2 + sqrt(2/pi) (a - r b) / D,
    D = erfcx(-a/sqrt2) - r erfcx(-b/sqrt2). Nothing underflows; 1 - w keeps ~a^2 ulps.
    """
    r = np.exp(-2.0 * eps * s)
    scaled_mass = special.erfcx(-a / _SQRT2) - r * special.erfcx(-b / _SQRT2)
    v = _SQRT_2_OVER_PI * np.expm1(-2.0 * eps * s) / scaled_mass
    w = v * v + _SQRT_2_OVER_PI * (a - r * b) / scaled_mass
    return v, w


# --- builtin backend (the trueskill package's default approximations) ------------------------


def _corrections_builtin(t, eps, n_draws, v, w, mass):
    n_bounds = 2 * n_draws
    points = np.empty(t.size + n_draws)  # the draws' a and b, then the wins' x
    if n_draws:
        _draw_bounds(t[:n_draws], eps[:n_draws], points[:n_bounds])
    x = np.subtract(t[n_draws:], eps[n_draws:], out=points[n_bounds:])
    cdf, pdf = _builtin_cdf(points), _pdf(points)
    if n_draws < t.size:
        # The package returns v = -x where the cdf underflows to 0, so w = -x * 0 and it raises
        # (w not in (0, 1)); pdf / 0 gives an inf or nan w instead, which fails the same check.
        v_won, w_won = v[n_draws:], w[n_draws:]
        np.divide(pdf[n_bounds:], cdf[n_bounds:], out=v_won)
        np.add(v_won, x, out=w_won)
        w_won *= v_won
    if n_draws:
        a, b = points[:n_draws], points[n_draws:n_bounds]
        v_drawn = v[:n_draws]
        _draw_from(
            a,
            b,
            cdf[:n_draws],
            cdf[n_draws:n_bounds],
            pdf[:n_draws],
            pdf[n_draws:n_bounds],
            v_drawn,
            w[:n_draws],
            mass,
        )
        _apply_sign(v_drawn, t[:n_draws])


def _check_builtin(w, mass, drawn):
    """Raise where the package does: a win's w outside (0, 1) (or nan), a draw of zero mass.

    ``w`` and ``mass`` hold one value per element, ``drawn`` says which formula applied (the
    other's value is not looked at). Masked reductions: no block-sized temporaries.
    """
    if w.min() > 0 and w.max() < 1 and mass.all():
        return  # every element passes both checks (the usual case: plain, fast reductions)
    won = ~drawn
    w_in_range = w.min(where=won, initial=np.inf) > 0 and w.max(where=won, initial=-np.inf) < 1
    if not w_in_range or not np.all(mass, where=drawn):
        raise FloatingPointError('Cannot calculate correctly, set backend to "mpmath"')


def _builtin_erfc(x):
    """trueskill.backends.erfc: Numerical Recipes' erfcc, relative error < 1.2e-7."""
    z = np.abs(x)
    t = 1.0 / (1.0 + z / 2.0)
    poly = -1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))
    poly = -0.18628806 + t * (0.27886807 + t * poly)
    poly = 1.00002368 + t * (0.37409196 + t * (0.09678418 + t * poly))
    r = t * np.exp(-z * z - 1.26551223 + t * poly)
    return np.where(x < 0, 2.0 - r, r)


def _builtin_ppf(p):
    """trueskill.backends.ppf: inverse of the approximate cdf (two Newton steps on erfc)."""
    y = 2.0 * p
    if y >= 2:
        erfcinv = -100.0
    elif y <= 0:
        erfcinv = 100.0
    else:
        lower_half = y < 1
        if not lower_half:
            y = 2 - y
        t = math.sqrt(-2 * math.log(y / 2.0))
        x = -0.70711 * ((2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t)
        for _ in range(2):
            err = float(_builtin_erfc(x)) - y
            x += err / (1.12837916709551257 * math.exp(-(x**2)) - x * err)
        erfcinv = x if lower_half else -x
    return 0.0 - 1.0 * math.sqrt(2) * erfcinv


def _builtin_cdf(x):
    """``0.5 * _builtin_erfc(-x / sqrt2)`` for an array, rounded the same, in place.

    Exact rewrites only: ``|-x / sqrt2| = |x| / sqrt2``; ``-z*z - c + q = q - (z*z + c)``;
    the erfc argument is negative iff x > 0 (x / sqrt2 never underflows to 0).
    """
    z = np.abs(x)
    z /= _SQRT2
    t = z / 2.0
    t += 1.0
    np.divide(1.0, t, out=t)
    poly = t * 0.17087277
    for coefficient in _ERFC_HORNER:
        poly += coefficient
        poly *= t
    z *= z
    z += 1.26551223
    poly -= z
    np.exp(poly, out=poly)
    poly *= t
    # (np.where is faster than a masked ufunc here)
    cdf = np.where(x > 0, 2.0 - poly, poly)
    cdf *= 0.5
    return cdf


# _builtin_erfc's nested polynomial, innermost coefficient first (each added, then times t)
_ERFC_HORNER = (
    -0.82215223,
    1.48851587,
    -1.13520398,
    0.27886807,
    -0.18628806,
    0.09678418,
    0.37409196,
    1.00002368,
)
_CORRECTIONS = {"scipy": _corrections_scipy, "builtin": _corrections_builtin}


# --- input handling ----------------------------------------------------------------------------


def _as_outcome(outcome):
    outcome = np.asarray(outcome)
    if outcome.ndim != 1:
        raise ValueError("outcome must be 1-D")
    if not np.isin(outcome, (A_WINS, DRAW, B_WINS)).all():
        raise ValueError("outcome values must be A_WINS (1), DRAW (0) or B_WINS (-1)")
    return outcome.astype(np.int8)


def _validate_matches(player_a, player_b, outcome, n_players):
    a = np.asarray(player_a)
    b = np.asarray(player_b)
    outcome = _as_outcome(outcome)
    if a.shape != outcome.shape or b.shape != outcome.shape:
        raise ValueError("player_a, player_b and outcome must have the same length")
    if outcome.size and not (
        np.issubdtype(a.dtype, np.integer) and np.issubdtype(b.dtype, np.integer)
    ):
        raise ValueError("player indices must be integers")
    a = a.astype(np.intp)
    b = b.astype(np.intp)
    if np.any(a == b):
        raise ValueError("a player cannot play against itself")
    if outcome.size and min(a.min(), b.min()) < 0:
        raise ValueError("player indices must be non-negative")
    highest = int(max(a.max(), b.max())) if outcome.size else -1
    if n_players is None:
        n_players = highest + 1
    elif highest >= n_players:
        raise ValueError(f"player index {highest} out of range for n_players={n_players}")
    return a, b, outcome, n_players


def _frozen(array):
    array = np.asarray(array)
    array.setflags(write=False)
    return array
