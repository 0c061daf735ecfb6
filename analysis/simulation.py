"""Studies simulated from a known model, and the analysis demo built from them.

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

``simulate_spot_the_bot`` and ``simulate_ab`` return ``analysis.report`` inputs directly
(pure, fast: for tests of the statistics). ``load_analysis_demo`` writes the same kind of
study through the models (catalog conversations, a campaign with its items packed by
``annotation.services.add_items``, workers, submitted assignments and judgments), finishes
and publishes the tournaments and analyses them synchronously; it is idempotent.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from annotation.models import Assignment, Campaign, Item, Judgment, Worker, completion_code
from annotation.services import add_items
from annotation.tasks import get_kind
from annotation.tasks.base import ItemSpec
from evalhub.models import Conversation, System
from evalhub.services import import_conversations
from tournaments.models import Tournament
from tournaments.packing import Segment, pack_segments

from .report import HUMAN, ABData, SpotTheBotData

__all__ = [
    "AB_DEMO_SLUG",
    "SPOT_THE_BOT_DEMO_SLUG",
    "ABModel",
    "SpotTheBotModel",
    "build_ab_tournament",
    "build_spot_the_bot_tournament",
    "load_analysis_demo",
    "simulate_ab",
    "simulate_spot_the_bot",
    "spot_the_bot_payload",
]

SPOT_THE_BOT_DEMO_SLUG = "demo-simulated-spot-the-bot"
AB_DEMO_SLUG = "demo-simulated-ab"
FEATURES = ("sensibleness", "specificity", "fluency")

# Strongest first: the order the analysis must recover.
DEMO_HAZARDS = {
    "sim-aurora": 0.06,
    "sim-breeze": 0.15,
    "sim-cobalt": 0.19,
    "sim-drift": 0.45,
    "sim-ember": 0.8,
}
DEMO_STRENGTHS = {"sim-aurora": 1.0, "sim-breeze": 0.45, "sim-cobalt": -0.1, "sim-drift": -1.35}

# Neutral lines for the simulated conversations: the text must not give the speaker away.
_LINES = [
    "Hi! How has your week been so far?",
    "Busy, but good. I started a pottery class.",
    "That sounds relaxing. What did you make first?",
    "A lopsided bowl. My cat sleeps in it now.",
    "Ha, so it found a purpose after all.",
    "Exactly. Do you have any hobbies like that?",
    "I bake bread on Sundays, when I remember.",
    "Sourdough? Everyone seems to do that now.",
    "Yes, the starter is older than my car.",
    "Then it deserves a name, surely.",
    "It has one: Doughbert.",
    "Perfect. Say hello to Doughbert from me.",
]


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


# --- pure simulations (report inputs) ---------------------------------------------------------


def _pairs(systems) -> list[tuple[str, str]]:
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


def _conversations(model: SpotTheBotModel, rng: random.Random) -> list[tuple[str, list[str]]]:
    conversations = []
    for a, b in _pairs(model.hazards):
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
    for conversation, speakers in _conversations(model, rng):
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
    for a, b in _pairs(model.strengths):
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


# --- the demo, written through the models -----------------------------------------------------


def _workers(prefix: str, n: int, careless: int) -> tuple[list[Worker], set[int]]:
    """The simulated judges and the indices of the careless ones (their external ids say
    so, which lets a demo admin find and block them)."""
    names = [f"{prefix}-careless-{i}" if i < careless else f"{prefix}-{i:03d}" for i in range(n)]
    workers = [
        Worker.objects.get_or_create(provider=Campaign.Provider.LOCAL, external_id=name)[0]
        for name in names
    ]
    return workers, set(range(careless))


def _judge_batches(campaign: Campaign, workers_and_careless, answer, rng):
    """Give every open slot a distinct worker, submit it, and store its judgments.

    ``answer(item, careless, rng)`` is the payload of one judgment.
    """
    workers, careless = workers_and_careless
    now = timezone.now()
    items_of: dict[int, list[Item]] = {}
    for item in campaign.items.filter(batch__isnull=False).order_by("batch_id", "order_in_batch"):
        items_of.setdefault(item.batch_id, []).append(item)
    slots: dict[int, list[Assignment]] = {}
    for assignment in campaign.assignments.order_by("batch_id", "pk"):
        slots.setdefault(assignment.batch_id, []).append(assignment)
    judgments = []
    for batch_id, assignments in slots.items():
        chosen = rng.sample(range(len(workers)), len(assignments))
        for assignment, w in zip(assignments, chosen, strict=True):
            started = now - timedelta(minutes=rng.randint(30, 600))
            assignment.worker = workers[w]
            assignment.status = Assignment.Status.SUBMITTED
            assignment.started_at = started
            assignment.submitted_at = started + timedelta(minutes=8)
            assignment.completion_code = completion_code()
            for item in items_of.get(batch_id, []):
                judgments.append(
                    Judgment(
                        assignment=assignment,
                        item=item,
                        worker=workers[w],
                        campaign=campaign,
                        payload=answer(item, w in careless, rng),
                        started_at=started,
                        client_duration_ms=rng.randint(8_000, 45_000),
                    )
                )
    Assignment.objects.bulk_update(
        [a for assignments in slots.values() for a in assignments],
        ["worker", "status", "started_at", "submitted_at", "completion_code"],
        batch_size=500,
    )
    Judgment.objects.bulk_create(judgments, batch_size=1000)


def _finish(campaign: Campaign, tournament: Tournament, published: bool) -> None:
    tournament.status = Tournament.Status.FINISHED
    tournament.published = published
    tournament.save(update_fields=["status", "published"])
    # Saving the campaign as finished is what queues its analysis (analysis.signals).
    campaign.status = Campaign.Status.FINISHED
    campaign.finished_at = timezone.now()
    campaign.save(update_fields=["status", "finished_at"])


@transaction.atomic
def build_spot_the_bot_tournament(
    model: SpotTheBotModel,
    slug: str,
    *,
    name: str = "Simulated Spot The Bot tournament",
    owner=None,
    seed: int = 0,
    published: bool = True,
    finish: bool = True,
) -> Tournament:
    """A Spot The Bot tournament whose campaign was judged by simulated workers.

    Conversations (domain = ``slug``), systems, campaign and tournament (both ``slug``),
    items packed like a live tournament's, workers ``<slug>-...``, one submitted assignment
    per batch slot and the judgments. With ``finish`` the campaign is then finished (which
    queues its analysis) and the tournament published if ``published``.
    """
    rng = random.Random(seed)
    lines = []
    for external_id, speakers in _conversations(model, rng):
        lines.append(
            json.dumps(
                {
                    "id": f"{slug}-{external_id}",
                    "domain": slug,
                    "speakers": speakers,
                    "turns": [
                        {"speaker": i % 2, "text": _LINES[i % len(_LINES)]}
                        for i in range(2 * max(model.segment_lengths))
                    ],
                }
            )
        )
    import_conversations(data="\n".join(lines).encode(), filename="simulated.jsonl", user=owner)
    System.objects.filter(slug__in=list(model.hazards)).update(
        description="Simulated for the analysis demo: its judgments come from a known model."
    )
    kind = get_kind("spot_the_bot")
    config = kind.clean_config(
        {"segment_lengths": list(model.segment_lengths), "features": list(FEATURES)}
    )
    campaign = Campaign.objects.create(
        slug=slug,
        title=f"{name}: who is a bot?",
        task_kind="spot_the_bot",
        task_config=config,
        redundancy=model.judgments_per_segment,
        batch_size=10,
        status=Campaign.Status.LIVE,
        owner=owner,
    )
    tournament = Tournament.objects.create(
        slug=slug,
        name=name,
        kind=Tournament.Kind.SPOT_THE_BOT,
        description=(
            "Judgments simulated from known survival hazards (P(spotted by k exchanges) = "
            "1 - exp(-h k)), with human-human controls and a few careless judges: the "
            "leaderboard should recover the order " + " > ".join(model.order()) + "."
        ),
        domain=slug,
        owner=owner,
        campaign=campaign,
        segment_lengths=list(model.segment_lengths),
        conversations_per_pair=model.conversations_per_pair,
        judgments_per_segment=model.judgments_per_segment,
    )
    tournament.systems.set(System.objects.filter(slug__in=list(model.hazards)))
    conversations = Conversation.objects.filter(domain=slug)
    conversations = conversations.prefetch_related("speakers__system", "turns")
    specs = kind.build_from_conversations(list(conversations.order_by("external_id")), config, rng)

    def pack(task_specs: list[ItemSpec], batch_size: int) -> list[list[int]]:
        segments = [
            Segment(s.group_key, "|".join(sorted(s.content["meta"]["speakers"])), s.segment_length)
            for s in task_specs
        ]
        return pack_segments(segments, batch_size)

    add_items(campaign, specs, pack=pack)

    def answer(item, is_careless, rng):
        meta = item.content["meta"]
        return spot_the_bot_payload(model, meta["speakers"], meta["exchanges"], is_careless, rng)

    workers = _workers(slug, model.workers, model.careless_workers)
    _judge_batches(campaign, workers, answer, rng)
    if finish:
        _finish(campaign, tournament, published)
    return tournament


@transaction.atomic
def build_ab_tournament(
    model: ABModel,
    slug: str,
    *,
    name: str = "Simulated A/B experiment",
    owner=None,
    seed: int = 0,
    published: bool = True,
    finish: bool = True,
) -> Tournament:
    """An A/B tournament of every pair of ``model``'s systems judged by simulated workers
    (as ``build_spot_the_bot_tournament``; items are built straight from specs)."""
    rng = random.Random(seed)
    for system in model.strengths:
        System.objects.get_or_create(
            slug=system, defaults={"name": system.replace("-", " ").title(), "owner": owner}
        )
    specs = []
    for a, b in _pairs(model.strengths):
        for p in range(model.prompts):
            meta = {"prompt": f"sim-{p}", "system_a": a, "system_b": b}
            context = [_LINES[p % len(_LINES)]]
            if rng.random() < model.identical_share:
                specs.append(
                    ItemSpec(
                        content={"context": context, "meta": meta},
                        auto_payload={"choice": "tie", "automatic": "identical responses"},
                    )
                )
                continue
            left = rng.choice(["a", "b"])
            specs.append(
                ItemSpec(
                    content={
                        "context": context,
                        "left": _LINES[(p + 1) % len(_LINES)],
                        "right": _LINES[(p + 5) % len(_LINES)],
                        "left_is": left,
                        "meta": meta,
                    },
                    group_key=f"prompt-{p}",
                )
            )
    campaign = Campaign.objects.create(
        slug=slug,
        title=f"{name}: which response is better?",
        task_kind="ab",
        redundancy=model.judgments_per_item,
        batch_size=12,
        status=Campaign.Status.LIVE,
        owner=owner,
    )
    tournament = Tournament.objects.create(
        slug=slug,
        name=name,
        kind=Tournament.Kind.AB,
        description=(
            "A/B judgments simulated from known Bradley-Terry strengths, with automatic ties "
            "for identical responses and a few careless judges: the leaderboard should "
            "recover the order " + " > ".join(model.order()) + "."
        ),
        owner=owner,
        campaign=campaign,
        judgments_per_prompt=model.judgments_per_item,
    )
    tournament.systems.set(System.objects.filter(slug__in=list(model.strengths)))
    add_items(campaign, specs)

    def answer(item, is_careless, rng):
        meta = item.content["meta"]
        choice = ab_choice(model, meta["system_a"], meta["system_b"], is_careless, rng)
        return {"choice": choice, "left": item.content["left_is"]}

    workers = _workers(slug, model.workers, model.careless_workers)
    _judge_batches(campaign, workers, answer, rng)
    if finish:
        _finish(campaign, tournament, published)
    return tournament


def load_analysis_demo(
    owner=None,
    *,
    spot_the_bot: SpotTheBotModel | None = None,
    ab: ABModel | None = None,
    parameters: dict | None = None,
    seed: int = 2020,
) -> dict:
    """Create (once) the simulated Spot The Bot and A/B tournaments, published and finished,
    and analyse them now. Returns {tournament slug: its AnalysisRun}.

    Idempotent: an existing tournament is kept as it is and only analysed (which reuses its
    run). ``parameters`` go to the analysis (e.g. fewer replicates in tests).
    """
    from .tasks import analyze_tournament

    studies = {
        SPOT_THE_BOT_DEMO_SLUG: (
            build_spot_the_bot_tournament,
            spot_the_bot or SpotTheBotModel(DEMO_HAZARDS),
            "Simulated Spot The Bot tournament",
        ),
        AB_DEMO_SLUG: (
            build_ab_tournament,
            ab or ABModel(DEMO_STRENGTHS),
            "Simulated A/B experiment",
        ),
    }
    runs = {}
    for slug, (build, model, name) in studies.items():
        tournament = Tournament.objects.filter(slug=slug).first()
        if tournament is None:
            tournament = build(model, slug, name=name, owner=owner, seed=seed)
        runs[slug] = analyze_tournament(tournament, parameters, synchronous=True)
    return runs
