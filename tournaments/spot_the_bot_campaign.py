"""Spot The Bot tournaments: from conversations in the catalog to a ready campaign.

Which conversations. The bot-bot conversations of the tournament's domain whose two
speakers are both in its pool: its systems, plus the partner set's systems under
bipartite-play (the partners speak in those conversations too). Self-play conversations
(a system talking to itself) qualify. Every conversation found is used; the collection plan
(`conversations_per_pair`) decides how many there are, not this module.

Items. The `spot_the_bot` kind's builder makes one item per conversation and segment
length (the first k exchanges); a conversation shorter than k exchanges is skipped for
that length and counted.

Human-human controls. Segments of the domain's human-human conversations are mixed in so
that they make up `human_share` of all items: n_controls = round(share × n_bot / (1 −
share)), drawn at random. They are ordinary task items (shown like any other, packed with
the others, analysed as the "human" system, as in the Spot The Bot study) that also carry
the known answer in `Item.gold`: `{"labels": ["human", "human"], "explanation": ...}`.
Judgments of task items are not scored when submitted (only items with the gold role are),
so quality control reads these labels afterwards: a worker who calls both people bots is
visible without a check item having told them so. When the domain has fewer human segments
than wanted, all of them are used and the shortfall is reported.

Packing. `tournaments.packing.pack_segments` puts the items in batches of `batch_size`
(pair = the sorted system slugs, "human|human" for controls): no batch holds two segments
of one conversation, and batches mix pairs and lengths. The campaign wants
`judgments_per_segment` judgments per item and lets a worker do at most
`max_batches_per_worker` batches.
"""

import random
from collections import Counter
from dataclasses import dataclass, replace

from django.db import transaction
from django.db.models import Count, Q

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.kinds.base import ConfigInvalid, ItemSpec
from annotation.kinds.spot_the_bot import HUMAN, build_items, gold_explanation
from annotation.models import Campaign
from evalhub.errors import UserInputError
from evalhub.models import Conversation
from evalhub.queueing import enqueue

from .collection import (
    CollectionError,
    check_collectable,
    check_seed_pool,
    dialogues_to_collect,
)
from .models import PlannedDialogue, Tournament
from .packing import Segment, pack_segments
from .plan import check_endpoints, planned_conversations

KIND = get_kind("spot_the_bot")
CONTROL_PAIR = f"{HUMAN}|{HUMAN}"
INSTRUCTIONS = (
    "Read the start of a conversation between two speakers. Each speaker is either a person "
    "or a chatbot. For each speaker, say whether you think a human or a bot wrote their "
    'turns; choose "unsure" only when you really cannot tell. Then, for each quality, say '
    "which speaker did better, or that there was no difference."
)


class GenerationInvalid(UserInputError, ValueError):
    """The campaign cannot be generated as things are; the message says what to do."""


@dataclass(frozen=True)
class Generation:
    campaign: Campaign
    conversations: int  # bot-bot conversations used
    segments: dict[int, int]  # bot-bot segments per length, in exchanges
    skipped: int  # (conversation, length) pairs left out: the conversation was too short
    controls: int  # human-human control segments mixed in
    controls_wanted: int
    batches: int


def _two_speakers(queryset):
    return queryset.annotate(n_speakers=Count("speakers", distinct=True)).filter(n_speakers=2)


def bot_conversations(tournament: Tournament):
    """The bot-bot conversations the tournament judges: collected by its plan or
    explicitly included (a queryset)."""
    chosen = Conversation.objects.filter(
        Q(planned__tournament=tournament) | Q(included_in=tournament)
    ).values("pk")
    bots = Count("speakers", filter=Q(speakers__system__isnull=False), distinct=True)
    return (
        _two_speakers(Conversation.objects.filter(pk__in=chosen))
        .annotate(n_bots=bots)
        .filter(n_bots=2)
    )


def include_conversations(tournament: Tournament, external_ids: list[str]) -> int:
    """Add imported bot-bot conversations to what the tournament judges; how many were new.

    Raises UserInputError naming the unknown ids and those that are not between two
    systems, with nothing added."""
    ids = list(dict.fromkeys(external_ids))
    # Only what the tournament's owner may see (an ownerless tournament is staff's): another
    # owner's private conversations are "no conversation", like absent ones.
    candidates = Conversation.objects.all()
    if tournament.owner is not None:
        candidates = Conversation.objects.visible_to(tournament.owner)
    found = dict(candidates.filter(external_id__in=ids).values_list("external_id", "pk"))
    unknown = [i for i in ids if i not in found]
    if unknown:
        raise UserInputError(
            f"No conversation with the id {', '.join(unknown[:10])}"
            f"{' and others' if len(unknown) > 10 else ''}.",
            field="included_conversations",
        )
    two_bots = set(
        _two_speakers(Conversation.objects.filter(pk__in=found.values()))
        .annotate(n_bots=Count("speakers", filter=Q(speakers__system__isnull=False), distinct=True))
        .filter(n_bots=2)
        .values_list("external_id", flat=True)
    )
    other = [i for i in ids if i not in two_bots]
    if other:
        raise UserInputError(
            f"Not a conversation between two systems: {', '.join(other[:10])}.",
            field="included_conversations",
        )
    before = tournament.included_conversations.count()
    tournament.included_conversations.add(*found.values())
    return tournament.included_conversations.count() - before


def human_conversations(domain: str, owner):
    """Human-human conversations of the domain that `owner`'s tournaments may draw on as
    controls: staff-curated ones and `owner`'s own uploads (a queryset)."""
    humans = Count("speakers", filter=Q(speakers__system__isnull=True), distinct=True)
    return (
        _two_speakers(Conversation.objects.usable_by(owner).filter(domain=domain))
        .annotate(n_humans=humans)
        .filter(n_humans=2)
    )


def available(tournament: Tournament) -> dict[str, int]:
    """How many conversations a campaign would be built from now (two queries)."""
    return {
        "bot": bot_conversations(tournament).count(),
        "human": human_conversations(tournament.domain, tournament.owner).count(),
    }


def _load(queryset, chunk: int = 500) -> list[Conversation]:
    """The conversations with what the builder reads, in external id order, a chunk at a
    time (an IN list of every id would exceed SQLite's limit on big tournaments)."""
    ids = list(queryset.order_by("external_id").values_list("pk", flat=True))
    loaded = []
    for start in range(0, len(ids), chunk):
        rows = Conversation.objects.filter(pk__in=ids[start : start + chunk])
        loaded += rows.prefetch_related("speakers__system", "turns").order_by("external_id")
    return loaded


def pair_of(spec) -> str:
    """The packing stratum of an item spec or a stored item: sorted slugs, or human|human."""
    return "|".join(sorted(spec.content["meta"]["speakers"]))


def pack(specs: list[ItemSpec], batch_size: int) -> list[list[int]]:
    """`add_items`' packer: the Spot The Bot invariants of tournaments.packing."""
    segments = [Segment(s.group_key, pair_of(s), s.segment_length) for s in specs]
    return pack_segments(segments, batch_size)


def controls_wanted(n_bot: int, share: float) -> int:
    if share <= 0:
        return 0
    return round(share * n_bot / (1 - share))


def task_config(tournament: Tournament) -> dict:
    try:
        return KIND.clean_config(
            {
                "segment_lengths": list(tournament.segment_lengths),
                "features": list(tournament.features),
                "show_seed": tournament.show_seed,
            }
        )
    except ConfigInvalid as invalid:
        raise GenerationInvalid(str(invalid)) from None


def free_campaign_slug(base: str) -> str:
    base = base[:80]
    taken = set(Campaign.objects.filter(slug__startswith=base[:70]).values_list("slug", flat=True))
    slug, n = base, 2
    while slug in taken:
        suffix = f"-{n}"
        slug, n = base[: 80 - len(suffix)] + suffix, n + 1
    return slug


def _check_generatable(tournament: Tournament) -> None:
    if tournament.kind != Tournament.Kind.SPOT_THE_BOT:
        raise GenerationInvalid(f"{tournament.name} is not a Spot The Bot tournament.")
    if tournament.campaign_id is not None:
        raise GenerationInvalid(f"{tournament.name} already has its campaign.")
    if tournament.status in (Tournament.Status.ANNOTATING, Tournament.Status.FINISHED):
        raise GenerationInvalid(
            f"{tournament.name} is {tournament.get_status_display().lower()}; its campaign "
            "cannot be generated again."
        )
    busy = tournament.plan.filter(
        status__in=[PlannedDialogue.Status.PENDING, PlannedDialogue.Status.RUNNING]
    ).count()
    if busy:
        raise GenerationInvalid(
            f"{busy} planned conversation{'s are' if busy != 1 else ' is'} still to be "
            "collected; generate the campaign once collection has finished."
        )


def generate_campaign(tournament: Tournament) -> Generation:
    """Build the tournament's Spot The Bot campaign (a draft) in one transaction.

    Raises GenerationInvalid, with nothing stored, when the tournament cannot have one.
    The items are drawn and ordered with a generator seeded by the tournament's slug and
    seed, so the same catalog gives the same campaign.
    """
    with transaction.atomic():
        # Locked: two clicks on "generate" must not make two campaigns.
        tournament = Tournament.objects.select_for_update().get(pk=tournament.pk)
        _check_generatable(tournament)
        config = task_config(tournament)
        rng = random.Random(f"{tournament.slug}:{tournament.seed}")
        bots = _load(bot_conversations(tournament))
        bot_specs, skipped = build_items(bots, config, rng)
        if not bot_specs:
            shortest = min(config["segment_lengths"])
            raise GenerationInvalid(
                f"No bot-bot conversation collected or included by {tournament.name} has "
                f"{shortest} exchange{'s' if shortest != 1 else ''} or more ({len(bots)} "
                "found). Collect its conversations, or include imported ones, first."
            )
        wanted = controls_wanted(len(bot_specs), tournament.human_share)
        controls = []
        if wanted:
            human_specs, _ = build_items(
                _load(human_conversations(tournament.domain, tournament.owner)), config, rng
            )
            rng.shuffle(human_specs)
            names = config["speaker_names"]
            gold = {
                "labels": [HUMAN, HUMAN],
                "explanation": gold_explanation([HUMAN, HUMAN], names),
            }
            controls = [replace(spec, gold=gold) for spec in human_specs[:wanted]]
        campaign = Campaign.objects.create(
            slug=free_campaign_slug(f"{tournament.slug}-spot-the-bot"),
            title=f"{tournament.name}: human or bot?",
            task_kind=KIND.key,
            task_config=config,
            instructions=INSTRUCTIONS,
            redundancy=tournament.judgments_per_segment,
            batch_size=tournament.batch_size,
            max_batches_per_worker=tournament.max_batches_per_worker,
            reward_per_batch=tournament.reward_per_judgment * tournament.batch_size,
            owner=tournament.owner,
        )
        counts = add_items(campaign, bot_specs + controls, pack=pack)
        tournament.campaign = campaign
        tournament.status = Tournament.Status.READY
        tournament.save(update_fields=["campaign", "status"])
    return Generation(
        campaign=campaign,
        conversations=len({s.group_key for s in bot_specs}),
        segments=dict(sorted(Counter(s.segment_length for s in bot_specs).items())),
        skipped=skipped,
        controls=len(controls),
        controls_wanted=wanted,
        batches=counts["batches"],
    )


def start_collection(tournament: Tournament, *, retry_failed: bool = False) -> None:
    """Queue the live collection of the tournament's planned conversations; with
    `retry_failed`, the failed ones and those whose worker died (stale) are run again.

    The checks `collect_tournament` makes run here first, so that a researcher reads what
    to fix on the page rather than in a worker's log (with a broker the task runs later,
    elsewhere). Raises PlanInvalid or CollectionError with the message to show.
    """
    from .tasks import collect_tournament

    check_collectable(tournament)
    if retry_failed:
        check_retry_allowed(tournament)
    check_endpoints(tournament, planned_conversations(tournament))
    check_seed_pool(tournament.domain, tournament.owner)
    args = (tournament.pk, True) if retry_failed else (tournament.pk,)
    if not enqueue(collect_tournament, *args):
        raise CollectionError(
            "The task queue is unreachable, so the collection was not started; "
            "start it again in a few minutes."
        )


def check_retry_allowed(tournament: Tournament) -> None:
    if tournament.campaign_id is not None:
        # The campaign holds the conversations collected so far; new ones would be left out.
        raise CollectionError(
            f"{tournament.name} already has its campaign, so its failed dialogues cannot be "
            "collected again."
        )


def retryable(tournament: Tournament) -> int:
    """How many planned dialogues a retry would run again: failed, or running with a
    lapsed lease (their worker died; evalhub/leases.py)."""
    return (
        len(dialogues_to_collect(tournament, retry_failed=True))
        - tournament.plan.filter(status=PlannedDialogue.Status.PENDING).count()
    )


def collection_progress(tournament: Tournament) -> dict[str, int]:
    """Planned dialogues per status, and their total (one query)."""
    counts = dict.fromkeys(PlannedDialogue.Status.values, 0)
    for status, n in tournament.plan.order_by().values_list("status").annotate(n=Count("pk")):
        counts[status] = n
    counts["total"] = sum(counts.values())
    return counts
