import itertools

import krippendorff
import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from evalstats.behaviour import (
    BehaviourJudgment,
    behaviour_agreement,
    behaviour_comparisons,
    behaviour_rates,
)
from evalstats.sensitivity import count_significant

SYSTEMS = {"alpha": 0.10, "beta": 0.30, "gamma": 0.55}
LABELS = ("ignore", "empathetic")


def _judgments(seed=7, n_conversations=12, n_turns=6, doubled=6):
    """Each system has n_conversations; the first ``doubled`` are annotated twice.

    The second annotation copies the first with 15% of decisions flipped, so agreement is
    high but imperfect.
    """
    rng = np.random.default_rng(seed)
    judgments = []
    for system, rate in SYSTEMS.items():
        for c in range(n_conversations):
            conversation = f"{system}-{c}"
            for label in LABELS:
                first = rng.random(n_turns) < (rate if label == "ignore" else 0.5)
                annotations = [first]
                if c < doubled:
                    annotations.append(first ^ (rng.random(n_turns) < 0.15))
                for a, decisions in enumerate(annotations):
                    judgments.extend(
                        BehaviourJudgment(conversation, system, t, f"{conversation}/{a}", label, d)
                        for t, d in enumerate(decisions)
                    )
    return judgments


def test_rates_count_one_annotation_per_conversation_and_match_statsmodels_wilson():
    judgments = _judgments()
    rates = behaviour_rates(judgments)
    assert [(r.system, r.label) for r in rates] == sorted(
        itertools.product(SYSTEMS, LABELS), key=lambda k: k
    )
    for rate in rates:
        first = [
            j
            for j in judgments
            if j.system == rate.system and j.label == rate.label and j.annotation.endswith("/0")
        ]
        # The paper's design: 12 conversations x 6 turns, the second annotations left out.
        assert rate.n_turns == len(first) == 72 == rate.n_clusters
        assert rate.n_present == sum(j.present for j in first)
        low, high = proportion_confint(rate.n_present, rate.n_turns, method="wilson")
        assert (rate.low, rate.high) == pytest.approx((low, high), abs=1e-12)
        assert (rate.annotations_used, rate.clusters) == ("first", "turn")
        assert rate.design_effect == 1.0


def _turn_clusters(judgments, rate, by_conversation=False):
    """(present, cluster codes) of one rate's judgments, for statsmodels."""
    mine = [j for j in judgments if j.system == rate.system and j.label == rate.label]
    keys = [j.conversation if by_conversation else (j.conversation, j.turn) for j in mine]
    codes = {key: code for code, key in enumerate(dict.fromkeys(keys))}
    return (
        np.array([float(j.present) for j in mine]),
        np.array([codes[key] for key in keys]),
    )


@pytest.mark.parametrize("by_conversation", [False, True])
def test_every_annotation_counts_with_the_design_effect_of_its_clusters(by_conversation):
    judgments = _judgments()
    clusters = "conversation" if by_conversation else "turn"
    rates = behaviour_rates(judgments, use="all", clusters=clusters)
    for rate in rates:
        present, codes = _turn_clusters(judgments, rate, by_conversation)
        # 12 conversations x 6 turns, plus 6 doubled conversations x 6 turns.
        assert rate.n_turns == present.size == 108
        assert rate.n_clusters == (12 if by_conversation else 72)
        model = sm.OLS(present, np.ones(present.size))
        robust = model.fit(cov_type="cluster", cov_kwds={"groups": codes}).bse[0] ** 2
        assert rate.design_effect == pytest.approx(robust / model.fit().bse[0] ** 2, rel=1e-10)
        # Wilson's interval on the effective counts, never on the 108 pseudo-replicates.
        low, high = proportion_confint(
            rate.n_present / rate.design_effect,
            rate.n_turns / rate.design_effect,
            method="wilson",
        )
        assert (rate.low, rate.high) == pytest.approx((low, high), abs=1e-12)
        assert rate.effective_n == pytest.approx(108 / rate.design_effect)
    if not by_conversation:
        # A second, largely agreeing annotation of half the turns adds little information:
        # about the 72 turns' worth of one annotation, far from 108 independent ones.
        assert all(60 < rate.effective_n < 90 for rate in rates)


def test_a_duplicated_annotation_leaves_the_interval_as_one_annotation():
    once = [j for j in _judgments() if j.annotation.endswith("/0")]
    copies = once + [
        BehaviourJudgment(
            j.conversation, j.system, j.turn, "copy/" + j.annotation, j.label, j.present
        )
        for j in once
    ]
    single = {(r.system, r.label): r for r in behaviour_rates(once)}
    for rate in behaviour_rates(copies, use="all"):
        alone = single[rate.system, rate.label]
        assert rate.n_turns == 2 * alone.n_turns
        # d = (2T - 1) / (T - 1): the effective n is T less half a turn.
        assert rate.effective_n == pytest.approx(alone.n_turns - 0.5, abs=0.01)
        assert rate.high - rate.low == pytest.approx(alone.high - alone.low, rel=0.01)


def test_comparisons_of_all_annotations_are_z_tests_on_effective_counts():
    rates = behaviour_rates(_judgments(), use="all")
    by_key = {(r.system, r.label): r for r in rates}
    for comparison in behaviour_comparisons(rates):
        a = by_key[comparison.system_a, comparison.metric]
        b = by_key[comparison.system_b, comparison.metric]
        z, p = proportions_ztest(
            [a.n_present / a.design_effect, b.n_present / b.design_effect],
            [a.effective_n, b.effective_n],
        )
        assert comparison.statistic == pytest.approx(z, rel=1e-10)
        assert comparison.pvalue == pytest.approx(p, rel=1e-10)


def test_comparisons_match_statsmodels_ztest_and_holm_within_label():
    rates = behaviour_rates(_judgments())
    comparisons = behaviour_comparisons(rates)
    assert len(comparisons) == 6
    by_key = {(r.system, r.label): r for r in rates}
    for label in LABELS:
        family = [c for c in comparisons if c.metric == label]
        raw = []
        for comparison in family:
            a, b = by_key[comparison.system_a, label], by_key[comparison.system_b, label]
            z, p = proportions_ztest([a.n_present, b.n_present], [a.n_turns, b.n_turns])
            assert comparison.statistic == pytest.approx(z, rel=1e-12)
            assert comparison.pvalue == pytest.approx(p, rel=1e-10)
            raw.append(p)
        _, holm, _, _ = multipletests(raw, method="holm")
        assert [c.pvalue_adjusted for c in family] == pytest.approx(holm, rel=1e-10)
    bonferroni = behaviour_comparisons(rates, correction="bonferroni")
    assert all(c.correction == "bonferroni" for c in bonferroni)
    assert bonferroni[0].pvalue_adjusted == pytest.approx(min(1, 3 * bonferroni[0].pvalue))


def test_significance_counts_per_label_and_alpha():
    comparisons = behaviour_comparisons(behaviour_rates(_judgments()))
    counts = count_significant(comparisons, (0.01, 0.05, 0.1))
    for count in counts:
        family = [c for c in comparisons if c.metric == count.metric]
        assert count.n_pairs == 3
        assert count.n_significant == sum(c.pvalue_adjusted < count.alpha for c in family)
    raw_counts = count_significant(comparisons, adjusted=False)
    assert all(r.n_significant >= a.n_significant for r, a in zip(raw_counts, counts, strict=True))
    # ignore rates of 0.10 vs 0.55 over 72 turns each differ beyond doubt.
    assert any(c.metric == "ignore" and c.n_significant >= 2 for c in counts)


def _reference_matrix(judgments, label, conversations):
    """Raters (annotation slot) x turns matrix for the krippendorff package."""
    columns = []
    for conversation in conversations:
        turns = {}
        for j in judgments:
            if j.conversation == conversation and j.label == label:
                turns.setdefault(j.turn, []).append(float(j.present))
        columns.extend(turns[t] for t in sorted(turns))
    matrix = np.full((2, len(columns)), np.nan)
    for k, column in enumerate(columns):
        matrix[: len(column), k] = column
    return matrix


def test_agreement_matches_krippendorff_and_a_scipy_bca_over_conversations():
    judgments = _judgments()
    agreement = behaviour_agreement(judgments, n_resamples=300, rng=3)
    doubled = sorted({j.conversation for j in judgments if j.annotation.endswith("/1")})
    for label in LABELS:
        result = agreement[label]
        matrix = _reference_matrix(judgments, label, doubled)
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
        assert result.alpha.statistic == pytest.approx(expected, rel=1e-12)
        assert result.n_conversations == result.alpha.n_units == len(doubled) == 18
        assert result.n_turns == 108

        def statistic(indices, label=label):
            chosen = [doubled[i] for i in indices]
            return krippendorff.alpha(
                reliability_data=_reference_matrix(judgments, label, chosen),
                level_of_measurement="nominal",
            )

        reference = stats.bootstrap(
            (np.arange(len(doubled)),),
            statistic,
            vectorized=False,
            n_resamples=300,
            method="BCa",
            rng=3,
        )
        assert result.alpha.low == pytest.approx(reference.confidence_interval.low, rel=1e-9)
        assert result.alpha.high == pytest.approx(reference.confidence_interval.high, rel=1e-9)


def test_agreement_without_variation_is_nan_and_single_annotations_are_left_out():
    judgments = [
        BehaviourJudgment(c, "s", t, f"{c}/{a}", "antisocial", False)
        for c in ("c1", "c2", "c3")
        for a in (0, 1)
        for t in range(3)
    ] + [BehaviourJudgment("c9", "s", 0, "c9/0", "ignore", True)]
    agreement = behaviour_agreement(judgments, n_resamples=50)
    assert list(agreement) == ["antisocial"]
    assert np.isnan(agreement["antisocial"].alpha.statistic)
    assert np.isnan(agreement["antisocial"].alpha.low)


def test_invalid_judgments_are_rejected_with_their_index():
    twice = [
        BehaviourJudgment("c", "s", 0, "a", "ignore", True),
        BehaviourJudgment("c", "s", 0, "a", "ignore", False),
    ]
    with pytest.raises(ValueError, match="judgment 1: annotation 'a' judged turn 0"):
        behaviour_rates(twice)
    two_systems = [
        BehaviourJudgment("c", "s", 0, "a", "ignore", True),
        BehaviourJudgment("c", "t", 1, "a", "ignore", False),
    ]
    with pytest.raises(ValueError, match="belongs to both 's' and 't'"):
        behaviour_rates(two_systems)
    with pytest.raises(ValueError, match="use must be one of"):
        behaviour_rates(twice[:1], use="last")
    with pytest.raises(ValueError, match="clusters must be one of"):
        behaviour_rates(twice[:1], clusters="annotator")
