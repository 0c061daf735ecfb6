"""Studies simulated from a known model, as report inputs (pure, fast: for tests of the
statistics); ``demo.leaderboards`` writes the same kind of study through the models.

Spot The Bot (``SpotTheBotModel``). Each system has a hazard ``h``: a careful judge who
reads the first ``k`` exchanges spots it with probability ``1 - exp(-h k)`` (so its true
survival function is ``exp(-h k)``); human speakers of the human-human controls have their
own small hazard. A speaker not spotted is called "human", or "unsure" with probability
``unsure``. The feature preferences follow a latent quality ``-log h`` plus a bonus for the
speaker the judge did not spot, so they correlate with the hazards (Table 2's win rates)
and with survival (negative Cox coefficients), and "no difference" comes with probability
``no_difference``. Careless judges answer every question uniformly at random.

A/B (``ABModel``). Systems have Bradley-Terry strengths ``theta``; a careful judge calls a
tie with probability ``tie`` and otherwise prefers a with probability
``sigmoid(theta_a - theta_b)``; a few items have identical responses (automatic ties).

``simulate_spot_the_bot`` and ``simulate_ab`` return ``analysis.reports`` inputs directly.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from analysis.reports import HUMAN, ABData, SpotTheBotData

__all__ = [
    "FEATURES",
    "ABModel",
    "SpotTheBotModel",
    "ab_choice",
    "simulate_ab",
    "simulate_spot_the_bot",
    "simulated_conversations",
    "spot_the_bot_payload",
    "system_pairs",
]

FEATURES = ("sensibleness", "specificity", "fluency")


@dataclass(frozen=True)
class SpotTheBotModel:
    """The known truth a Spot The Bot study is simulated from (module docstring)."""

    hazards: dict[str, float]
    human_hazard: float = 0.03
    segment_lengths: tuple[int, ...] = (2, 3, 5)
    conversations_per_pair: int = 20
    human_conversations: int = 24
    judgments_per_segment: int = 2
    unsure: float = 0.15
    no_difference: float = 0.25
    survival_bonus: float = 1.2
    workers: int = 40
    careless_workers: int = 4

    def survival(self, system: str, k: float) -> float:
        """True probability that a careful judge has not spotted ``system`` by ``k``."""
        hazard = self.human_hazard if system == HUMAN else self.hazards[system]
        return math.exp(-hazard * k)

    def order(self) -> list[str]:
        """Systems best first (lowest hazard)."""
        return sorted(self.hazards, key=self.hazards.get)


@dataclass(frozen=True)
class ABModel:
    """Known Bradley-Terry strengths of an A/B study (module docstring)."""

    strengths: dict[str, float]
    prompts: int = 60
    judgments_per_item: int = 3
    tie: float = 0.12
    identical_share: float = 0.04
    workers: int = 30
    careless_workers: int = 3

    def order(self) -> list[str]:
        return sorted(self.strengths, key=self.strengths.get, reverse=True)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def spot_the_bot_payload(
    model: SpotTheBotModel,
    speakers: list[str],
    k: int,
    careless: bool,
    rng: random.Random,
    features=FEATURES,
) -> dict:
    """One judge's answer on a k-exchange segment: the task kind's payload."""
    if careless:
        return {
            "labels": [rng.choice(("human", "bot", "unsure")) for _ in speakers],
            "better": {f: rng.choice((0, 1, None)) for f in features},
        }
    survived = [rng.random() < model.survival(s, k) for s in speakers]
    labels = [
        ("unsure" if rng.random() < model.unsure else "human") if alive else "bot"
        for alive in survived
    ]

    def quality(index: int) -> float:
        system = speakers[index]
        hazard = model.human_hazard if system == HUMAN else model.hazards[system]
        return -math.log(hazard) + model.survival_bonus * survived[index]

    better = {}
    for feature in features:
        if rng.random() < model.no_difference:
            better[feature] = None
        else:
            better[feature] = 0 if rng.random() < _sigmoid(quality(0) - quality(1)) else 1
    return {"labels": labels, "better": better}


def ab_choice(model: ABModel, system_a: str, system_b: str, careless: bool, rng) -> str:
    if careless:
        return rng.choice(("a", "b", "tie"))
    if rng.random() < model.tie:
        return "tie"
    edge = model.strengths[system_a] - model.strengths[system_b]
    return "a" if rng.random() < _sigmoid(edge) else "b"


def system_pairs(systems) -> list[tuple[str, str]]:
    ordered = sorted(systems)
    return [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :]]


@dataclass
class _Columns:
    names: tuple[str, ...] = (
        "judgment",
        "worker",
        "conversation",
        "speaker",
        "system",
        "opponent",
        "exchanges",
        "label",
        "opponent_label",
        "preferences",
    )
    values: dict = field(default_factory=dict)

    def add(self, **row):
        for name in self.names:
            self.values.setdefault(name, []).append(row[name])


def simulated_conversations(
    model: SpotTheBotModel, rng: random.Random
) -> list[tuple[str, list[str]]]:
    conversations = []
    for a, b in system_pairs(model.hazards):
        for n in range(model.conversations_per_pair):
            speakers = [a, b] if rng.random() < 0.5 else [b, a]
            conversations.append((f"{a}-vs-{b}-{n}", speakers))
    for n in range(model.human_conversations):
        conversations.append((f"human-{n}", [HUMAN, HUMAN]))
    return conversations


def simulate_spot_the_bot(model: SpotTheBotModel, seed: int = 0) -> SpotTheBotData:
    """A whole study as report inputs: every segment judged ``judgments_per_segment``
    times by distinct judges drawn from the pool (careless ones included)."""
    rng = random.Random(seed)
    careless = set(range(model.careless_workers))
    columns = _Columns()
    judgment = 0
    for conversation, speakers in simulated_conversations(model, rng):
        for k in model.segment_lengths:
            for worker in rng.sample(range(model.workers), model.judgments_per_segment):
                payload = spot_the_bot_payload(model, speakers, k, worker in careless, rng)
                for s in (0, 1):
                    preferences = tuple(
                        0 if v is None else (1 if v == s else -1)
                        for v in (payload["better"][f] for f in FEATURES)
                    )
                    columns.add(
                        judgment=judgment,
                        worker=worker,
                        conversation=conversation,
                        speaker=s,
                        system=speakers[s],
                        opponent=speakers[1 - s],
                        exchanges=k,
                        label=payload["labels"][s],
                        opponent_label=payload["labels"][1 - s],
                        preferences=preferences,
                    )
                judgment += 1
    return SpotTheBotData(
        subject="simulated",
        features=FEATURES,
        **{name: tuple(values) for name, values in columns.values.items()},
    )


def simulate_ab(model: ABModel, seed: int = 0) -> ABData:
    """An A/B study of every pair of systems on ``prompts`` prompts, as report inputs."""
    rng = random.Random(seed)
    careless = set(range(model.careless_workers))
    rows = []
    item = 0
    for a, b in system_pairs(model.strengths):
        for _ in range(model.prompts):
            if rng.random() < model.identical_share:
                rows.append((item, -1, a, b, "tie", True))
            else:
                for worker in rng.sample(range(model.workers), model.judgments_per_item):
                    choice = ab_choice(model, a, b, worker in careless, rng)
                    rows.append((item, worker, a, b, choice, False))
            item += 1
    return ABData(
        subject="simulated",
        item=tuple(r[0] for r in rows),
        worker=tuple(r[1] for r in rows),
        system_a=tuple(r[2] for r in rows),
        system_b=tuple(r[3] for r in rows),
        choice=tuple(r[4] for r in rows),
        automatic=tuple(r[5] for r in rows),
        automatic_weight=model.judgments_per_item,
    )
