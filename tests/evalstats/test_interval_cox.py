"""Tests of evalstats.interval_cox against statsmodels' complementary log-log binomial GLM
and a lifelines parametric interval-censored regression."""

import autograd.numpy as anp
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from lifelines.fitters import ParametricRegressionFitter

from evalstats.interval_cox import interval_cox_ph, interval_cox_ph_by_system
from evalstats.pairwise import BOT, UNSURE
from tests.evalstats.survival_data import (
    SEGMENT_LENGTHS,
)

FEATURES = ("fluency", "specificity", "sensibleness")


def simulate_features(rng, n, beta=(-0.6, 0.0, -0.4), baseline=(0.4, 0.7, 1.2)):
    """Preferences in {-1, 0, 1}; P(spotted by k) = 1 - exp(-H0(k) exp(x beta))."""
    k = rng.choice(SEGMENT_LENGTHS, n)
    x = rng.choice([-1.0, 0.0, 1.0], size=(n, len(beta)))
    cumhaz = np.asarray(baseline)[np.searchsorted(SEGMENT_LENGTHS, k)] * np.exp(x @ beta)
    return k, rng.random(n) < -np.expm1(-cumhaz), x


def cloglog_glm(k, spotted, x, lengths):
    design = np.column_stack([(k[:, None] == lengths[None, :]).astype(float), x])
    family = sm.families.Binomial(link=sm.families.links.CLogLog())
    return sm.GLM(spotted.astype(float), design, family=family)


@pytest.mark.parametrize(("information", "method"), [("observed", "newton"), ("expected", "IRLS")])
def test_cox_matches_cloglog_glm(information, method):
    """Per-judgment GLM: y = spotted, one indicator per segment length (log H0(k)), features.
    statsmodels' Newton fit uses the observed information, IRLS the expected one."""
    k, spotted, x = simulate_features(np.random.default_rng(16), 900)
    ours = interval_cox_ph(k, spotted, x, names=FEATURES, information=information)
    reference = cloglog_glm(k, spotted, x, SEGMENT_LENGTHS).fit(
        method=method, tol=1e-12, maxiter=200
    )
    assert ours.converged and ours.names == FEATURES and ours.n_obs == 900
    np.testing.assert_allclose(ours.coef, reference.params[3:], atol=1e-7)
    np.testing.assert_allclose(ours.se, reference.bse[3:], atol=1e-7)
    np.testing.assert_allclose(ours.log_baseline_cumhaz, reference.params[:3], atol=1e-7)
    np.testing.assert_allclose(ours.p_value, reference.pvalues[3:], rtol=1e-5, atol=1e-12)
    assert ours.loglik == pytest.approx(reference.llf, rel=1e-10)


class PiecewiseProportionalHazards(ParametricRegressionFitter):
    """H(t | x) = H0(t) exp(x beta), H0 piecewise linear with knots at 2 and 3 exchanges."""

    _fitted_parameter_names = ["beta_", "log_rate1_", "log_rate2_", "log_rate3_"]

    def _cumulative_hazard(self, params, T, Xs):
        rate = [anp.exp(Xs[f"log_rate{i}_"] @ params[f"log_rate{i}_"]) for i in (1, 2, 3)]
        baseline = (
            rate[0] * anp.clip(T, 0, 2)
            + rate[1] * anp.clip(T - 2, 0, 1)
            + rate[2] * anp.clip(T - 3, 0, np.inf)
        )
        return baseline * anp.exp(Xs["beta_"] @ params["beta_"])


def test_cox_matches_lifelines_interval_censored_regression():
    k, spotted, x = simulate_features(np.random.default_rng(16), 900)
    ours = interval_cox_ph(k, spotted, x, names=FEATURES)
    frame = pd.DataFrame(x, columns=list(FEATURES))
    frame["lower"] = np.where(spotted, 0.0, k)
    frame["upper"] = np.where(spotted, k, np.inf)
    model = PiecewiseProportionalHazards().fit_interval_censoring(
        frame,
        "lower",
        "upper",
        regressors={
            "beta_": list(FEATURES),
            "log_rate1_": "1",
            "log_rate2_": "1",
            "log_rate3_": "1",
        },
        fit_options={"gtol": 1e-8},
    )
    assert ours.baseline_monotone  # lifelines' positive rates force a monotone H0
    summary = model.summary.loc["beta_"].loc[list(FEATURES)]
    # lifelines stops BFGS at a mean-score norm of 1e-8: agreement to ~1e-6.
    np.testing.assert_allclose(ours.coef, summary["coef"], atol=1e-5)
    np.testing.assert_allclose(ours.se, summary["se(coef)"], atol=1e-5)


def test_cox_drops_segment_lengths_without_contrast():
    rng = np.random.default_rng(17)
    k, spotted, x = simulate_features(rng, 600)
    spotted = np.where(k == 5.0, True, spotted)
    ours = interval_cox_ph(k, spotted, x)
    keep = k != 5.0
    reference = cloglog_glm(k[keep], spotted[keep], x[keep], SEGMENT_LENGTHS[:2]).fit(
        method="newton", tol=1e-12
    )
    np.testing.assert_array_equal(ours.dropped_segment_lengths, [5.0])
    np.testing.assert_array_equal(ours.segment_lengths, [2.0, 3.0])
    assert ours.n_obs == keep.sum()
    np.testing.assert_allclose(ours.coef, reference.params[2:], atol=1e-7)


def test_cox_recovers_the_simulated_effects():
    """Preferred speakers survive longer: the simulated fluency and sensibleness effects are
    negative log hazard ratios of being spotted; specificity has none."""
    truth = np.array([-0.6, 0.0, -0.4])
    k, spotted, x = simulate_features(np.random.default_rng(18), 20_000, beta=tuple(truth))
    ours = interval_cox_ph(k, spotted, x, names=FEATURES)
    assert np.all(np.abs(ours.coef - truth) < 4 * ours.se)
    assert ours.p_value[0] < 1e-10 and ours.p_value[2] < 1e-10


def test_cox_by_system_fits_each_system_alone():
    rng = np.random.default_rng(19)
    k, spotted, x = simulate_features(rng, 1200)
    system = rng.integers(0, 3, k.size)
    label = np.where(spotted, BOT, UNSURE)
    fits = interval_cox_ph_by_system(system, k, label, x, names=FEATURES)
    assert sorted(fits) == [0, 1, 2]
    for s, fit in fits.items():
        alone = interval_cox_ph(k[system == s], spotted[system == s], x[system == s])
        np.testing.assert_array_equal(fit.coef, alone.coef)


def test_cox_rejects_unidentifiable_covariates():
    k, spotted, x = simulate_features(np.random.default_rng(20), 300)
    constant = np.column_stack([x[:, 0], np.ones(k.size)])
    with pytest.raises(ValueError, match="identifiable"):
        interval_cox_ph(k, spotted, constant)
