import krippendorff
import numpy as np
import pandas as pd
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


def _first(scores):
    return [s for s in scores if s.annotation.endswith("/0")]


def _dialogue_means(scores, system):
    """Each dialogue's mean quality rating, by pandas, in the order the dialogues come."""
    frame = pd.DataFrame(
        [(s.conversation, s.score) for s in scores if s.system == system and s.turn is None],
        columns=["conversation", "score"],
    )
    return frame.groupby("conversation", sort=False)["score"].mean().to_numpy()


def test_dialogue_means_count_one_rating_per_dialogue_and_match_statsmodels():
    scores = _scores()
    means = [m for m in likert_means(scores) if m.level == "dialogue"]
    assert [m.system for m in means] == ["alpha", "beta", "gamma"]
    for mean in means:
        values = [
            s.score for s in _first(scores) if s.system == mean.system and s.dimension == "quality"
        ]
        # The paper's design: the first rating of each of 15 dialogues, not all 23 ratings.
        assert mean.n == mean.ratings == len(values) == 15
        assert (mean.unit, mean.annotations_used) == ("conversation", "first")
        low, high = DescrStatsW(np.array(values)).tconfint_mean()
        assert (mean.mean, mean.low, mean.high) == pytest.approx(
            (np.mean(values), low, high), rel=1e-12
        )


def test_all_dialogue_ratings_are_averaged_into_one_observation_per_dialogue():
    scores = _scores()
    means = [m for m in likert_means(scores, use="all") if m.level == "dialogue"]
    for mean in means:
        per_dialogue = _dialogue_means(scores, mean.system)
        assert (mean.n, mean.ratings) == (15, 23)
        low, high = DescrStatsW(per_dialogue).tconfint_mean()
        assert (mean.mean, mean.low, mean.high) == pytest.approx(
            (per_dialogue.mean(), low, high), rel=1e-12
        )
    comparisons = [c for c in likert_comparisons(scores, use="all") if c.level == "dialogue"]
    for comparison in comparisons:
        t, p, df = ttest_ind(
            _dialogue_means(scores, comparison.system_a),
            _dialogue_means(scores, comparison.system_b),
        )
        assert (comparison.statistic, comparison.pvalue, comparison.df) == pytest.approx(
            (t, p, df), rel=1e-10
        )
        assert df == 28  # 15 + 15 dialogues, not 23 + 23 ratings


def test_turn_means_average_turns_per_conversation_first():
    scores = _scores()
    means = {m.system: m for m in likert_means(scores) if m.level == "turn"}
    gamma = [s for s in _first(scores) if s.system == "gamma" and s.turn is not None]
    per_annotation = {}
    for s in gamma:
        per_annotation.setdefault(s.annotation, []).append(s.score)
    averages = np.array([np.mean(v) for v in per_annotation.values()])
    low, high = DescrStatsW(averages).tconfint_mean()
    assert means["gamma"].n == 15 and means["gamma"].unit == "conversation"
    assert means["gamma"].ratings == 60
    assert (means["gamma"].low, means["gamma"].high) == pytest.approx((low, high), rel=1e-12)
    by_turn = {m.system: m for m in likert_means(scores, turn_unit="turn") if m.level == "turn"}
    assert by_turn["gamma"].n == len(gamma) and by_turn["gamma"].unit == "turn"


def test_all_turn_ratings_average_annotations_within_their_unit():
    scores = _scores()
    gamma = [s for s in scores if s.system == "gamma" and s.turn is not None]
    by_conversation = {m.system: m for m in likert_means(scores, use="all") if m.level == "turn"}
    frame = pd.DataFrame(
        [(s.conversation, s.annotation, s.turn, s.score) for s in gamma],
        columns=["conversation", "annotation", "turn", "score"],
    )
    per_conversation = (
        frame.groupby(["conversation", "annotation"], sort=False)["score"]
        .mean()
        .groupby(level="conversation", sort=False)
        .mean()
    )
    assert (by_conversation["gamma"].n, by_conversation["gamma"].ratings) == (15, 92)
    assert by_conversation["gamma"].mean == pytest.approx(per_conversation.mean(), rel=1e-12)
    by_turn = {
        m.system: m for m in likert_means(scores, turn_unit="turn", use="all") if m.level == "turn"
    }
    per_turn = frame.groupby(["conversation", "turn"], sort=False)["score"].mean()
    low, high = DescrStatsW(per_turn.to_numpy()).tconfint_mean()
    assert by_turn["gamma"].n == 60 == len(per_turn)
    assert (by_turn["gamma"].low, by_turn["gamma"].high) == pytest.approx((low, high), rel=1e-12)


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
    first = _first(scores)
    for comparison in comparisons:
        a = [s.score for s in first if s.system == comparison.system_a and s.turn is None]
        b = [s.score for s in first if s.system == comparison.system_b and s.turn is None]
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
    with pytest.raises(ValueError, match="use must be one of"):
        likert_means([LikertScore("c", "s", "a", "q", 3)], use="last")


def test_single_observation_has_no_interval():
    (mean,) = likert_means([LikertScore("c", "s", "a", "q", 4)])
    assert mean.mean == 4 and mean.n == 1 and np.isnan(mean.low)
    assert likert_comparisons([LikertScore("c", "s", "a", "q", 4)]) == ()
