"""The pairing rules: uniform pair probabilities by hand, drawn frequencies against them
(a chi-square goodness-of-fit test from scipy), and the adaptive draw against the engine."""

import random
from collections import Counter

import pytest
from scipy import stats

from arenas.pairing import NoPair, draw_adaptive, draw_pair, pair_weights


def test_pair_weights_are_products_over_unordered_pairs():
    assert pair_weights([1.0, 2.0, 0.0, 3.0]) == [(0, 1, 2.0), (0, 3, 3.0), (1, 3, 6.0)]


def test_the_state_names_the_rule_the_weights_and_the_pairs_probability():
    draw = draw_pair(["x", "y", "z"], [1.0, 1.0, 2.0], random.Random(1))
    assert draw.state["rule"] == "uniform"
    assert draw.state["weights"] == {"x": 1.0, "y": 1.0, "z": 2.0}
    assert draw.state["pairs"] == 3
    # Pairs xy, xz, yz weigh 1, 2, 2 out of 5.
    expected = {frozenset("xy"): 0.2, frozenset("xz"): 0.4, frozenset("yz"): 0.4}
    assert draw.state["probability"] == pytest.approx(expected[frozenset((draw.a, draw.b))])
    assert draw.a != draw.b


def test_equal_weights_draw_every_pair_equally_often_and_each_side_half_the_time():
    rng = random.Random(7)
    keys = ["p", "q", "r", "s"]
    draws = [draw_pair(keys, [1, 1, 1, 1], rng) for _ in range(6000)]
    pairs = Counter(frozenset((d.a, d.b)) for d in draws)
    assert len(pairs) == 6
    assert stats.chisquare(list(pairs.values())).pvalue > 0.001
    sides = Counter(d.a for d in draws if {d.a, d.b} == {"p", "q"})
    assert stats.binomtest(sides["p"], sides["p"] + sides["q"]).pvalue > 0.001


def test_weights_shift_the_frequencies_as_declared():
    rng = random.Random(3)
    draws = [draw_pair(["x", "y", "z"], [1.0, 1.0, 2.0], rng) for _ in range(5000)]
    counts = Counter(frozenset((d.a, d.b)) for d in draws)
    observed = [counts[frozenset(p)] for p in ("xy", "xz", "yz")]
    assert stats.chisquare(observed, [1000, 2000, 2000]).pvalue > 0.001


def test_a_zero_weight_is_never_drawn_and_one_system_is_no_pair():
    rng = random.Random(0)
    assert all("z" not in (d.a, d.b) for d in (draw_pair("xyz", [1, 1, 0], rng) for _ in range(50)))
    with pytest.raises(NoPair):
        draw_pair(["x", "y"], [1.0, 0.0], rng)
    with pytest.raises(ValueError):
        draw_pair(["x", "y"], [1.0, -1.0], rng)


# The adaptive rule (issue 27) -------------------------------------------------------------


def test_the_adaptive_draw_follows_the_engine_s_probabilities():
    # Drawn frequencies against evalstats.pairing's pair probabilities (chi-square).
    from evalstats import pairing

    state = pairing.add_votes(pairing.new_state(3), [0, 0, 1, 0], [1, 1, 2, 2], [False] * 4)
    expected = pairing.pair_probabilities(state)
    rng = random.Random(11)
    counts = Counter()
    for _ in range(3000):
        draw = draw_adaptive(["x", "y", "z"], [1.0, 1.0, 1.0], state, rng, level=0.95)
        counts[frozenset((draw.a, draw.b))] += 1
    cells = [(frozenset("xy"), 0, 1), (frozenset("xz"), 0, 2), (frozenset("yz"), 1, 2)]
    observed = [counts[key] for key, _, _ in cells]
    probabilities = [expected[i, j] for _, i, j in cells]
    assert stats.chisquare(observed, [3000 * p for p in probabilities]).pvalue > 0.001


def test_the_adaptive_record_names_the_rule_its_inputs_and_the_pairs_probability():
    from evalstats import pairing

    state = pairing.new_state(3)
    draw = draw_adaptive(["x", "y", "z"], [1.0, 0.0, 2.0], state, random.Random(2), level=0.9)
    assert {draw.a, draw.b} == {"x", "z"}  # y has weight 0
    assert draw.state["rule"] == "adaptive" and draw.state["level"] == 0.9
    assert draw.state["weights"] == {"x": 1.0, "z": 2.0}
    assert draw.state["probability"] == pytest.approx(1.0)
    assert draw.state["strengths"] == {"x": 0.0, "y": 0.0, "z": 0.0}
