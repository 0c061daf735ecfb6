"""From catalog conversations to the plain conversations the Alexa Prize metrics analyse.

A set of conversations is named by a scope: a ``domain`` (its name), a ``tournament`` (the
bot-bot conversations of its pool in its domain), a ``study`` or a ``campaign`` (the
conversations its items show). Every bot speaker of a conversation makes one analysed
conversation of its system: its own turns are the responses ("bot"), everybody else's the
user's. So a human-bot conversation counts once, a bot-bot one once for each bot, and a
human-human one is skipped. The user rating is kept only where one bot talked to people.
A chat campaign's conversations are those its workers held (its items name a system, not a
conversation); chats that ended incomplete are left out of every scope, as everywhere else.

Response errors come from ABC-Eval judgments of the conversation (task items of
``abc_eval`` campaigns), one flag per annotation of a bot turn: the k-th annotation of a
turn is the k-th judgment (in submission order) of each of ``ERROR_LABELS`` judged on it,
erroneous when one of them flagged the turn (ABC-Eval splits its labels over tasks, so one
annotation may be several judgments); a turn has as many annotations as its least judged
label, and a turn no judgment labelled is unjudged (left out of the RER).

Queries: one for the conversations (with speakers and turns prefetched: two more), one for
the behaviour judgments, whatever the number of conversations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import Q, QuerySet

from analysis.reports.data import UNDESIRABLE_LABELS
from annotation.models import Campaign, Item, Judgment, Study
from evalhub.errors import UserInputError
from evalhub.models import Conversation
from tournaments.models import Tournament
from tournaments.spot_the_bot_campaign import bot_conversations

# evalstats.dialogue_metrics imports scipy.stats: imported where dialogues are built, not
# when the dialogue metrics page's module is loaded at app start-up.
if TYPE_CHECKING:
    from evalstats.dialogue_metrics import Conversation as Dialogue

__all__ = ["ERROR_LABELS", "SCOPES", "DialogueInputs", "UnknownScope", "load_dialogues"]

# ABC-Eval's undesirable behaviours (its Figure 4): a bot turn showing one is an erroneous
# response in the sense of the Alexa Prize's response error rate.
# Behaviour labels that mark a bot response as erroneous: the undesirable ABC-Eval ones.
ERROR_LABELS = tuple(sorted(UNDESIRABLE_LABELS))
SCOPES = ("domain", "tournament", "study", "campaign")


class UnknownScope(UserInputError, LookupError):
    """The scope names nothing that has conversations."""


@dataclass(frozen=True)
class DialogueInputs:
    scope: dict
    dialogues: list[Dialogue]
    skipped: int
    error_labels: tuple[str, ...]
    systems: tuple[str, ...]


def _campaign_conversations(campaigns: QuerySet) -> QuerySet:
    items = Item.objects.filter(campaign__in=campaigns, role=Item.Role.TASK)
    ids = items.values("conversation_id")
    ids_b = items.values("conversation_b_id")
    chats = Q(
        source=Conversation.Source.CHAT,
        metadata__chat__campaign__in=list(campaigns.values_list("slug", flat=True)),
    )
    return Conversation.objects.filter(Q(pk__in=ids) | Q(pk__in=ids_b) | chats)


def conversations_in(scope: str, name: str) -> QuerySet:
    """The catalog conversations a scope names; UnknownScope when it names nothing."""
    if scope == "domain":
        queryset = Conversation.objects.filter(domain=name)
        if not queryset.exists():
            raise UnknownScope(f"No conversation has the domain {name!r}.", field="name")
        return queryset
    if scope == "tournament":
        tournament = Tournament.objects.filter(slug=name).first()
        if tournament is None:
            raise UnknownScope(f"No tournament with the slug {name!r}.", field="name")
        return bot_conversations(tournament)
    if scope == "study":
        study = Study.objects.filter(slug=name).first()
        if study is None:
            raise UnknownScope(f"No study with the slug {name!r}.", field="name")
        return _campaign_conversations(study.campaigns.all())
    if scope == "campaign":
        campaign = Campaign.objects.filter(slug=name).first()
        if campaign is None:
            raise UnknownScope(f"No campaign with the slug {name!r}.", field="name")
        return _campaign_conversations(Campaign.objects.filter(pk=campaign.pk))
    raise UnknownScope(
        f"The scope must be one of {', '.join(SCOPES)}, not {scope!r}.", field="scope"
    )


def error_flags(
    conversation_ids: list[int], labels: tuple[str, ...]
) -> dict[tuple[int, int], tuple[bool, ...]]:
    """{(conversation pk, bot turn position): one erroneous flag per annotation} from ABC-Eval
    judgments (see the module's docstring)."""
    by_turn: dict[tuple[int, int], dict[str, list[bool]]] = {}
    rows = (
        Judgment.objects.filter(
            campaign__task_kind="abc_eval",
            item__role=Item.Role.TASK,
            item__conversation_id__in=conversation_ids,
        )
        .order_by("pk")
        .values_list("item__conversation_id", "item__content__bot_turns", "payload")
    )
    for conversation, bot_turns, payload in rows.iterator():
        judged = {k: v for k, v in (payload or {}).get("labels", {}).items() if k in labels}
        for label, values in judged.items():
            for position, flag in zip(bot_turns or [], values, strict=False):
                turn = by_turn.setdefault((conversation, position), {})
                turn.setdefault(label, []).append(bool(flag))
    flags = {}
    for key, by_label in by_turn.items():
        annotations = min(map(len, by_label.values()))
        flags[key] = tuple(
            any(values[k] for values in by_label.values()) for k in range(annotations)
        )
    return flags


def _dialogues(conversation, flags) -> list[Dialogue]:
    from evalstats.dialogue_metrics import Conversation as Dialogue
    from evalstats.dialogue_metrics import Turn

    speakers = list(conversation.speakers.all())
    bots = [s for s in speakers if s.system_id]
    humans = [s for s in speakers if not s.system_id]
    turns = sorted(conversation.turns.all(), key=lambda t: t.position)
    dialogues = []
    for bot in bots:
        dialogues.append(
            Dialogue(
                id=conversation.external_id
                if len(bots) == 1
                else f"{conversation.external_id}#{bot.system.slug}",
                system=bot.system.slug,
                turns=tuple(
                    Turn(
                        speaker="bot" if t.speaker == bot.index else "user",
                        text=t.text,
                        timestamp=t.timestamp.timestamp() if t.timestamp else None,
                        topic=t.topic or None,
                        error=flags.get((conversation.pk, t.position))
                        if t.speaker == bot.index
                        else None,
                    )
                    for t in turns
                ),
                rating=conversation.user_rating if len(bots) == 1 and humans else None,
            )
        )
    return dialogues


def load_dialogues(
    scope: str, name: str, *, error_labels: tuple[str, ...] = ERROR_LABELS
) -> DialogueInputs:
    """The conversations of a scope as the Alexa metrics' plain conversations."""
    queryset = (
        conversations_in(scope, name)
        .filter(text_available=True)
        .exclude(source=Conversation.Source.CHAT, metadata__incomplete=True)
        .prefetch_related("speakers__system", "turns")
        .order_by("external_id")
    )
    conversations = list(queryset)
    flags = error_flags([c.pk for c in conversations], tuple(error_labels))
    dialogues, skipped = [], 0
    for conversation in conversations:
        made = _dialogues(conversation, flags)
        skipped += not made
        dialogues += made
    return DialogueInputs(
        scope={"kind": scope, "name": name},
        dialogues=dialogues,
        skipped=skipped,
        error_labels=tuple(error_labels),
        systems=tuple(sorted({d.system for d in dialogues})),
    )
