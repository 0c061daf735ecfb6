"""The arena's pairing rule: which two systems answer a new battle.

``uniform`` (the default, Chatbot Arena's own when no weights are set): every unordered
pair {i, j} of drawable systems is drawn with probability proportional to ``w_i * w_j``,
so with equal weights every pair is equally likely, and a system of weight 0 is never
drawn; the two are then put on sides A and B at random. What the rule knew when it drew
(the rule, every weight, the pair's probability) is returned for the battle to keep: the
adaptive rules are judged by it.

``adaptive`` (issue 27, evalstats/pairing.py): mostly the pair whose next vote most narrows
the uncertainty of the ranking, from the arena's Bradley-Terry state (arenas/
pairing_state.py), mixed with a floor of the uniform rule; the owner's weights multiply
both. The battle keeps the rule's state when it drew: the probability and score of the
pair, the votes the state had seen and every system's strength.

Pure (no Django): the caller passes the systems' keys and weights and a random generator.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

UNIFORM = "uniform"


class NoPair(Exception):
    """Fewer than two systems may be drawn."""


@dataclass(frozen=True)
class Draw:
    a: str
    b: str
    state: dict


def pair_weights(weights: Sequence[float]) -> list[tuple[int, int, float]]:
    """(i, j, w_i * w_j) for every unordered pair i < j of positive weight."""
    return [
        (i, j, weights[i] * weights[j])
        for i in range(len(weights))
        for j in range(i + 1, len(weights))
        if weights[i] > 0 and weights[j] > 0
    ]


def draw_pair(keys: Sequence[str], weights: Sequence[float], rng: random.Random) -> Draw:
    """Draw two of `keys` by the uniform rule; NoPair when fewer than two have weight."""
    if len(keys) != len(weights):
        raise ValueError("one weight per key")
    if any(w < 0 for w in weights):
        raise ValueError("weights cannot be negative")
    pairs = pair_weights(weights)
    if not pairs:
        raise NoPair("an arena needs two systems of positive weight to hold a battle")
    total = sum(w for _, _, w in pairs)
    i, j, w = rng.choices(pairs, weights=[w for _, _, w in pairs])[0]
    a, b = (i, j) if rng.random() < 0.5 else (j, i)
    state = {
        "rule": UNIFORM,
        "weights": {key: float(weight) for key, weight in zip(keys, weights, strict=True)},
        "pairs": len(pairs),
        "probability": w / total,
    }
    return Draw(keys[a], keys[b], state)


# Adaptive (issue 27) --------------------------------------------------------------------------

ADAPTIVE = "adaptive"


def draw_adaptive(
    keys: Sequence[str],
    weights: Sequence[float],
    state,
    rng: random.Random,
    *,
    level: float,
) -> Draw:
    """Draw two of `keys` by the adaptive rule of evalstats.pairing: `state` is the
    arena's `evalstats.pairing.PairingState` over `keys` (in that order), a weight of 0
    keeps a system out (it still counts in the ranking). NoPair when fewer than two have
    weight."""
    # Loaded when an adaptive arena draws, not when the site starts.
    import numpy as np

    from evalstats import pairing

    if len(keys) != len(weights) or len(keys) != state.n:
        raise ValueError("one weight per key, and the state over the same keys")
    if any(w < 0 for w in weights):
        raise ValueError("weights cannot be negative")
    if len(pair_weights(weights)) == 0:
        raise NoPair("an arena needs two systems of positive weight to hold a battle")
    generator = np.random.default_rng(rng.getrandbits(64))
    choice = pairing.choose_pair(state, generator, weights, level=level)
    a, b = (choice.i, choice.j) if rng.random() < 0.5 else (choice.j, choice.i)
    record = {
        "rule": ADAPTIVE,
        "weights": {key: float(w) for key, w in zip(keys, weights, strict=True) if w > 0},
        "pairs": len(pair_weights(weights)),
        "probability": choice.probability,
        "score": choice.score,
        "votes": state.votes,
        "level": level,
        "exploration": pairing.DEFAULT_EXPLORATION,
        "sharpness": pairing.DEFAULT_SHARPNESS,
        "strengths": {
            key: round(float(theta), 4) for key, theta in zip(keys, state.strengths, strict=True)
        },
    }
    return Draw(keys[a], keys[b], record)
