"""The arena's pairing rule: which two systems answer a new battle.

``uniform`` (the default, Chatbot Arena's own when no weights are set): every unordered
pair {i, j} of drawable systems is drawn with probability proportional to ``w_i * w_j``,
so with equal weights every pair is equally likely, and a system of weight 0 is never
drawn; the two are then put on sides A and B at random. What the rule knew when it drew
(the rule, every weight, the pair's probability) is returned for the battle to keep: the
adaptive rules of the next issue are judged by it.

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
