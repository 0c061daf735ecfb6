"""How many conversations per pair of systems a stable cluster ranking needs.

Spot The Bot (Deriu et al., EMNLP 2020, section "On Reliability"; code
``ranking_significance.repeat_ranking``): for n in a grid, draw n conversations per pair of
systems (without replacement), recompute the bootstrap TrueSkill cluster ranking from the
judgments of the drawn conversations, repeat, and report how often the ranking comes out the
same. The leave-one-out variant repeats the analysis on the pool without one system, which
shows whether a single hard-to-separate system is what makes the ranking unstable.

Two shares are reported per n:

* ``share_reproduced``: subsamples whose cluster ranking equals the ranking of all the data
  (the question "would a smaller study have found our result?");
* ``share_modal``: subsamples whose ranking equals the most common subsample ranking, which is
  what the Spot The Bot code prints (``n / repetitions`` of ``Counter.most_common``).

Each share is a proportion of subsamples, so it comes with a 95% Wilson interval; with
``precision`` the number of subsamples is chosen per grid point: subsamples are drawn in
rounds of 50 until the Wilson interval of the share reproduced lies within ``± precision``
of it (or ``n_subsamples``, the most allowed, are drawn). 385 subsamples always suffice for
``± 0.05`` (the interval is widest at a share of 1/2: 1.96^2 / (4 * 0.05^2) = 384.2); a
share near 0 or 1 needs far fewer (all 73 of 73 reproduced: [0.95, 1]). The stopping rule
looks only at the interval's width, and the first m subsamples of a point are the same
whatever the rounds.

A cluster ranking is a tuple of clusters, best first, each a sorted tuple of system indices, so
the order inside a cluster does not matter (as in the Spot The Bot code). Each subsample is
ranked with ``trueskill_bootstrap`` and its own ``TrueSkillEnv.from_matches`` environment (beta
and draw probability follow the subsample's size and ties, as the Spot The Bot code does).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evalstats.proportions import wilson_interval
from evalstats.trueskill import (
    TrueSkillEnv,
    bootstrap_match_indices,
    rate_replicate_sets,
    summarise_replicates,
)

__all__ = [
    "ClusterRanking",
    "LeaveOneOutStability",
    "StabilityResult",
    "SubsampleRankings",
    "cluster_ranking",
    "leave_one_out_stability",
    "ranking_stability",
    "restrict_ranking",
    "subsample_conversations",
    "subsample_rankings",
]

ClusterRanking = tuple[tuple[int, ...], ...]

# Subsamples drawn per grid point and round when a precision is asked for.
ROUND = 50


def share_interval(count, total) -> tuple[np.ndarray, np.ndarray]:
    """95% Wilson interval of ``count / total`` subsamples (vectorised)."""
    interval = wilson_interval(count, total, 0.95)
    low, high = interval.confidence_interval
    return np.asarray(low, dtype=float), np.asarray(high, dtype=float)


def half_width(count: int, total: int) -> float:
    """How far the 95% Wilson interval of ``count / total`` reaches from it, either side."""
    low, high = share_interval(count, total)
    share = count / total
    return float(max(share - low, high - share))


@dataclass(frozen=True, eq=False)
class StabilityResult:
    """Share of subsamples reproducing the cluster ranking, per number of conversations.

    Attributes
    ----------
    systems : system (player) indices that were ranked.
    reference : cluster ranking of all the judgments of these systems.
    n_conversations : (G,) conversations drawn per pair.
    share_reproduced : (G,) share of subsamples whose ranking equals ``reference``.
    reproduced_low, reproduced_high : (G,) its 95% Wilson interval.
    share_modal : (G,) share of the most common subsample ranking.
    modal_rankings : the most common subsample ranking per n.
    n_subsamples, n_replicates : the most subsamples per n, bootstrap replicates per subsample.
    n_drawn : (G,) subsamples drawn per n (``n_subsamples`` each without a precision).
    precision : the half-width each point's interval was drawn to reach, or None.
    """

    systems: tuple[int, ...]
    reference: ClusterRanking
    n_conversations: np.ndarray
    share_reproduced: np.ndarray
    share_modal: np.ndarray
    modal_rankings: tuple[ClusterRanking, ...]
    n_subsamples: int
    n_replicates: int
    reproduced_low: np.ndarray | None = None
    reproduced_high: np.ndarray | None = None
    n_drawn: np.ndarray | None = None
    precision: float | None = None


@dataclass(frozen=True, eq=False)
class LeaveOneOutStability:
    """Stability of the pool without ``left_out``.

    ``keeps_full_ranking`` tells whether ranking all the judgments without ``left_out`` gives
    the full-pool ranking with ``left_out`` removed (its cluster shrunk or dropped).
    """

    left_out: int
    stability: StabilityResult
    keeps_full_ranking: bool


def cluster_ranking(
    player_a,
    player_b,
    outcome,
    *,
    n_replicates: int = 1000,
    seed=0,
    coverage: float = 0.95,
    env_options: Mapping | None = None,
) -> ClusterRanking:
    """Bootstrap TrueSkill cluster ranking of the systems that appear in these matches.

    Player indices may be sparse (e.g. after leaving a system out): only systems with at least
    one match are ranked, and the ranking is given in the original indices.
    """
    problem = _ranking_problem(player_a, player_b, outcome, n_replicates, seed, env_options)
    return _rank_problems([problem], coverage)[0]


# Bootstrap index entries (replicates x matches) rated together; ~4 bytes each for the
# indices plus the flat ratings, so a batch stays near 100 MB whatever the parameters.
_BATCH_ENTRIES = 1 << 25


def _ranking_problem(player_a, player_b, outcome, n_replicates, seed, env_options):
    """Everything ``cluster_ranking`` needs before rating, drawing its bootstrap indices from
    ``seed`` now (so a shared generator advances exactly as ``trueskill_bootstrap`` would)."""
    player_a = np.asarray(player_a)
    player_b = np.asarray(player_b)
    systems, compact = np.unique(np.concatenate([player_a, player_b]), return_inverse=True)
    compact_a, compact_b = compact[: player_a.size], compact[player_a.size :]
    env = TrueSkillEnv.from_matches(outcome, **dict(env_options or {}))
    n_matches = np.asarray(outcome).size
    # int32 halves the memory of the many index matrices held for one batch
    dtype = np.int32 if n_matches < 2**31 else np.int64
    indices = bootstrap_match_indices(n_matches, n_replicates, seed=seed, dtype=dtype)
    return systems, (compact_a, compact_b, outcome, indices, systems.size, env)


def _rank_problems(problems, coverage) -> list[ClusterRanking]:
    """Cluster rankings of ``_ranking_problem``s, rated in batches of many at once."""
    rankings: list[ClusterRanking] = []
    batch: list = []
    entries = 0

    def flush():
        rated = rate_replicate_sets([problem for _, problem in batch])
        for (systems, _), ratings in zip(batch, rated, strict=True):
            result = summarise_replicates(ratings, coverage=coverage)
            rankings.append(
                tuple(
                    tuple(sorted(int(systems[p]) for p in cluster)) for cluster in result.clusters
                )
            )
        batch.clear()

    for systems, problem in problems:
        size = problem[3].size
        if batch and entries + size > _BATCH_ENTRIES:
            flush()
            entries = 0
        batch.append((systems, problem))
        entries += size
    if batch:
        flush()
    return rankings


def restrict_ranking(ranking: ClusterRanking, systems) -> ClusterRanking:
    """The ranking with only ``systems`` kept; clusters left empty disappear."""
    keep = {int(s) for s in systems}
    restricted = (tuple(s for s in cluster if s in keep) for cluster in ranking)
    return tuple(cluster for cluster in restricted if cluster)


def subsample_conversations(conversation_id, pair_id, n_per_pair: int, rng) -> np.ndarray:
    """Boolean mask over judgments: ``n_per_pair`` random conversations of every pair, all the
    judgments of each drawn conversation (drawn without replacement, as ``random.sample`` in
    the Spot The Bot code)."""
    _, pair_of_conversation, judgment_conversation = _conversation_pairs(conversation_id, pair_id)
    smallest = np.bincount(pair_of_conversation).min()
    if not 1 <= n_per_pair <= smallest:
        raise ValueError(
            f"n_per_pair must be between 1 and {smallest} (the fewest conversations of a pair)"
        )
    chosen = _draw_conversations(pair_of_conversation, n_per_pair, np.random.default_rng(rng))
    return chosen[judgment_conversation]


@dataclass(frozen=True, eq=False)
class SubsampleRankings:
    """The cluster ranking of every subsample of ``subsample_rankings``, not yet compared
    with the ranking of all the data.

    Attributes
    ----------
    systems : system (player) indices that were ranked.
    n_conversations : (G,) conversations drawn per pair.
    rankings : the rankings of every grid point's subsamples, grid point after grid point.
    n_subsamples, n_replicates : the most subsamples per n, bootstrap replicates per subsample.
    reference : the cluster ranking of all the data, when it was rated with the subsamples
        (``reference_replicates``) or given, else None.
    drawn : subsamples drawn per grid point (None: ``n_subsamples`` each).
    precision : the half-width each point was drawn to reach, or None.
    """

    systems: tuple[int, ...]
    n_conversations: np.ndarray
    rankings: tuple[ClusterRanking, ...]
    n_subsamples: int
    n_replicates: int
    reference: ClusterRanking | None = None
    drawn: tuple[int, ...] | None = None
    precision: float | None = None

    def against(self, reference: ClusterRanking) -> StabilityResult:
        """The stability of ``reference`` (the cluster ranking of all the data)."""
        drawn = self.drawn or (self.n_subsamples,) * self.n_conversations.size
        ends = np.cumsum(drawn)
        reproduced, modal_share, modal = [], [], []
        for end, size in zip(ends.tolist(), drawn, strict=True):
            counts = Counter(self.rankings[end - size : end])
            ranking, count = counts.most_common(1)[0]
            reproduced.append(counts[reference])
            modal_share.append(count / size)
            modal.append(ranking)
        total = np.array(drawn, dtype=float)
        low, high = share_interval(np.array(reproduced, dtype=float), total)
        return StabilityResult(
            systems=self.systems,
            reference=reference,
            n_conversations=self.n_conversations,
            share_reproduced=np.array(reproduced) / total,
            share_modal=np.array(modal_share),
            modal_rankings=tuple(modal),
            n_subsamples=self.n_subsamples,
            n_replicates=self.n_replicates,
            reproduced_low=low,
            reproduced_high=high,
            n_drawn=np.array(drawn, dtype=np.int64),
            precision=self.precision,
        )


def ranking_stability(
    player_a,
    player_b,
    outcome,
    conversation_id,
    pair_id,
    n_grid: Sequence[int],
    *,
    n_subsamples: int = 100,
    n_replicates: int = 100,
    reference_replicates: int = 1000,
    seed: int = 0,
    coverage: float = 0.95,
    env_options: Mapping | None = None,
    reference: ClusterRanking | None = None,
    precision: float | None = None,
) -> StabilityResult:
    """Share of subsamples with n conversations per pair that reproduce the cluster ranking.

    Inputs are per judgment: the two systems, the outcome (``A_WINS``/``DRAW``/``B_WINS``), the
    conversation and the pair the conversation belongs to (any hashable labels). The
    subsamples for each n come from ``SeedSequence([seed, n])``, so a share does not depend on
    which other values are in ``n_grid``.

    ``reference`` is the cluster ranking of all the judgments when the caller has it already
    (``cluster_ranking`` with ``reference_replicates``, ``seed`` and the same options, e.g.
    the report's own TrueSkill bootstrap); it is computed otherwise, rated together with the
    subsamples. It comes from its own generator, so passing it changes none of the
    subsamples' draws. With ``precision`` each grid point draws subsamples until its share's
    95% Wilson interval is within ``± precision`` (at most ``n_subsamples``; see the module).
    """
    subsamples = subsample_rankings(
        player_a,
        player_b,
        outcome,
        conversation_id,
        pair_id,
        n_grid,
        n_subsamples=n_subsamples,
        n_replicates=n_replicates,
        reference_replicates=reference_replicates if reference is None else None,
        seed=seed,
        coverage=coverage,
        env_options=env_options,
        reference=reference,
        precision=precision,
    )
    return subsamples.against(subsamples.reference if reference is None else reference)


def subsample_rankings(
    player_a,
    player_b,
    outcome,
    conversation_id,
    pair_id,
    n_grid: Sequence[int],
    *,
    n_subsamples: int = 100,
    n_replicates: int = 100,
    reference_replicates: int | None = None,
    seed: int = 0,
    coverage: float = 0.95,
    env_options: Mapping | None = None,
    reference: ClusterRanking | None = None,
    precision: float | None = None,
) -> SubsampleRankings:
    """The subsamples of ``ranking_stability`` ranked, the costly part of the analysis:
    ``.against(reference)`` then gives what ``ranking_stability`` gives with that reference.
    With ``reference_replicates`` the ranking of all the data is rated in the same batch
    (``.reference``). With ``precision`` (``0 < precision < 1``) the subsamples are drawn in
    rounds until each point's share reproducing the reference is known to ``± precision``,
    which needs the reference first: ``reference``, or the one ``reference_replicates``
    rate."""
    player_a, player_b, outcome = (np.asarray(x) for x in (player_a, player_b, outcome))
    _, pair_of_conversation, judgment_conversation = _conversation_pairs(conversation_id, pair_id)
    if judgment_conversation.size != outcome.size:
        raise ValueError("conversation_id and pair_id need one entry per judgment")
    grid = np.asarray(n_grid, dtype=np.int64)
    smallest = np.bincount(pair_of_conversation).min()
    if grid.size == 0 or grid.min() < 1 or grid.max() > smallest:
        raise ValueError(f"n_grid values must be between 1 and {smallest}")
    if n_subsamples < 1:
        raise ValueError("n_subsamples must be positive")

    def problem(mask, rng, replicates):
        return _ranking_problem(
            player_a[mask], player_b[mask], outcome[mask], replicates, rng, env_options
        )

    if precision is not None:
        if not 0 < precision < 1:
            raise ValueError("precision must be between 0 and 1")
        if reference is None:
            if reference_replicates is None:
                raise ValueError("a precision needs the reference ranking or its replicates")
            everything = np.ones(outcome.size, dtype=bool)
            reference = _rank_problems(
                [problem(everything, np.random.default_rng(seed), reference_replicates)],
                coverage,
            )[0]
        by_point = _rank_in_rounds(
            grid, pair_of_conversation, judgment_conversation, problem, reference,
            n_subsamples=n_subsamples, n_replicates=n_replicates, seed=seed,
            coverage=coverage, precision=precision,
        )  # fmt: skip
        systems = np.unique(np.concatenate([player_a, player_b]))
        return SubsampleRankings(
            systems=tuple(int(s) for s in systems),
            n_conversations=grid,
            rankings=tuple(r for rankings in by_point for r in rankings),
            n_subsamples=n_subsamples,
            n_replicates=n_replicates,
            reference=reference,
            drawn=tuple(len(rankings) for rankings in by_point),
            precision=precision,
        )

    def problems():
        # Drawn in the order of one subsample after the other (conversations, then bootstrap
        # indices, from the grid point's generator): the same draws as ranking each in turn.
        if reference_replicates is not None:
            everything = np.ones(outcome.size, dtype=bool)
            yield problem(everything, np.random.default_rng(seed), reference_replicates)
        for n in grid:
            rng = np.random.default_rng(np.random.SeedSequence([seed, int(n)]))
            for _ in range(n_subsamples):
                chosen = _draw_conversations(pair_of_conversation, int(n), rng)
                yield problem(chosen[judgment_conversation], rng, n_replicates)

    rankings = _rank_problems(problems(), coverage)
    systems = np.unique(np.concatenate([player_a, player_b]))
    return SubsampleRankings(
        systems=tuple(int(s) for s in systems),
        n_conversations=grid,
        rankings=tuple(rankings[reference_replicates is not None :]),
        n_subsamples=n_subsamples,
        n_replicates=n_replicates,
        reference=rankings[0] if reference_replicates is not None else reference,
    )


def _rank_in_rounds(
    grid, pair_of_conversation, judgment_conversation, problem, reference, *,
    n_subsamples, n_replicates, seed, coverage, precision,
) -> list[list[ClusterRanking]]:  # fmt: skip
    """Each grid point's subsample rankings, drawn ``ROUND`` at a time (the open points of a
    round rated together) until the point's share reproducing ``reference`` is within
    ``± precision`` or ``n_subsamples`` are drawn. Each point draws from its own generator
    in the order ``subsample_rankings`` draws without a precision."""
    generators = [np.random.default_rng(np.random.SeedSequence([seed, int(n)])) for n in grid]
    by_point: list[list[ClusterRanking]] = [[] for _ in grid]
    open_points = list(range(len(grid)))
    while open_points:
        owners, problems = [], []
        for g in open_points:
            for _ in range(min(ROUND, n_subsamples - len(by_point[g]))):
                chosen = _draw_conversations(pair_of_conversation, int(grid[g]), generators[g])
                problems.append(problem(chosen[judgment_conversation], generators[g], n_replicates))
                owners.append(g)
        for g, ranking in zip(owners, _rank_problems(problems, coverage), strict=True):
            by_point[g].append(ranking)
        open_points = [
            g
            for g in open_points
            if len(by_point[g]) < n_subsamples
            and half_width(by_point[g].count(reference), len(by_point[g])) > precision
        ]
    return by_point


def leave_one_out_stability(
    player_a,
    player_b,
    outcome,
    conversation_id,
    pair_id,
    n_grid: Sequence[int],
    *,
    n_subsamples: int = 100,
    n_replicates: int = 100,
    reference_replicates: int = 1000,
    seed: int = 0,
    coverage: float = 0.95,
    env_options: Mapping | None = None,
    precision: float | None = None,
) -> tuple[LeaveOneOutStability, ...]:
    """``ranking_stability`` of the pool without each system in turn (Spot The Bot, Fig. 3b).

    Drops every judgment involving the left-out system (its pairs disappear); the options mean
    the same as for ``ranking_stability``. The full pool is ranked once more to tell, per
    system, whether removing it changes how the others are clustered.
    """
    player_a, player_b, outcome = (np.asarray(x) for x in (player_a, player_b, outcome))
    conversation_id, pair_id = np.asarray(conversation_id), np.asarray(pair_id)
    full_reference = cluster_ranking(
        player_a,
        player_b,
        outcome,
        n_replicates=reference_replicates,
        seed=np.random.default_rng(seed),
        coverage=coverage,
        env_options=env_options,
    )
    systems = [int(s) for s in np.unique(np.concatenate([player_a, player_b]))]
    results = []
    for system in systems:
        kept = (player_a != system) & (player_b != system)
        reduced = ranking_stability(
            player_a[kept],
            player_b[kept],
            outcome[kept],
            conversation_id[kept],
            pair_id[kept],
            n_grid,
            n_subsamples=n_subsamples,
            n_replicates=n_replicates,
            reference_replicates=reference_replicates,
            seed=seed,
            coverage=coverage,
            env_options=env_options,
            precision=precision,
        )
        others = [s for s in systems if s != system]
        results.append(
            LeaveOneOutStability(
                left_out=system,
                stability=reduced,
                keeps_full_ranking=reduced.reference == restrict_ranking(full_reference, others),
            )
        )
    return tuple(results)


def _conversation_pairs(conversation_id, pair_id):
    """Compact conversation ids, the pair of each conversation and the conversation of each
    judgment; a conversation must belong to a single pair."""
    conversation_id = np.asarray(conversation_id)
    pair_id = np.asarray(pair_id)
    if conversation_id.shape != pair_id.shape or conversation_id.ndim != 1:
        raise ValueError("conversation_id and pair_id must be 1-D arrays of the same length")
    if conversation_id.size == 0:
        raise ValueError("need at least one judgment")
    conversations, judgment_conversation = np.unique(conversation_id, return_inverse=True)
    _, judgment_pair = np.unique(pair_id, return_inverse=True)
    pair_of_conversation = np.zeros(conversations.size, dtype=np.intp)
    pair_of_conversation[judgment_conversation] = judgment_pair
    if np.any(pair_of_conversation[judgment_conversation] != judgment_pair):
        raise ValueError("a conversation belongs to more than one pair")
    return conversations, pair_of_conversation, judgment_conversation


def _draw_conversations(pair_of_conversation, n_per_pair, rng):
    """Mask over conversations with n_per_pair of every pair, uniformly without replacement:
    the n smallest of i.i.d. uniform keys within each pair."""
    keys = rng.random(pair_of_conversation.size)
    by_pair_then_key = np.lexsort((keys, pair_of_conversation))
    sorted_pairs = pair_of_conversation[by_pair_then_key]
    pair_start = np.searchsorted(sorted_pairs, sorted_pairs, side="left")
    position_in_pair = np.arange(sorted_pairs.size) - pair_start
    chosen = np.zeros(pair_of_conversation.size, dtype=bool)
    chosen[by_pair_then_key] = position_in_pair < n_per_pair
    return chosen
