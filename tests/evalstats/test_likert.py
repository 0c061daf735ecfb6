import krippendorff
import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import DescrStatsW, ttest_ind

from evalstats.likert import LikertScore, likert_agreement, likert_comparisons, likert_means

SYSTEMS = {"alpha": 2.5, "beta": 3.2, "gamma": 4.0}


def _scores(seed=5, n_conversations=15, n_turns=4, doubled=8):
    """Dialogue ratings of 'quality' and turn ratings of 'relevance'; some annotated twice."""
    rng = np.random.default_rng(seed)
    scores = []
    for system, centre in SYSTEMS.items():
        for c in range(n_conversations):
            conversation = f"{system}-{c}"
            base = np.clip(np.round(centre + rng.normal(0, 0.8)), 1, 5)
            for a in range(2 if c < doubled else 1):
                shift = rng.choice([-1, 0, 0, 0, 1]) if a else 0
                annotation = f"{conversation}/{a}"
                scores.append(
                    LikertScore(conversation, system, annotation, "quality", base + shift)
                )
                for t in range(n_turns):
                    turn_score = np.clip(base + rng.choice([-1, 0, 1]), 1, 5)
                    scores.append(
                        LikertScore(conversation, system, annotation, "relevance", turn_score, t)
                    )
    return scores


def test_dialogue_means_match_statsmodels_t_interval():
    scores = _scores()
    means = [m for m in likert_means(scores) if m.level == "dialogue"]
    assert [m.system for m in means] == ["alpha", "beta", "gamma"]
    for mean in means:
        values = [s.score for s in scores if s.system == mean.system and s.dimension == "quality"]
        assert mean.n == len(values) == 23
        low, high = DescrStatsW(np.array(values)).tconfint_mean()
        assert (mean.mean, mean.low, mean.high) == pytest.approx(
            (np.mean(values), low, high), rel=1e-12
        )


def test_turn_means_average_turns_per_conversation_annotation_first():
    scores = _scores()
    means = {m.system: m for m in likert_means(scores) if m.level == "turn"}
    gamma = [s for s in scores if s.system == "gamma" and s.turn is not None]
    per_annotation = {}
    for s in gamma:
        per_annotation.setdefault(s.annotation, []).append(s.score)
    averages = np.array([np.mean(v) for v in per_annotation.values()])
    low, high = DescrStatsW(averages).tconfint_mean()
    assert means["gamma"].n == 23 and means["gamma"].unit == "conversation"
    assert (means["gamma"].low, means["gamma"].high) == pytest.approx((low, high), rel=1e-12)
    by_turn = {m.system: m for m in likert_means(scores, turn_unit="turn") if m.level == "turn"}
    assert by_turn["gamma"].n == len(gamma) and by_turn["gamma"].unit == "turn"


@pytest.mark.parametrize("equal_var", [True, False])
def test_comparisons_match_statsmodels_ttest_and_holm(equal_var):
    scores = _scores()
    comparisons = [
        c for c in likert_comparisons(scores, equal_var=equal_var) if c.level == "dialogue"
    ]
    assert [(c.system_a, c.system_b) for c in comparisons] == [
        ("alpha", "beta"),
        ("alpha", "gamma"),
        ("beta", "gamma"),
    ]
    raw = []
    for comparison in comparisons:
        a = [s.score for s in scores if s.system == comparison.system_a and s.turn is None]
        b = [s.score for s in scores if s.system == comparison.system_b and s.turn is None]
        t, p, df = ttest_ind(a, b, usevar="pooled" if equal_var else "unequal")
        assert (comparison.statistic, comparison.pvalue, comparison.df) == pytest.approx(
            (t, p, df), rel=1e-10
        )
        raw.append(p)
    _, holm, _, _ = multipletests(raw, method="holm")
    assert [c.pvalue_adjusted for c in comparisons] == pytest.approx(holm, rel=1e-10)


def test_ordinal_alpha_matches_krippendorff_over_units_rated_twice():
    scores = _scores()
    agreement = {(a.level, a.dimension): a for a in likert_agreement(scores, n_resamples=200)}
    dialogue = agreement["dialogue", "quality"]
    units = {}
    for s in scores:
        if s.turn is None:
            units.setdefault(s.conversation, []).append(s.score)
    paired = [v for v in units.values() if len(v) == 2]
    matrix = np.array(paired).T
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    assert dialogue.n_units == 24
    assert dialogue.alpha.statistic == pytest.approx(expected, rel=1e-12)
    assert dialogue.alpha.low <= dialogue.alpha.statistic <= dialogue.alpha.high
    turn = agreement["turn", "relevance"]
    assert turn.n_units == 24 * 4 and turn.alpha.n_units == 24  # conversations resampled


def test_bad_scores_are_rejected_with_their_index():
    with pytest.raises(ValueError, match="score 1: rating must be a finite number"):
        likert_means([LikertScore("c", "s", "a", "q", 3), LikertScore("c", "s", "b", "q", np.nan)])
    with pytest.raises(ValueError, match="score 1: annotation 'a' rated 'q'"):
        likert_means([LikertScore("c", "s", "a", "q", 3), LikertScore("c", "s", "a", "q", 4)])


def test_single_observation_has_no_interval():
    (mean,) = likert_means([LikertScore("c", "s", "a", "q", 4)])
    assert mean.mean == 4 and mean.n == 1 and np.isnan(mean.low)
    assert likert_comparisons([LikertScore("c", "s", "a", "q", 4)]) == ()
