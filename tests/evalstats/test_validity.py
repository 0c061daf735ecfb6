import numpy as np
import pytest
import statsmodels.api as sm

from evalstats.validity import backward_elimination, fit_model, predictive_validity


def _predictors(rng, n):
    return {f"x{i}": rng.normal(size=n) for i in range(1, 6)}


def _linear_data(seed=1, n=300):
    rng = np.random.default_rng(seed)
    metrics = _predictors(rng, n)
    # Only x1 (strongly) and x2 (less) matter; x3, x4, x5 are noise.
    quality = 2.0 * metrics["x1"] + 1.0 * metrics["x2"] + rng.normal(size=n)
    return quality, metrics


def _logistic_data(seed=2, n=600):
    rng = np.random.default_rng(seed)
    metrics = _predictors(rng, n)
    eta = 1.5 * metrics["x1"] + 0.8 * metrics["x2"]
    quality = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return quality, metrics


def _statsmodels(quality, metrics, names, model):
    design = sm.add_constant(np.column_stack([metrics[n] for n in names]))
    if model == "linear":
        return sm.OLS(quality, design).fit()
    return sm.Logit(quality, design).fit(disp=0)


def test_linear_fit_matches_statsmodels_ols():
    quality, metrics = _linear_data()
    fit = fit_model(quality, metrics)
    reference = _statsmodels(quality, metrics, list(metrics), "linear")
    assert fit.fit == pytest.approx(reference.rsquared, rel=1e-10)
    assert fit.adjusted_fit == pytest.approx(reference.rsquared_adj, rel=1e-10)
    assert fit.n == 300 and fit.predictors == ("x1", "x2", "x3", "x4", "x5")


def test_logistic_fit_matches_statsmodels_logit_mcfadden():
    quality, metrics = _logistic_data()
    fit = fit_model(quality, metrics, "logistic")
    reference = _statsmodels(quality, metrics, list(metrics), "logistic")
    assert fit.fit == pytest.approx(reference.prsquared, rel=1e-8)
    assert fit.log_likelihood == pytest.approx(reference.llf, rel=1e-8)
    assert fit.null_log_likelihood == pytest.approx(reference.llnull, rel=1e-10)
    # McFadden's adjusted pseudo-R^2 with k = 5 predictors.
    assert fit.adjusted_fit == pytest.approx(1 - (reference.llf - 5) / reference.llnull, rel=1e-8)


def test_predictive_validity_ranks_univariate_fits_and_drops_incomplete_rows():
    quality, metrics = _linear_data()
    metrics = dict(metrics)
    metrics["x3"] = metrics["x3"].copy()
    metrics["x3"][:10] = np.nan
    results = predictive_validity(quality, metrics)
    assert [r.metric for r in results[:2]] == ["x1", "x2"]
    for result in results:
        keep = np.isfinite(metrics[result.metric])
        reference = sm.OLS(quality[keep], sm.add_constant(metrics[result.metric][keep])).fit()
        assert result.fit.fit == pytest.approx(reference.rsquared, rel=1e-10)
        assert result.fit.n == keep.sum()


@pytest.mark.parametrize(
    ("data", "model", "reference_fit"),
    [(_linear_data, "linear", "rsquared"), (_logistic_data, "logistic", "prsquared")],
)
@pytest.mark.parametrize("beam_width", [1, 100])
def test_backward_elimination_removes_the_irrelevant_predictors_first(
    data, model, reference_fit, beam_width
):
    quality, metrics = data()
    steps = backward_elimination(quality, metrics, model, beam_width=beam_width)
    assert [len(s.predictors) for s in steps] == [5, 4, 3, 2, 1]
    assert steps[0].removed is None
    assert {s.removed for s in steps[1:4]} == {"x3", "x4", "x5"}
    assert steps[4].removed == "x2" and steps[4].predictors == ("x1",)
    for step in steps:
        reference = _statsmodels(quality, metrics, step.predictors, model)
        assert step.fit.fit == pytest.approx(getattr(reference, reference_fit), rel=1e-8)
    # Once only x1 and x2 remain, each contributes to the adjusted fit.
    assert steps[3].all_contribute and steps[4].all_contribute
    # The fit only falls along the path.
    fits = [s.fit.fit for s in steps]
    assert fits == sorted(fits, reverse=True)


def _pairs(seed=3, n=400):
    """Comparative verdicts: y = 1 when the second dialogue is better, predictors the other
    dimensions' verdicts (+1 second better, -1 first better, 0 neither), which agree with
    quality more often than not; no side of the pair is favoured."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(float)
    sign = 2 * y - 1
    metrics = {
        name: np.where(rng.random(n) < agree, sign, np.where(rng.random(n) < 0.5, -sign, 0.0))
        for name, agree in (("grammar", 0.55), ("relevance", 0.75))
    }
    return y, metrics


def _both_orientations(y, metrics):
    """Every pair as shown and swapped, for statsmodels' ordinary logistic regression."""
    return np.concatenate([y, 1 - y]), {n: np.concatenate([x, -x]) for n, x in metrics.items()}


def test_the_symmetric_model_is_statsmodels_logit_on_both_orientations():
    y, metrics = _pairs()
    doubled_y, doubled = _both_orientations(y, metrics)
    reference = _statsmodels(doubled_y, doubled, list(metrics), "logistic")
    fit = fit_model(y, metrics, "symmetric-logistic")
    assert reference.params[0] == pytest.approx(0, abs=1e-8)  # no side favoured
    assert fit.fit == pytest.approx(reference.prsquared, rel=1e-8)
    # Each pair counts once, not twice: half of statsmodels' log-likelihoods.
    assert fit.log_likelihood == pytest.approx(reference.llf / 2, rel=1e-8)
    assert fit.null_log_likelihood == pytest.approx(reference.llnull / 2, rel=1e-12)
    assert fit.adjusted_fit == pytest.approx(1 - (reference.llf / 2 - 2) / (reference.llnull / 2))


def test_the_comparative_fit_does_not_depend_on_which_dialogue_is_first():
    y, metrics = _pairs()
    swap = np.random.default_rng(9).random(y.size) < 0.5
    swapped_y = np.where(swap, 1 - y, y)
    swapped = {n: np.where(swap, -x, x) for n, x in metrics.items()}
    for name in metrics:
        one = fit_model(y, {name: metrics[name]}, "symmetric-logistic")
        other = fit_model(swapped_y, {name: swapped[name]}, "symmetric-logistic")
        assert one.fit == pytest.approx(other.fit, rel=1e-10)
        # The ordinary model's pseudo-R^2 moves with the orientation (the finding).
        ordinary = fit_model(y, {name: metrics[name]}, "logistic").fit
        assert ordinary != pytest.approx(
            fit_model(swapped_y, {name: swapped[name]}, "logistic").fit, rel=1e-3
        )
    steps = backward_elimination(y, metrics, "symmetric-logistic")
    assert steps[-1].predictors == ("relevance",)


def test_linear_adjusted_path_matches_statsmodels_rsquared_adj():
    quality, metrics = _linear_data()
    for step in backward_elimination(quality, metrics):
        reference = _statsmodels(quality, metrics, step.predictors, "linear")
        assert step.fit.adjusted_fit == pytest.approx(reference.rsquared_adj, rel=1e-10)


def test_all_contribute_flag_matches_statsmodels_adjusted_r_squared():
    quality, metrics = _linear_data()
    steps = backward_elimination(quality, metrics)
    for step in steps:
        full = _statsmodels(quality, metrics, step.predictors, "linear").rsquared_adj
        reduced = [
            _statsmodels(quality, metrics, [p for p in step.predictors if p != drop], "linear")
            if len(step.predictors) > 1
            else None
            for drop in step.predictors
        ]
        expected = all(full > (r.rsquared_adj if r is not None else 0.0) for r in reduced)
        assert step.all_contribute is expected


def test_undefined_fits_are_rejected():
    with pytest.raises(ValueError, match="no variance"):
        fit_model(np.ones(5), {"x": np.arange(5.0)})
    with pytest.raises(ValueError, match="coded 0/1"):
        fit_model(np.array([0, 1, 2.0]), {"x": np.arange(3.0)}, "logistic")
    with pytest.raises(ValueError, match="separat"):
        fit_model(np.array([0, 0, 0, 1, 1, 1.0]), {"x": np.arange(6.0)}, "logistic")
    with pytest.raises(ValueError, match="metric 'x' has 2 values, quality 3"):
        fit_model(np.arange(3.0), {"x": np.arange(2.0)})
    with pytest.raises(ValueError, match="model must be one of"):
        predictive_validity(np.arange(3.0), {"x": np.arange(3.0)}, "probit")
