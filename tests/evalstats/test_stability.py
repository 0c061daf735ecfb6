"""evalstats.stability on small simulated Spot The Bot style tournaments."""

from itertools import combinations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from evalstats import stability as st
from evalstats import trueskill as ts

FAST = {"n_subsamples": 10, "n_replicates": 50, "reference_replicates": 200}


def simulate(strengths, conversations_per_pair, judgments_per_conversation, *, seed, draws=0.2):
    """Per-judgment arrays (a, b, outcome, conversation, pair) for every pair of systems;
    P(a wins | no draw) = logistic(strength_a - strength_b)."""
    rng = np.random.default_rng(seed)
    pairs = list(combinations(range(len(strengths)), 2))
    per_pair = conversations_per_pair * judgments_per_conversation
    pair = np.repeat(np.arange(len(pairs)), per_pair)
    a = np.array([i for i, _ in pairs])[pair]
    b = np.array([j for _, j in pairs])[pair]
    conversation = np.repeat(
        np.arange(len(pairs) * conversations_per_pair), judgments_per_conversation
    )
    strengths = np.asarray(strengths, dtype=float)
    p_a = 1 / (1 + np.exp(strengths[b] - strengths[a]))
    outcome = np.where(rng.random(a.size) < p_a, ts.A_WINS, ts.B_WINS)
    outcome[rng.random(a.size) < draws] = ts.DRAW
    # pair labels as strings, conversation ids sparse: the API takes any labels
    return a, b, outcome, conversation * 7 + 3, np.array([f"{a[k]}-{b[k]}" for k in range(a.size)])


def test_subsample_takes_n_whole_conversations_of_every_pair():
    a, b, outcome, conversation, pair = simulate([1, 0, -1], 12, 3, seed=0)
    chosen = st.subsample_conversations(conversation, pair, 5, np.random.default_rng(1))
    for label in np.unique(pair):
        in_pair = pair == label
        assert np.unique(conversation[chosen & in_pair]).size == 5
    for conv in np.unique(conversation):
        # all judgments of a conversation or none of them
        assert np.unique(chosen[conversation == conv]).size == 1
    np.testing.assert_array_equal(chosen, st.subsample_conversations(conversation, pair, 5, 1))


def test_subsample_is_uniform_over_conversations():
    _, _, _, conversation, pair = simulate([1, 0], 10, 1, seed=0)
    rng = np.random.default_rng(2)
    counts = sum(
        st.subsample_conversations(conversation, pair, 3, rng).astype(int) for _ in range(3000)
    )
    # each conversation is drawn with probability 3/10; binomial sd of the count ~ 25
    np.testing.assert_allclose(counts, 900, atol=100)


def test_subsample_rejects_bad_inputs():
    _, _, _, conversation, pair = simulate([1, 0, -1], 4, 2, seed=0)
    with pytest.raises(ValueError):
        st.subsample_conversations(conversation, pair, 5, 0)
    pair_mixed = pair.copy()
    pair_mixed[0] = pair[-1]  # first conversation now spans two pairs
    with pytest.raises(ValueError):
        st.subsample_conversations(conversation, pair_mixed, 2, 0)


def test_restrict_ranking_drops_systems_and_empty_clusters():
    ranking = ((0,), (1, 2), (3,), (4, 5))
    assert st.restrict_ranking(ranking, [1, 3, 4, 5]) == ((1,), (3,), (4, 5))
    assert st.restrict_ranking(ranking, [2, 4]) == ((2,), (4,))


def test_cluster_ranking_uses_the_original_system_indices():
    a, b, outcome, _, _ = simulate([2, 0, -2], 30, 2, seed=1)
    sparse = np.array([3, 7, 9])
    ranking = st.cluster_ranking(sparse[a], sparse[b], outcome, n_replicates=200)
    assert ranking == ((3,), (7,), (9,))


def test_well_separated_systems_reach_a_stable_ranking():
    data = simulate([3, 1.5, 0, -1.5], 20, 3, seed=0)
    result = st.ranking_stability(*data, [2, 20], **FAST)
    assert result.reference == ((0,), (1,), (2,), (3,))
    assert result.systems == (0, 1, 2, 3)
    np.testing.assert_array_equal(result.n_conversations, [2, 20])
    # all conversations: every subsample is the full data, only the bootstrap differs
    assert result.share_reproduced[-1] == 1.0
    assert result.share_reproduced[0] < 0.5  # two conversations per pair cannot separate them
    assert result.modal_rankings[-1] == result.reference
    assert np.all(result.share_modal >= result.share_reproduced)


def test_identical_systems_are_stably_one_cluster():
    # With no real difference the ranking that reproduces is "all tied": the rank ranges of
    # identical systems overlap at every n, so the cluster ranking does not flip.
    data = simulate([0, 0, 0, 0], 20, 3, seed=1)
    result = st.ranking_stability(*data, [3, 20], **FAST)
    assert result.reference == ((0, 1, 2, 3),)
    assert np.all(result.share_reproduced >= 0.9)


def test_a_small_real_difference_needs_many_conversations():
    data = simulate([0.7, 0, -0.7], 40, 3, seed=2)
    result = st.ranking_stability(*data, [3, 10, 40], n_subsamples=20, n_replicates=50)
    assert result.reference == ((0,), (1,), (2,))
    assert result.share_reproduced[0] <= 0.1
    assert result.share_reproduced[1] <= 0.5
    assert result.share_reproduced[2] == 1.0


def test_a_share_depends_only_on_its_own_n_and_the_seed():
    data = simulate([1, 0, -1], 15, 2, seed=3)
    alone = st.ranking_stability(*data, [8], **FAST)
    in_grid = st.ranking_stability(*data, [4, 8], **FAST)
    assert alone.share_reproduced[0] == in_grid.share_reproduced[1]
    assert alone.modal_rankings[0] == in_grid.modal_rankings[1]


def test_grid_values_must_fit_every_pair():
    data = simulate([1, 0, -1], 5, 2, seed=0)
    with pytest.raises(ValueError):
        st.ranking_stability(*data, [6], **FAST)
    with pytest.raises(ValueError):
        st.ranking_stability(*data, [0], **FAST)


def test_leaving_out_one_of_two_close_systems_stabilises_the_ranking():
    # Systems 1 and 2 are close (like KV and LC in Spot The Bot's PersonaChat pool): with 10
    # of 30 conversations per pair the pool without either of them is stable, the pool
    # without system 0 or 3 still flips between splitting and merging 1 and 2.
    data = simulate([3, 0.6, 0, -3], 30, 3, seed=3)
    results = st.leave_one_out_stability(*data, [10], **FAST)
    by_system = {r.left_out: r for r in results}
    assert sorted(by_system) == [0, 1, 2, 3]
    assert by_system[1].stability.reference == ((0,), (2,), (3,))
    assert by_system[1].stability.systems == (0, 2, 3)
    assert all(r.keeps_full_ranking for r in results)
    assert by_system[1].stability.share_reproduced[0] == 1.0
    assert by_system[2].stability.share_reproduced[0] == 1.0
    assert by_system[0].stability.share_reproduced[0] <= 0.6
    assert by_system[3].stability.share_reproduced[0] <= 0.6


def test_a_given_reference_ranking_changes_none_of_the_subsamples():
    data = simulate([1.0, 0.6, 0.3, 0.0], 12, 3, seed=6)
    computed = st.ranking_stability(*data, [3, 6, 12], seed=2, **FAST)
    given = st.ranking_stability(*data, [3, 6, 12], seed=2, **FAST, reference=computed.reference)
    assert given.reference == computed.reference
    np.testing.assert_array_equal(given.share_reproduced, computed.share_reproduced)
    np.testing.assert_array_equal(given.share_modal, computed.share_modal)
    assert given.modal_rankings == computed.modal_rankings


def test_batched_subsamples_equal_ranking_each_subsample_in_turn():
    # The Spot The Bot loop: draw a subsample's conversations, rank it with its own bootstrap
    # (indices from the same generator), then the next subsample.
    data = simulate([1.0, 0.5, 0.0], 10, 3, seed=9)
    a, b, outcome, conversation, pair = data
    result = st.ranking_stability(*data, [4], seed=5, **FAST)
    rng = np.random.default_rng(np.random.SeedSequence([5, 4]))
    expected = []
    for _ in range(FAST["n_subsamples"]):
        mask = st.subsample_conversations(conversation, pair, 4, rng)
        expected.append(
            st.cluster_ranking(a[mask], b[mask], outcome[mask], n_replicates=50, seed=rng)
        )
    reference = st.cluster_ranking(a, b, outcome, n_replicates=200, seed=np.random.default_rng(5))
    assert result.reference == reference
    assert result.share_reproduced[0] == sum(r == reference for r in expected) / len(expected)


def test_ranked_subsamples_compared_with_a_reference_give_the_stability():
    data = simulate([1.0, 0.6, 0.3, 0.0], 12, 3, seed=6)
    options = {"n_subsamples": FAST["n_subsamples"], "n_replicates": FAST["n_replicates"]}
    subsamples = st.subsample_rankings(*data, [3, 6, 12], seed=2, **options)
    reference = st.cluster_ranking(*data[:3], n_replicates=200, seed=2)
    expected = st.ranking_stability(*data, [3, 6, 12], seed=2, **FAST)
    assert expected.reference == reference
    result = subsamples.against(reference)
    assert len(subsamples.rankings) == 3 * FAST["n_subsamples"]
    np.testing.assert_array_equal(result.share_reproduced, expected.share_reproduced)
    np.testing.assert_array_equal(result.share_modal, expected.share_modal)
    assert result.modal_rankings == expected.modal_rankings
    assert (result.systems, result.n_subsamples) == (expected.systems, expected.n_subsamples)
    assert subsamples.reference is None


def test_the_reference_rated_with_the_subsamples_changes_none_of_them():
    data = simulate([1.0, 0.6, 0.3, 0.0], 12, 3, seed=6)
    options = {"n_subsamples": FAST["n_subsamples"], "n_replicates": FAST["n_replicates"]}
    alone = st.subsample_rankings(*data, [3, 6], seed=2, **options)
    together = st.subsample_rankings(*data, [3, 6], seed=2, reference_replicates=200, **options)
    assert together.rankings == alone.rankings
    assert together.reference == st.cluster_ranking(*data[:3], n_replicates=200, seed=2)


def test_the_share_reproduced_counts_the_subsamples_equal_to_the_reference():
    subsamples = st.SubsampleRankings(
        systems=(0, 1, 2),
        n_conversations=np.array([2, 4]),
        rankings=(((0,), (1, 2)),) * 3 + (((0, 1, 2),),) + (((0,), (1, 2)),) * 4,
        n_subsamples=4,
        n_replicates=10,
    )
    result = subsamples.against(((0,), (1, 2)))
    np.testing.assert_array_equal(result.share_reproduced, [0.75, 1.0])
    np.testing.assert_array_equal(result.share_modal, [0.75, 1.0])
    assert result.modal_rankings == (((0,), (1, 2)), ((0,), (1, 2)))
    assert subsamples.against(((0, 1, 2),)).share_reproduced.tolist() == [0.25, 0.0]


def test_each_share_has_statsmodels_wilson_interval():
    data = simulate([1.0, 0.6, 0.3, 0.0], 12, 3, seed=6)
    result = st.ranking_stability(*data, [3, 6, 12], seed=2, **FAST)
    reproduced = np.round(result.share_reproduced * FAST["n_subsamples"])
    low, high = proportion_confint(reproduced, FAST["n_subsamples"], method="wilson")
    np.testing.assert_allclose(result.reproduced_low, low, atol=1e-12)
    np.testing.assert_allclose(result.reproduced_high, high, atol=1e-12)
    np.testing.assert_array_equal(result.n_drawn, [10, 10, 10])
    assert result.precision is None


def test_385_subsamples_always_give_a_share_to_five_points():
    # Whatever the share, its 95% Wilson interval then lies within 0.05 of it.
    widths = [st.half_width(k, 385) for k in range(386)]
    assert max(widths) <= 0.05
    assert st.half_width(192, 300) > 0.05  # 300 would not do near one half


def test_with_a_precision_each_point_draws_until_its_interval_is_that_narrow():
    data = simulate([0.7, 0, -0.7], 40, 3, seed=2)
    options = {"n_replicates": 30, "reference_replicates": 200, "seed": 4}
    subsamples = st.subsample_rankings(
        *data, [3, 10, 40], n_subsamples=400, precision=0.1, **options
    )
    result = subsamples.against(subsamples.reference)
    drawn = result.n_drawn.tolist()
    assert all(n % st.ROUND == 0 for n in drawn)
    ends = np.cumsum(drawn)
    for g, (size, end) in enumerate(zip(drawn, ends, strict=True)):
        rankings = subsamples.rankings[end - size : end]
        hits = rankings.count(subsamples.reference)
        assert st.half_width(hits, size) <= 0.1
        # One round fewer was not enough: drawing stopped as soon as it could.
        if size > st.ROUND:
            shorter = rankings[: size - st.ROUND]
            assert st.half_width(shorter.count(subsamples.reference), len(shorter)) > 0.1
        low, high = proportion_confint(hits, size, method="wilson")
        assert (result.reproduced_low[g], result.reproduced_high[g]) == pytest.approx((low, high))
    # A share near 0 or 1 is pinned down sooner than one near 1/2.
    assert min(drawn) < max(drawn)
    # The first subsamples of a point are those drawn without a precision.
    fixed = st.subsample_rankings(*data, [10], n_subsamples=drawn[1], **options)
    assert fixed.rankings == subsamples.rankings[ends[0] : ends[1]]


def test_the_most_subsamples_bounds_the_rounds():
    data = simulate([0.7, 0, -0.7], 40, 3, seed=2)
    result = st.ranking_stability(
        *data, [10], n_subsamples=20, n_replicates=30, reference_replicates=200, precision=0.01
    )
    assert result.n_drawn.tolist() == [20] and result.precision == 0.01
    with pytest.raises(ValueError, match="precision must be between"):
        st.ranking_stability(*data, [10], precision=1.5, **FAST)
