"""Live collection of one planned dialogue between two bots over the endpoint protocol.

Shape of a collected conversation (as in Spot The Bot and bipartite-play):
- the seed exchange, the first two turns of a human-human conversation of the tournament's
  domain (picked with random.Random(planned.seed) among that domain's conversations with
  at least two turns, ordered by external id, so the pick is reproducible), is given to
  both bots as the conversation so far and stored as `Conversation.seed_turns`: it is no
  bot's turn, credited to no system and not one of the conversation's exchanges;
- then `tournament.exchanges` exchanges, each speaker 0 then speaker 1: the Turn rows,
  turn p spoken by speaker p % 2, 2 × exchanges of them ("each dialog system produced k
  outputs" in a segment of k exchanges);
- speaker i is the system planned.speakers[i]; the first speaker (the evaluation target
  in bipartite-play) replies to the seed first.

The Conversation is written in one transaction only when every turn is in hand; nothing
partial is ever stored. External id: "<tournament slug>/<planned key>"; source: the
schedule; metadata: tournament, planned key, seed conversation, plan seed, attempt.

States of a PlannedDialogue: pending → running → complete, or running → failed (with the
error and the attempt count), and failed → running again on a retry, which starts the
conversation from scratch. A worker collects a row while it holds the row's lease
("collection:<pk>", evalhub/leases.py), so two workers never run the same dialogue; it then
sets the row running with a compare-and-set UPDATE on (status, attempts), and `attempts`
works as a fencing token: heartbeats and the final write only apply while the row still
carries this worker's attempt. A running row whose worker died (its lease lapsed, within a
minute) is taken over by the next worker that asks (the lease sweep, a Retry).
"""

import logging
import random

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from endpoints.client import BotClient, BotError, Endpoint
from endpoints.models import BotEndpoint
from evalhub import leases
from evalhub.errors import UserInputError
from evalhub.models import Conversation, Speaker, System, Turn

from .models import PlannedDialogue, Tournament

logger = logging.getLogger(__name__)

SEED_TURNS = 2
Status = PlannedDialogue.Status
# The lease a worker collecting a planned dialogue holds: "collection:<planned pk>".
LEASE_PREFIX = "collection"


class CollectionError(UserInputError):
    """A dialogue cannot be collected; the message says why."""


class NoSeedConversations(CollectionError):
    pass


class DialogueFailed(CollectionError):
    """Collecting a dialogue failed and the failure is recorded on its PlannedDialogue."""

    def __init__(self, planned: PlannedDialogue, attempt: int, message: str, transient: bool):
        super().__init__(f"{planned.tournament.slug}/{planned.key} (attempt {attempt}): {message}")
        self.planned_id = planned.pk
        self.attempt = attempt
        self.transient = transient


class _TurnFailed(CollectionError):
    def __init__(self, message: str, cause: BotError):
        super().__init__(message)
        self.transient = cause.transient


class _LostClaim(Exception):
    """Another worker took the row over (this one was thought dead); stop quietly."""


# Seeds ----------------------------------------------------------------------------------


def seed_pool(domain: str, owner) -> list[int]:
    """Ids of the human-human conversations of `domain` that have a first exchange, among
    those `owner`'s tournaments may draw on (staff-curated and `owner`'s own uploads)."""
    return list(
        Conversation.objects.usable_by(owner)
        .filter(source=Conversation.Source.HUMAN_HUMAN, domain=domain)
        .annotate(n_turns=Count("turns"))
        .filter(n_turns__gte=SEED_TURNS)
        .order_by("external_id")
        .values_list("pk", flat=True)
    )


def check_seed_pool(domain: str, owner) -> list[int]:
    pool = seed_pool(domain, owner)
    if not pool:
        raise NoSeedConversations(
            f"No human-human conversation with at least {SEED_TURNS} turns in the domain "
            f'"{domain}" to take seed exchanges from; import some for this domain first.'
        )
    return pool


def pick_seed(domain: str, seed: int, owner) -> tuple[str, list[str]]:
    """The seed conversation's external id and its first exchange (two texts)."""
    pool = check_seed_pool(domain, owner)
    chosen = Conversation.objects.get(pk=random.Random(seed).choice(pool))
    texts = list(chosen.turns.order_by("position").values_list("text", flat=True)[:SEED_TURNS])
    return chosen.external_id, texts


# Claiming and fencing -------------------------------------------------------------------


def _claim_dialogue(pk: int) -> int | None:
    """Set the row running for this worker, which holds its lease: the new attempt
    number, or None if it is complete (or gone). A running row is one whose previous
    worker died: holding the lease proves that nobody else is collecting it."""
    row = PlannedDialogue.objects.filter(pk=pk).values("status", "attempts").first()
    if row is None or row["status"] not in (Status.PENDING, Status.FAILED, Status.RUNNING):
        return None
    match = {"pk": pk, "status": row["status"], "attempts": row["attempts"]}
    attempt = row["attempts"] + 1
    won = PlannedDialogue.objects.filter(**match).update(
        status=Status.RUNNING, attempts=attempt, last_error="", updated=timezone.now()
    )
    return attempt if won else None


def _mine(pk: int, attempt: int):
    return PlannedDialogue.objects.filter(pk=pk, status=Status.RUNNING, attempts=attempt)


def _load(pk: int) -> PlannedDialogue:
    return PlannedDialogue.objects.select_related("tournament").get(pk=pk)


def _heartbeat(pk: int, attempt: int, held: leases.Held) -> None:
    try:
        held.beat()
    except leases.LeaseLost as lost:
        raise _LostClaim from lost
    # QuerySet.update() skips auto_now, so `updated` is set by hand.
    if not _mine(pk, attempt).update(updated=timezone.now()):
        raise _LostClaim


# Collection -----------------------------------------------------------------------------


def clients_for(tournament: Tournament, speakers: list[str]) -> list[BotClient]:
    """A client per speaker; refused when a speaker has no endpoint or its owner does not
    let this tournament call it (checked at every dialogue: the owner may change it)."""
    endpoints = {
        e.system.slug: e
        for e in BotEndpoint.objects.filter(system__slug__in=speakers).select_related("system")
    }
    missing = sorted(set(speakers) - set(endpoints))
    if missing:
        raise CollectionError(f"no bot endpoint for {', '.join(missing)}")
    refused = sorted(slug for slug, e in endpoints.items() if not e.may_serve(tournament))
    if refused:
        raise CollectionError(
            f"the owners of {', '.join(refused)} do not let other owners' tournaments call "
            "their bot endpoints"
        )
    return [
        BotClient(Endpoint.from_model(endpoints[slug]), purpose="collection") for slug in speakers
    ]


def collect_dialogue(planned: PlannedDialogue) -> Conversation | None:
    """Collect and store `planned`; the new Conversation, or None if this call did not
    collect it (complete already, or running in another worker).

    Raises DialogueFailed, after recording the failure on the row, when a bot fails for
    good or the dialogue cannot be seeded; other errors (database) are recorded when
    possible and propagate unchanged."""
    with leases.holding(leases.key_for(LEASE_PREFIX, planned.pk)) as held:
        if held is None:
            return None
        return _collect_held(planned.pk, held)


def _collect_held(pk: int, held: leases.Held) -> Conversation | None:
    attempt = _claim_dialogue(pk)
    if attempt is None:
        return None
    planned = _load(pk)
    try:
        return _collect(planned, attempt, held)
    except _LostClaim:
        logger.warning("Lost the claim on %s (attempt %s) to another worker", planned, attempt)
        return None
    except (BotError, CollectionError) as error:
        message = (
            str(error) if isinstance(error, _TurnFailed) else f"{type(error).__name__}: {error}"
        )
        _record_failure(planned, attempt, message)
        transient = getattr(error, "transient", False)
        raise DialogueFailed(planned, attempt, message, transient) from error
    except Exception as error:
        _record_failure(planned, attempt, f"{type(error).__name__}: {error}")
        raise


def _record_failure(planned: PlannedDialogue, attempt: int, message: str) -> None:
    try:
        _mine(planned.pk, attempt).update(
            status=Status.FAILED, last_error=message[:4000], updated=timezone.now()
        )
    except Exception:
        # The database itself may be what failed; the row stays running, and its lease,
        # released, lets the next worker take it.
        logger.exception("Could not record the failure of %s", planned)


def _collect(planned: PlannedDialogue, attempt: int, held: leases.Held) -> Conversation:
    tournament = planned.tournament
    seed_id, seed_texts = pick_seed(tournament.domain, planned.seed, tournament.owner)
    clients = clients_for(tournament, planned.speakers)
    seed = [{"speaker": i, "text": text} for i, text in enumerate(seed_texts)]
    turns = list(seed)  # what the bots are sent: the seed, then what they said
    for _ in range(tournament.exchanges):
        for speaker in (0, 1):
            try:
                text = clients[speaker].reply(planned.key, turns, speaker)
            except BotError as error:
                who = f"turn {len(turns)} by {planned.speakers[speaker]}"
                raise _TurnFailed(f"{who}: {type(error).__name__}: {error}", error) from error
            turns.append({"speaker": speaker, "text": text})
            _heartbeat(planned.pk, attempt, held)
    return _store(planned, attempt, seed_id, seed, turns[len(seed) :])


def external_id(tournament: Tournament, planned: PlannedDialogue) -> str:
    return f"{tournament.slug}/{planned.key}"


def _store(planned: PlannedDialogue, attempt: int, seed_id: str, seed: list[dict], turns):
    tournament = planned.tournament
    systems = {s.slug: s for s in System.objects.filter(slug__in=planned.speakers)}
    missing = sorted(set(planned.speakers) - set(systems))
    if missing:
        raise CollectionError(f"the systems {', '.join(missing)} no longer exist")
    ext_id = external_id(tournament, planned)
    if Conversation.objects.filter(external_id=ext_id).exists():
        raise CollectionError(f"a conversation with the external id {ext_id} already exists")
    with transaction.atomic():
        conversation = Conversation.objects.create(
            external_id=ext_id,
            domain=tournament.domain,
            source=tournament.schedule,
            seed_turns=seed,
            metadata={
                "tournament": tournament.slug,
                "planned_key": planned.key,
                "seed_conversation": seed_id,
                "plan_seed": planned.seed,
                "attempt": attempt,
            },
        )
        Speaker.objects.bulk_create(
            Speaker(conversation=conversation, index=i, system=systems[slug])
            for i, slug in enumerate(planned.speakers)
        )
        Turn.objects.bulk_create(
            Turn(conversation=conversation, position=p, speaker=t["speaker"], text=t["text"])
            for p, t in enumerate(turns)
        )
        done = _mine(planned.pk, attempt).update(
            status=Status.COMPLETE,
            conversation=conversation,
            last_error="",
            updated=timezone.now(),
        )
        if not done:
            raise _LostClaim  # rolls the conversation back: the row is someone else's now
    return conversation


# The tournament -------------------------------------------------------------------------


def dialogues_to_collect(tournament: Tournament, *, retry_failed: bool = False) -> list[int]:
    """Ids of the pending rows; with retry_failed, also the failed ones and the running
    ones whose worker died (their lease lapsed), which a Retry thus takes over at once."""
    plan = tournament.plan
    ids = list(plan.filter(status=Status.PENDING).values_list("pk", flat=True))
    if retry_failed:
        ids += plan.filter(status=Status.FAILED).values_list("pk", flat=True)
        ids += plan.filter(leases.lapsed(LEASE_PREFIX), status=Status.RUNNING).values_list(
            "pk", flat=True
        )
    return sorted(ids)


def check_collectable(tournament: Tournament) -> None:
    if tournament.status in (Tournament.Status.ANNOTATING, Tournament.Status.FINISHED):
        raise CollectionError(
            f"Tournament {tournament.slug} is {tournament.get_status_display().lower()}; "
            "its conversations cannot change any more."
        )


def mark_collecting(tournament: Tournament) -> None:
    """Collecting, unless everything is collected already."""
    if tournament.plan.exclude(status=Status.COMPLETE).exists():
        Tournament.objects.filter(
            pk=tournament.pk,
            status__in=[Tournament.Status.PLANNING, Tournament.Status.READY],
        ).update(status=Tournament.Status.COLLECTING)


def mark_ready_if_complete(tournament_id: int) -> bool:
    """Move a collecting tournament to ready once every planned dialogue is complete.

    Each dialogue task calls this after its own commit, so the last one to finish sees
    every other completion and makes the move."""
    plan = PlannedDialogue.objects.filter(tournament_id=tournament_id)
    if not plan.exists() or plan.exclude(status=Status.COMPLETE).exists():
        return False
    Tournament.objects.filter(
        pk=tournament_id,
        status__in=[Tournament.Status.PLANNING, Tournament.Status.COLLECTING],
    ).update(status=Tournament.Status.READY)
    return True
