import numpy as np
import pytest
import statsmodels.api as sm

from evalstats.clustered import clustered_proportions, design_effects


def _clustered_sample(seed=1, n_clusters=30):
    """Clusters of 1-5 observations sharing a cluster-level rate (positively correlated)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, size=n_clusters)
    clusters = np.repeat(np.arange(n_clusters), sizes)
    present = rng.random(clusters.size) < np.repeat(rng.random(n_clusters), sizes)
    return present, clusters


def _statsmodels_design_effect(present, clusters):
    """Cluster-robust over ordinary variance of the mean, both from statsmodels' OLS."""
    model = sm.OLS(present.astype(float), np.ones(present.size))
    clustered = model.fit(cov_type="cluster", cov_kwds={"groups": clusters}).bse[0] ** 2
    return clustered / model.fit().bse[0] ** 2


def test_design_effect_is_statsmodels_cluster_robust_over_ordinary_variance():
    present, clusters = _clustered_sample()
    result = clustered_proportions(present, list(clusters), ["g"] * present.size)["g"]
    assert result.design_effect == pytest.approx(
        _statsmodels_design_effect(present, clusters), rel=1e-12
    )
    assert result.design_effect > 1.2  # the clusters share their rate
    assert (result.count, result.nobs, result.n_clusters) == (
        present.sum(),
        present.size,
        30,
    )
    assert result.effective_nobs == pytest.approx(present.size / result.design_effect)
    assert result.effective_count / result.effective_nobs == pytest.approx(result.proportion)


def test_groups_get_their_own_design_effect():
    present, clusters = _clustered_sample(seed=4, n_clusters=40)
    groups = np.where(clusters < 20, "a", "b")
    results = clustered_proportions(present, list(clusters), list(groups))
    for name in ("a", "b"):
        mine = groups == name
        assert results[name].design_effect == pytest.approx(
            _statsmodels_design_effect(present[mine], clusters[mine]), rel=1e-12
        )


def test_one_observation_per_cluster_is_the_independent_analysis():
    present = np.array([1, 0, 0, 1, 1, 0, 0], dtype=bool)
    result = clustered_proportions(present, list(range(7)), ["g"] * 7)["g"]
    assert result.design_effect == 1.0
    assert (result.effective_count, result.effective_nobs) == (3.0, 7.0)


def test_a_duplicated_observation_counts_about_once():
    rng = np.random.default_rng(2)
    once = rng.random(200) < 0.3
    twice = np.repeat(once, 2)
    result = clustered_proportions(twice, list(np.repeat(np.arange(200), 2)), ["g"] * 400)["g"]
    # d = (2T - 1) / (T - 1) for T duplicated turns: effective n = T (T - 1) 2 / (2T - 1).
    assert result.design_effect == pytest.approx(399 / 199)
    assert result.effective_nobs == pytest.approx(200 * 199 * 2 / 399)


def test_degenerate_designs():
    # No variation: nothing to inflate.
    assert clustered_proportions([0, 0, 0], ["c", "c", "d"], ["g"] * 3)["g"].design_effect == 1.0
    # One cluster of several observations: its variance cannot be estimated.
    assert np.isnan(clustered_proportions([0, 1, 1], ["c"] * 3, ["g"] * 3)["g"].design_effect)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="more than one group"):
        clustered_proportions([1, 0], ["c", "c"], ["g", "h"])
    with pytest.raises(ValueError, match="one entry per observation"):
        clustered_proportions([1, 0], ["c"], ["g", "g"])
    with pytest.raises(ValueError, match="successes"):
        design_effects([3], [2], [0], 1)
