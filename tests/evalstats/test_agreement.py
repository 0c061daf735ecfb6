import math
import random
import warnings
from collections import Counter

import krippendorff
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from evalstats.agreement import (
    BinaryTurnJudgment,
    EntityJudgment,
    LabelCooccurrence,
    binary_label_agreement,
    cohen_kappa,
    krippendorff_alpha,
    krippendorff_alpha_bca,
    label_cooccurrence_agreement,
)

nan = np.nan


def same_float(actual: float, expected: float, tolerance: float) -> bool:
    if math.isnan(expected):
        return math.isnan(actual)
    return abs(actual - expected) <= tolerance


# --- Spot The Bot label co-occurrence -----------------------------------------------------------


def test_label_cooccurrence_hand_worked_example():
    judgments = [
        # Unit 1, bot-bot conversation GPT vs DR, two annotators.
        EntityJudgment("u1", "A", "GPT", "w1", "human"),
        EntityJudgment("u1", "A", "GPT", "w2", "human"),
        EntityJudgment("u1", "B", "DR", "w1", "bot"),
        EntityJudgment("u1", "B", "DR", "w2", "bot"),
        # Unit 2, GPT vs DR again.
        EntityJudgment("u2", "A", "GPT", "w3", "human"),
        EntityJudgment("u2", "A", "GPT", "w4", "bot"),
        EntityJudgment("u2", "B", "DR", "w3", "bot"),
        EntityJudgment("u2", "B", "DR", "w4", "unsure"),
        # Unit 3, GPT speaker judged by three annotators: pairs (w1,w2) human/human,
        # (w1,w5) human/unsure, (w2,w5) human/unsure.
        EntityJudgment("u3", "A", "GPT", "w1", "human"),
        EntityJudgment("u3", "A", "GPT", "w2", "human"),
        EntityJudgment("u3", "A", "GPT", "w5", "unsure"),
        # Unit 4: DR speaker judged once, no pair, ignored.
        EntityJudgment("u4", "B", "DR", "w1", "human"),
    ]
    # GPT pairs: (h,h) u1, (h,b) u2, (h,h) (h,u) (h,u) u3 -> 5 pairs.
    #   human: at least one in all 5, both in 2 -> 2/5.
    #   bot: at least one in 1 (u2), both in 0 -> 0/1.
    #   unsure: at least one in 2, both in 0 -> 0/2.
    # DR pairs: (b,b) u1, (b,u) u2 -> 2 pairs.
    #   human: none -> nan; bot: 2 with, 1 both -> 1/2; unsure: 1 with, 0 both -> 0/1.
    expected = [
        LabelCooccurrence("DR", "human", 0, 0, nan),
        LabelCooccurrence("DR", "bot", 2, 1, 0.5),
        LabelCooccurrence("DR", "unsure", 1, 0, 0.0),
        LabelCooccurrence("GPT", "human", 5, 2, 0.4),
        LabelCooccurrence("GPT", "bot", 1, 0, 0.0),
        LabelCooccurrence("GPT", "unsure", 2, 0, 0.0),
    ]
    result = label_cooccurrence_agreement(judgments)
    assert [(r.system, r.label, r.n_pairs_with_label, r.n_pairs_both) for r in result] == [
        (e.system, e.label, e.n_pairs_with_label, e.n_pairs_both) for e in expected
    ]
    for got, want in zip(result, expected, strict=True):
        assert same_float(got.share, want.share, 1e-15)


def test_label_cooccurrence_matches_a_cross_table_with_two_annotators():
    # Independent formulation: from the 3x3 table of (first, second) labels per entity,
    # share(l) = n_ll / (n_l. + n_.l - n_ll) by inclusion-exclusion.
    labels = ("human", "bot", "unsure")
    rng = random.Random(7)
    judgments, table = [], {"S1": Counter(), "S2": Counter()}
    for unit in range(300):
        for speaker, system in (("A", "S1"), ("B", "S2")):
            first, second = rng.choice(labels), rng.choice(labels)
            table[system][first, second] += 1
            judgments.append(EntityJudgment(unit, speaker, system, f"w{unit}", first))
            judgments.append(EntityJudgment(unit, speaker, system, f"v{unit}", second))
    for result in label_cooccurrence_agreement(judgments):
        cross = table[result.system]
        both = cross[result.label, result.label]
        first = sum(cross[result.label, other] for other in labels)
        second = sum(cross[other, result.label] for other in labels)
        assert result.n_pairs_both == both
        assert result.n_pairs_with_label == first + second - both
        assert result.share == pytest.approx(both / (first + second - both), abs=1e-15)


def test_label_cooccurrence_rejects_inconsistent_input():
    with pytest.raises(ValueError, match="unknown label"):
        label_cooccurrence_agreement([EntityJudgment(1, "A", "S", "w", "robot")])
    with pytest.raises(ValueError, match="twice"):
        label_cooccurrence_agreement(
            [EntityJudgment(1, "A", "S", "w", "bot"), EntityJudgment(1, "A", "S", "w", "human")]
        )
    with pytest.raises(ValueError, match="attributed"):
        label_cooccurrence_agreement(
            [EntityJudgment(1, "A", "S", "w", "bot"), EntityJudgment(1, "A", "T", "v", "bot")]
        )


# --- Cohen's kappa against scikit-learn ---------------------------------------------------------


def sklearn_kappa(a, b, labels, weights):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn warns before returning nan
        return cohen_kappa_score(a, b, labels=labels, weights=weights)


@settings(max_examples=300, deadline=None)
@given(
    ratings=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=40),
    weights=st.sampled_from([None, "linear", "quadratic"]),
    labels=st.none() | st.lists(st.integers(0, 5), min_size=1, max_size=6, unique=True),
)
def test_cohen_kappa_matches_sklearn(ratings, weights, labels):
    a, b = (list(column) for column in zip(*ratings, strict=True))
    # sklearn refuses a label set absent from the first rater; that is its input check only.
    assume(labels is None or set(labels) & set(a))
    expected = sklearn_kappa(a, b, labels, weights)
    actual = cohen_kappa(a, b, labels=labels, weights=weights).statistic
    assert same_float(actual, expected, 1e-12)


def test_cohen_kappa_on_string_labels_matches_sklearn_and_counts_items():
    a = ["tie", "A", "A", "B", "tie", "B", "A", "unknown"]
    b = ["tie", "A", "B", "B", "A", "tie", "A", "A"]
    labels = ["A", "tie", "B"]  # order matters for the weighted variants
    for weights in (None, "linear", "quadratic"):
        result = cohen_kappa(a, b, labels=labels, weights=weights)
        assert result.statistic == pytest.approx(
            cohen_kappa_score(a, b, labels=labels, weights=weights), abs=1e-12
        )
        assert result.n_items == 7  # the pair with "unknown" is outside the label set
    assert cohen_kappa(a, b).statistic == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_cohen_kappa_rejects_bad_input():
    with pytest.raises(ValueError):
        cohen_kappa([1, 2], [1])
    with pytest.raises(ValueError):
        cohen_kappa([1, 2], [1, 2], weights="cubic")


# --- Krippendorff's alpha -----------------------------------------------------------------------

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section E: 4 observers x
# 12 units, values 1-5, missing data. Unit 12 has a single value and is not pairable, so
# n = 40 pairable values in 11 units. Published: nominal .743, ordinal .815, interval .849.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_reproduces_krippendorff_2011(level, published):
    result = krippendorff_alpha(KRIPPENDORFF_2011, level)
    assert round(result.statistic, 3) == published
    assert result.n_values == 40
    assert result.n_units == 11
    assert result.statistic == pytest.approx(
        1 - result.observed_disagreement / result.expected_disagreement, abs=1e-15
    )


def test_nominal_alpha_hand_computed_from_coincidences():
    # Krippendorff (2011) section C: nominal alpha = ((n-1) sum_c o_cc - sum_c n_c(n_c-1)) /
    # (n(n-1) - sum_c n_c(n_c-1)). For the matrix above, o_cc = (7, 10, 8, 4, 3) with totals
    # n_c = (9, 13, 10, 5, 3), n = 40:
    # (39 * 32 - (72 + 156 + 90 + 20 + 6)) / (1560 - 344) = (1248 - 344) / 1216 = 904 / 1216.
    assert krippendorff_alpha(KRIPPENDORFF_2011, "nominal").statistic == pytest.approx(
        904 / 1216, abs=1e-15
    )


@st.composite
def reliability_matrices(draw):
    n_raters = draw(st.integers(2, 5))
    n_units = draw(st.integers(1, 25))
    domain = draw(
        st.sampled_from([[0.0, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0], [-2.5, 0.0, 0.5, 3.0, 10.0, 11.25]])
    )
    cells = st.sampled_from(domain) | st.just(nan)
    flat = draw(st.lists(cells, min_size=n_raters * n_units, max_size=n_raters * n_units))
    return np.array(flat).reshape(n_raters, n_units)


@settings(max_examples=300, deadline=None)
@given(data=reliability_matrices(), level=st.sampled_from(["nominal", "ordinal", "interval"]))
def test_alpha_matches_krippendorff_package(data, level):
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    # The package's own preconditions: two distinct values and one pairable unit.
    assume(pairable.any() and len(np.unique(data[~np.isnan(data)])) > 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 0/0 when pairable values do not vary
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert same_float(krippendorff_alpha(data, level).statistic, expected, 1e-10)


def test_alpha_is_nan_without_variation_and_fails_without_pairs():
    assert math.isnan(krippendorff_alpha([[1, 1, 2], [1, 1, nan]]).statistic)
    with pytest.raises(ValueError, match="two raters"):
        krippendorff_alpha([[1, nan], [nan, 2]])
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(KRIPPENDORFF_2011, "ratio")


# --- BCa bootstrap over units against scipy + the krippendorff package ----------------------


def reference_bca(pairable_matrix, level, n_resamples, seed):
    """scipy's BCa bootstrap over unit indices with the krippendorff package as statistic."""

    def alpha_of_units(unit_indices):
        try:
            return krippendorff.alpha(
                reliability_data=pairable_matrix[:, unit_indices], level_of_measurement=level
            )
        except ValueError:  # a resample with a single value: alpha undefined
            return nan

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return stats.bootstrap(
            (np.arange(pairable_matrix.shape[1]),),
            alpha_of_units,
            n_resamples=n_resamples,
            vectorized=False,
            method="BCa",
            rng=seed,
        )


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_bca_interval_matches_scipy_bootstrap_with_reference_alpha(level):
    generator = np.random.default_rng(42)
    data = generator.integers(1, 6, size=(3, 60)).astype(float)
    data[generator.random(data.shape) < 0.25] = nan
    pairable_matrix = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    assert pairable_matrix.shape[1] < data.shape[1]  # unpairable units present and dropped

    result = krippendorff_alpha_bca(data, level, n_resamples=999, rng=3)
    expected = reference_bca(pairable_matrix, level, n_resamples=999, seed=3)

    assert result.statistic == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement=level), abs=1e-10
    )
    assert result.n_units == pairable_matrix.shape[1]
    assert result.low == pytest.approx(expected.confidence_interval.low, abs=1e-10)
    assert result.high == pytest.approx(expected.confidence_interval.high, abs=1e-10)
    assert result.standard_error == pytest.approx(expected.standard_error, abs=1e-10)
    assert result.low < result.statistic < result.high
    assert result.n_undefined_resamples == 0


def test_bca_resamples_in_batches_exactly_as_scipy_bootstrap_does(monkeypatch):
    # The resampling is written out (scipy.stats is not imported on the analysis path); in
    # batches of 7 resamples, as scipy draws them with batch=7, the distributions are equal.
    import evalstats.agreement as agreement

    data = np.random.default_rng(8).integers(1, 4, size=(2, 40)).astype(float)
    monkeypatch.setattr(agreement, "_MAX_BATCH_CELLS", 7 * data.shape[1])
    result = krippendorff_alpha_bca(data, "nominal", n_resamples=101, rng=11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = stats.bootstrap(
            (np.arange(data.shape[1]),),
            lambda units: krippendorff.alpha(
                reliability_data=data[:, units], level_of_measurement="nominal"
            ),
            n_resamples=101,
            batch=7,
            vectorized=False,
            method="BCa",
            rng=11,
        )
    assert result.standard_error == pytest.approx(expected.standard_error, abs=1e-12)
    assert result.low == pytest.approx(expected.confidence_interval.low, abs=1e-12)
    assert result.high == pytest.approx(expected.confidence_interval.high, abs=1e-12)


def test_bca_interval_is_reproducible_and_seed_dependent():
    first = krippendorff_alpha_bca(KRIPPENDORFF_2011, "interval", n_resamples=500, rng=1)
    again = krippendorff_alpha_bca(KRIPPENDORFF_2011, "interval", n_resamples=500, rng=1)
    other = krippendorff_alpha_bca(KRIPPENDORFF_2011, "interval", n_resamples=500, rng=2)
    assert first == again
    assert (first.low, first.high) != (other.low, other.high)


def test_bca_interval_reports_undefined_resamples_of_a_rare_label():
    # One positive among 20 double-annotated units: leaving it out leaves no variation.
    data = np.zeros((2, 20))
    data[:, 0] = [1, 0]
    data[:, 1] = [1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = krippendorff_alpha_bca(data, n_resamples=200, rng=0)
    assert result.n_undefined_resamples > 0
    assert math.isnan(result.low) and math.isnan(result.high)


def test_bca_needs_two_pairable_units():
    with pytest.raises(ValueError, match="two pairable units"):
        krippendorff_alpha_bca([[1, 2, nan], [1, nan, 3]])


def test_clustered_bca_resamples_whole_clusters_like_scipy_over_cluster_indices():
    generator = np.random.default_rng(9)
    data = generator.integers(1, 4, size=(2, 48)).astype(float)
    data[1, generator.random(48) < 0.3] = nan
    clusters = np.repeat(np.arange(12), 4)  # 12 conversations of 4 turns each
    result = krippendorff_alpha_bca(data, "ordinal", clusters=clusters, n_resamples=400, rng=5)

    def alpha_of_clusters(cluster_indices):
        columns = np.concatenate([np.flatnonzero(clusters == c) for c in cluster_indices])
        return krippendorff.alpha(reliability_data=data[:, columns], level_of_measurement="ordinal")

    expected = stats.bootstrap(
        (np.arange(12),), alpha_of_clusters, n_resamples=400, vectorized=False, method="BCa", rng=5
    )
    assert result.n_units == 12
    assert result.statistic == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"), abs=1e-10
    )
    assert result.low == pytest.approx(expected.confidence_interval.low, abs=1e-10)
    assert result.high == pytest.approx(expected.confidence_interval.high, abs=1e-10)
    singletons = krippendorff_alpha_bca(
        data, "ordinal", clusters=[f"u{k}" for k in range(48)], n_resamples=400, rng=5
    )
    assert singletons == krippendorff_alpha_bca(data, "ordinal", n_resamples=400, rng=5)
    with pytest.raises(ValueError, match="clusters has 3 labels for 48 units"):
        krippendorff_alpha_bca(data, clusters=[1, 2, 3])


def test_bca_without_any_variation_is_nan_without_resampling():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = krippendorff_alpha_bca(np.zeros((2, 5)), n_resamples=50)
    assert math.isnan(result.statistic) and math.isnan(result.low) and math.isnan(result.high)
    assert result.n_undefined_resamples == 50


# --- ABC-Eval per-label agreement -----------------------------------------------------------


def make_turn_judgments(seed):
    rng = random.Random(seed)
    judgments = []
    for turn in range(80):
        n_annotators = rng.choice([1, 2, 2, 2, 3])
        annotators = rng.sample(["ann1", "ann2", "ann3", "ann4", "ann5"], n_annotators)
        truth = {"!Fac": rng.random() < 0.3, "Emp": rng.random() < 0.5}
        for annotator in annotators:
            for label, present in truth.items():
                agrees = rng.random() < 0.8
                judgments.append(
                    BinaryTurnJudgment(f"t{turn}", annotator, label, present == agrees)
                )
    return judgments


def annotator_by_turn_matrix(judgments, label):
    """Reference layout: one row per annotator, turns in order of first appearance."""
    relevant = [j for j in judgments if j.label == label]
    annotators = sorted({j.annotator for j in relevant})
    turns = list(dict.fromkeys(j.turn for j in relevant))
    matrix = np.full((len(annotators), len(turns)), nan)
    for j in relevant:
        matrix[annotators.index(j.annotator), turns.index(j.turn)] = float(j.present)
    return matrix


def test_binary_label_agreement_matches_reference_alpha_and_bca():
    judgments = make_turn_judgments(seed=5)
    agreements = binary_label_agreement(judgments, n_resamples=999, rng=11)
    assert list(agreements) == ["!Fac", "Emp"]
    for label, agreement in agreements.items():
        matrix = annotator_by_turn_matrix(judgments, label)
        pairable_matrix = matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2]
        expected = reference_bca(pairable_matrix, "nominal", n_resamples=999, seed=11)
        assert agreement.label == label
        assert agreement.n_turns == pairable_matrix.shape[1]
        assert agreement.n_positive == int(np.nansum(pairable_matrix))
        assert agreement.alpha.statistic == pytest.approx(
            krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"),
            abs=1e-10,
        )
        assert agreement.alpha.low == pytest.approx(expected.confidence_interval.low, abs=1e-10)
        assert agreement.alpha.high == pytest.approx(expected.confidence_interval.high, abs=1e-10)


def test_binary_label_agreement_skips_labels_without_two_paired_turns():
    judgments = [
        BinaryTurnJudgment("t1", "a", "Rare", True),
        BinaryTurnJudgment("t1", "b", "Rare", False),
        BinaryTurnJudgment("t2", "a", "Rare", True),
    ]
    assert binary_label_agreement(judgments, n_resamples=50) == {}


def test_binary_label_agreement_rejects_duplicate_judgments():
    judgments = [BinaryTurnJudgment("t1", "a", "Emp", True)] * 2
    with pytest.raises(ValueError, match="twice"):
        binary_label_agreement(judgments)
