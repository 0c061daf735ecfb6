import itertools

import krippendorff
import numpy as np
import pytest
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


def test_rates_count_every_annotation_and_match_statsmodels_wilson():
    judgments = _judgments()
    rates = behaviour_rates(judgments)
    assert [(r.system, r.label) for r in rates] == sorted(
        itertools.product(SYSTEMS, LABELS), key=lambda k: k
    )
    for rate in rates:
        mine = [j for j in judgments if j.system == rate.system and j.label == rate.label]
        # 12 conversations x 6 turns, plus 6 doubled conversations x 6 turns.
        assert rate.n_turns == len(mine) == 108
        assert rate.n_present == sum(j.present for j in mine)
        low, high = proportion_confint(rate.n_present, rate.n_turns, method="wilson")
        assert (rate.low, rate.high) == pytest.approx((low, high), abs=1e-12)
        assert rate.annotations_used == "all"


def test_first_use_keeps_one_annotation_per_conversation():
    judgments = _judgments()
    rates = behaviour_rates(judgments, use="first")
    for rate in rates:
        first = [
            j
            for j in judgments
            if j.system == rate.system and j.label == rate.label and j.annotation.endswith("/0")
        ]
        assert rate.n_turns == len(first) == 72
        assert rate.n_present == sum(j.present for j in first)
        assert rate.annotations_used == "first"


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
    # ignore rates of 0.10 vs 0.55 over 108 turns each differ beyond doubt.
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
