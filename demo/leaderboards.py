"""The analysis demo: simulated studies (``demo.simulation``) written through the models.

``load_analysis_demo`` creates catalog conversations, a campaign with its items packed by
``annotation.items.add_items``, workers, submitted assignments and judgments, finishes
and publishes the tournaments and analyses them synchronously; it is idempotent.
``demo.loader`` calls it after the catalog and annotation demos.
"""

from __future__ import annotations

import json
import random
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.kinds.base import ItemSpec
from annotation.models import Assignment, Campaign, Item, Judgment, Worker, completion_code
from demo.simulation import (
    FEATURES,
    ABModel,
    SpotTheBotModel,
    ab_choice,
    simulated_conversations,
    spot_the_bot_payload,
    system_pairs,
)
from evalhub.models import Conversation, System
from evalhub.services import import_conversations
from tournaments.models import Tournament
from tournaments.packing import Segment, pack_segments

__all__ = [
    "AB_DEMO_SLUG",
    "DEMO_HAZARDS",
    "DEMO_STRENGTHS",
    "SPOT_THE_BOT_DEMO_SLUG",
    "build_ab_tournament",
    "build_spot_the_bot_tournament",
    "load_analysis_demo",
]

SPOT_THE_BOT_DEMO_SLUG = "demo-simulated-spot-the-bot"
AB_DEMO_SLUG = "demo-simulated-ab"

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
    # Saving the campaign as finished is what queues its analysis (analysis.runs.signals).
    campaign.status = Campaign.Status.FINISHED
    campaign.finished_at = timezone.now()
    campaign.save(update_fields=["status", "finished_at"])


def _import_simulated_conversations(model: SpotTheBotModel, slug: str, owner, rng) -> None:
    """The study's conversations in the catalog (domain ``slug``), with neutral lines."""
    lines = []
    for external_id, speakers in simulated_conversations(model, rng):
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


def _pack_like_a_tournament(task_specs: list[ItemSpec], batch_size: int) -> list[list[int]]:
    segments = [
        Segment(s.group_key, "|".join(sorted(s.content["meta"]["speakers"])), s.segment_length)
        for s in task_specs
    ]
    return pack_segments(segments, batch_size)


def _ab_specs(model: ABModel, rng: random.Random) -> list[ItemSpec]:
    """Every pair of systems on every prompt; a few items with identical responses."""
    specs = []
    for a, b in system_pairs(model.strengths):
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
    return specs


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
    _import_simulated_conversations(model, slug, owner, rng)
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

    add_items(campaign, specs, pack=_pack_like_a_tournament)

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
    specs = _ab_specs(model, rng)
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
    from analysis.runs.tasks import analyze_tournament

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
