import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from evalstats.comparative import ComparativeJudgment, comparative_results
from evalstats.sensitivity import count_significant


def _many(system_a, system_b, dimension, wins, ties, losses):
    return (
        [ComparativeJudgment(system_a, system_b, dimension, "a")] * wins
        + [ComparativeJudgment(system_a, system_b, dimension, "tie")] * ties
        + [ComparativeJudgment(system_a, system_b, dimension, "b")] * losses
    )


def test_shares_sign_test_and_orientation_hand_worked():
    # bart vs blender on quality: 14 wins, 4 ties, 6 losses once both orders are pooled
    # (blender-first judgments are turned round: blender's 2 wins are bart's 2 losses).
    judgments = _many("bart", "blender", "quality", 12, 4, 4) + _many(
        "blender", "bart", "quality", 2, 0, 2
    )
    (result,) = comparative_results(judgments)
    assert (result.system_a, result.system_b, result.n) == ("bart", "blender", 24)
    assert (result.wins.count, result.ties.count, result.losses.count) == (14, 4, 6)
    assert result.wins.proportion == pytest.approx(14 / 24)
    low, high = proportion_confint(14, 24, method="wilson")
    assert (result.wins.low, result.wins.high) == pytest.approx((low, high), abs=1e-12)
    # Ties dropped: 14 wins against 6 losses, Binomial(20, 1/2).
    assert result.statistic == 14
    assert result.pvalue == pytest.approx(binomtest(14, 20).pvalue, rel=1e-12)


def test_holm_within_each_dimension_and_table_5_counts():
    judgments = (
        _many("a", "b", "quality", 20, 2, 3)
        + _many("a", "c", "quality", 9, 5, 8)
        + _many("b", "c", "quality", 3, 1, 15)
        + _many("a", "b", "engaging", 10, 0, 10)
    )
    results = comparative_results(judgments)
    quality = [r for r in results if r.metric == "quality"]
    raw = [binomtest(r.wins.count, r.wins.count + r.losses.count).pvalue for r in quality]
    _, holm, _, _ = multipletests(raw, method="holm")
    assert [r.pvalue_adjusted for r in quality] == pytest.approx(holm, rel=1e-10)
    (engaging,) = [r for r in results if r.metric == "engaging"]
    assert engaging.pvalue == engaging.pvalue_adjusted == 1.0
    counts = {(c.metric, c.alpha): c.n_significant for c in count_significant(results)}
    assert counts["quality", 0.05] == sum(p < 0.05 for p in holm) == 2
    assert counts["engaging", 0.1] == 0


def test_pairs_with_only_ties_stay_out_of_the_family():
    judgments = _many("a", "b", "q", 15, 0, 2) + _many("a", "c", "q", 0, 6, 0)
    tied = {(r.system_a, r.system_b): r for r in comparative_results(judgments)}
    assert tied["a", "c"].pvalue == tied["a", "c"].pvalue_adjusted == 1.0
    # A family of one: Holm leaves the a-b p-value as it is.
    assert tied["a", "b"].pvalue_adjusted == pytest.approx(binomtest(15, 17).pvalue)


def test_invalid_judgments_are_rejected_with_their_index():
    with pytest.raises(ValueError, match="judgment 1: outcome must be one of"):
        comparative_results(
            [ComparativeJudgment("a", "b", "q", "a"), ComparativeJudgment("a", "b", "q", "x")]
        )
    with pytest.raises(ValueError, match="judgment 0: compares 'a' with itself"):
        comparative_results([ComparativeJudgment("a", "a", "q", "tie")])


def _judged_twice():
    """12 pairs of conversations judged once (a wins 8, b 4) and 6 judged twice, with the
    second judgment shown the other way round: a wins both on 3, splits on 2, b both on 1."""
    judgments = [
        ComparativeJudgment("a", "b", "q", "a" if item < 8 else "b", item) for item in range(12)
    ]
    twice = [("a", "a"), ("a", "a"), ("a", "a"), ("a", "b"), ("b", "a"), ("b", "b")]
    for item, (first, second) in enumerate(twice, start=12):
        judgments.append(ComparativeJudgment("a", "b", "q", first, item))
        judgments.append(ComparativeJudgment("b", "a", "q", "b" if second == "a" else "a", item))
    return judgments


def test_a_pair_judged_twice_is_one_unit_its_first_verdict():
    (result,) = comparative_results(_judged_twice())
    # First verdicts: a wins 8 + 4 of 18 pairs, b 4 + 2.
    assert (result.n, result.judgments, result.annotations_used) == (18, 24, "first")
    assert (result.wins.count, result.ties.count, result.losses.count) == (12, 0, 6)
    assert result.pvalue == pytest.approx(binomtest(12, 18).pvalue, rel=1e-12)


def test_all_judgments_of_a_pair_give_its_majority_verdict():
    (result,) = comparative_results(_judged_twice(), use="all")
    # Majorities: a 8 + 3, split (tie) 2, b 4 + 1, over 18 pairs, not 24 judgments.
    assert (result.n, result.judgments) == (18, 24)
    assert (result.wins.count, result.ties.count, result.losses.count) == (11, 2, 5)
    assert result.pvalue == pytest.approx(binomtest(11, 16).pvalue, rel=1e-12)
    with pytest.raises(ValueError, match="an earlier judgment of it 'a' with 'b'"):
        comparative_results(_judged_twice() + [ComparativeJudgment("a", "c", "q", "a", 0)])
