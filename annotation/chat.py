"""The live conversation of a chat campaign's item: one per (assignment, item), stored in the
catalog turn by turn (source "chat"; the worker is speaker 0, the system speaker 1).

Every action of the page (send, retry, end, flag) is one function here; the form pages
and the JSON endpoint both call them (annotation/views/chat.py). None of them asks the
bot: sending (or retrying) stores the worker's turn and makes the bot's reply *due*; a
stream (annotation/chat_replies.py, an async view served over ASGI) then claims the due
reply, asks the bot and stores what it answered. The rules:

- a message carries the position it will take; a replayed or double-clicked message
  finds its turn stored and stores nothing more;
- a due reply is claimed once (`claim_reply`: `streaming_until`, a lease, under the
  conversation's row lock), so a second stream of the same reply (two tabs, a reload)
  asks nothing and waits for the first one's outcome, and the bot is asked once per
  message or retry; the bot is asked with no database transaction open;
- the reply is stored once, when the stream ends (`settle_reply`): the whole text, or,
  when the bot failed (or the worker left mid-stream), nothing but a message saying why,
  so that nothing half-written is kept; the worker may retry that turn or end the
  conversation, which then ends *incomplete*; a chatbot whose chat share of its
  endpoint's budget is spent for the day says so (the campaign page tells the owner,
  `chatbot_health`);
- the conversation ends complete after `max_turns` of the worker's messages answered, or
  when the worker ends it after at least `min_turns`;
- `metadata["incomplete"]` is true until the conversation ended complete, so campaign
  builders leave open and incomplete chats out by default (`usable_chats`).
"""

import logging
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop, ngettext

from endpoints import chat as endpoint_chat
from endpoints.calls import failure_summary
from endpoints.client import Endpoint
from endpoints.models import BotEndpoint
from evalhub.errors import UserInputError
from evalhub.models import MAX_LATENCY_MS, Conversation, Speaker, System, Turn

from .models import Assignment, Item

logger = logging.getLogger(__name__)

HUMAN, BOT = 0, 1
OPEN, COMPLETE, INCOMPLETE = "open", "complete", "incomplete"


# Stored in the conversation in English and translated when shown (`ChatState.shown_error`).
STALE_MESSAGE = gettext_noop("The chatbot's reply never arrived.")
DUE_MESSAGE = gettext_noop(
    "Your message is kept; the chatbot has not been asked for its reply yet."
)
INTERRUPTED_MESSAGE = gettext_noop("The reply was interrupted before it was complete.")


class ChatRefused(UserInputError):
    """An action the conversation's state does not allow, with what to do instead."""


@dataclass
class ChatState:
    """A conversation as the page shows it; `conversation` is None before the first message."""

    conversation: Conversation | None
    turns: list[Turn]
    config: dict
    chat: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        return self.chat.get("status", OPEN)

    @property
    def complete(self) -> bool:
        return self.status == COMPLETE

    @property
    def claimed(self) -> bool:
        """A stream took the due reply (it may have died since: see `error`)."""
        return bool(self.chat.get("streaming_until"))

    @property
    def streaming(self) -> bool:
        """A stream is asking the bot for the reply now."""
        return self.status == OPEN and self.unanswered and not self.error and self.claimed

    @property
    def due(self) -> bool:
        """The worker's message waits for a stream to ask the bot."""
        return self.status == OPEN and self.unanswered and not self.error and not self.claimed

    @property
    def error(self) -> str:
        if self.chat.get("error"):
            return self.chat["error"]
        if self.status == OPEN and self.unanswered and _lease_over(self.chat):
            return STALE_MESSAGE
        return ""

    @property
    def worker_turns(self) -> int:
        return sum(t.speaker == HUMAN for t in self.turns)

    @property
    def unanswered(self) -> bool:
        return bool(self.turns) and self.turns[-1].speaker == HUMAN

    @property
    def waiting(self) -> bool:
        """A reply is coming: due (the page's script opens its stream) or streaming."""
        return self.status == OPEN and self.unanswered and not self.error

    @property
    def can_send(self) -> bool:
        return (
            self.status == OPEN
            and not self.unanswered
            and self.worker_turns < self.config["max_turns"]
        )

    @property
    def can_retry(self) -> bool:
        """A failed reply, or one due that nobody asked for (a page without JavaScript
        whose post was cut short): the worker may ask (again)."""
        return self.status == OPEN and self.unanswered and not self.streaming

    @property
    def can_end(self) -> bool:
        if self.status != OPEN:
            return False
        if self.unanswered:
            return self.can_retry
        return self.worker_turns >= self.config["min_turns"]

    @property
    def notice(self) -> str:
        """What the page without JavaScript says about the last turn."""
        return self.shown_error or (gettext(DUE_MESSAGE) if self.due else "")

    @property
    def shown_error(self) -> str:
        """The stored error in the page's language where it is one of ours (an endpoint's
        own failure text is shown as it came)."""
        return gettext(self.error) if self.error else ""

    def shown_turns(self) -> list[dict]:
        return [
            {
                "position": t.position,
                "bot": t.speaker == BOT,
                "who": gettext("Chatbot") if t.speaker == BOT else gettext("You"),
                "text": t.text,
                "offensive": t.flagged_offensive,
            }
            for t in self.turns
        ]

    def as_json(self) -> dict:
        """What the page's script needs to redraw the conversation."""
        return {
            "status": self.status,
            "turns": self.shown_turns(),
            "next_position": len(self.turns),
            "worker_turns": self.worker_turns,
            "min_turns": self.config["min_turns"],
            "max_turns": self.config["max_turns"],
            "error": self.shown_error,
            "waiting": self.waiting,
            "streaming": self.streaming,
            "can_send": self.can_send,
            "can_retry": self.can_retry,
            "can_end": self.can_end,
        }


def external_id(assignment: Assignment, item: Item) -> str:
    return f"chat-{assignment.campaign.slug}-{assignment.public_id.hex}-{item.position}"


def _config(assignment: Assignment) -> dict:
    campaign = assignment.campaign
    return campaign.kind.clean_config(campaign.task_config)


def reply_lease_seconds() -> float:
    """How long a claimed reply may take before it counts as lost: the longest stream
    (the chat cap, a slot wait) and the lease margin of every bot call."""
    cap = settings.EVALHUB_CHAT_REPLY_TIMEOUT_SECONDS
    return 1.1 * cap + settings.EVALHUB_BOT_LEASE_MARGIN_SECONDS


def _lease_over(chat: dict) -> bool:
    """A reply claimed so long ago that its stream has surely died (a killed process)."""
    until = chat.get("streaming_until")
    return bool(until) and timezone.now() > datetime.fromisoformat(until)


def chat_state(assignment: Assignment, item: Item) -> ChatState:
    conversation = (
        Conversation.objects.filter(external_id=external_id(assignment, item))
        .prefetch_related("turns")
        .first()
    )
    config = _config(assignment)
    if conversation is None:
        return ChatState(None, [], config)
    turns = sorted(conversation.turns.all(), key=lambda t: t.position)
    return ChatState(conversation, turns, config, conversation.metadata.get("chat", {}))


def chat_ended(assignment: Assignment, item: Item) -> bool:
    """Whether the item's conversation is over, so its rating form may be shown."""
    chat = (
        Conversation.objects.filter(external_id=external_id(assignment, item))
        .values_list("metadata__chat__status", flat=True)
        .first()
    )
    return chat in (COMPLETE, INCOMPLETE)


def open_conversation(assignment: Assignment, item: Item) -> Conversation:
    """The item's conversation for this assignment, created (with its two speakers) once."""
    key = external_id(assignment, item)
    found = Conversation.objects.filter(external_id=key).first()
    if found:
        return found
    system = System.objects.filter(slug=item.content["meta"]["system"]).first()
    if system is None:
        raise ChatRefused(
            gettext("This chatbot is no longer available; skip to the next conversation.")
        )
    try:
        with transaction.atomic():
            conversation = Conversation.objects.create(
                external_id=key,
                # One domain per chat campaign: the Alexa metrics' "domain" scope and the
                # comparative kind's pairing (within a domain) then stay inside it.
                domain=f"chat-{assignment.campaign.slug}",
                source=Conversation.Source.CHAT,
                metadata={
                    "incomplete": True,
                    "chat": {
                        "campaign": assignment.campaign.slug,
                        "assignment": str(assignment.public_id),
                        "item": item.position,
                        "worker": str(assignment.worker.public_id),
                        "system": system.slug,
                        "status": OPEN,
                        "error": "",
                        "asking_since": None,
                        "streaming_until": None,
                        "ended_at": None,
                    },
                },
            )
            Speaker.objects.bulk_create(
                [
                    Speaker(conversation=conversation, index=HUMAN, system=None),
                    Speaker(conversation=conversation, index=BOT, system=system),
                ]
            )
    except IntegrityError:  # a concurrent first message created it
        return Conversation.objects.get(external_id=key)
    return conversation


def _locked(pk: int) -> tuple[Conversation, list[Turn]]:
    conversation = Conversation.objects.select_for_update().get(pk=pk)
    return conversation, list(Turn.objects.filter(conversation=conversation).order_by("position"))


def _save_chat(conversation: Conversation, **changes) -> None:
    chat = {**conversation.metadata["chat"], **changes}
    conversation.metadata = {
        **conversation.metadata,
        "chat": chat,
        "incomplete": chat["status"] != COMPLETE,
    }
    conversation.save(update_fields=["metadata"])


def send(assignment: Assignment, item: Item, text: str, position) -> ChatState:
    """Store the worker's message at `position` and ask the bot for its reply."""
    config = _config(assignment)
    text = (text or "").strip()
    if not text:
        raise ChatRefused(gettext("Write a message before sending it."), field="text")
    if len(text) > config["max_message_chars"]:
        raise ChatRefused(
            gettext("Your message has %(length)s characters; at most %(most)s are allowed.")
            % {"length": len(text), "most": config["max_message_chars"]},
            field="text",
        )
    try:
        position = int(position)
    except (TypeError, ValueError):
        raise ChatRefused(gettext("The message has no position; reload the page.")) from None
    conversation = open_conversation(assignment, item)
    try:
        with transaction.atomic():
            conversation, turns = _locked(conversation.pk)
            stored = turns[position] if 0 <= position < len(turns) else None
            if stored is not None and stored.speaker == HUMAN and stored.text == text:
                return chat_state(assignment, item)  # sent twice: the first one counts
            chat = conversation.metadata["chat"]
            if chat["status"] != OPEN:
                raise ChatRefused(gettext("This conversation has ended."))
            if position != len(turns):
                raise ChatRefused(
                    gettext("The page was out of date: the conversation is shown as it is now.")
                )
            if turns and turns[-1].speaker == HUMAN:
                raise ChatRefused(
                    gettext("Wait for the reply, or try it again, before writing more.")
                )
            if sum(t.speaker == HUMAN for t in turns) >= config["max_turns"]:
                raise ChatRefused(gettext("The conversation has reached its last turn."))
            Turn.objects.create(
                conversation=conversation,
                position=position,
                speaker=HUMAN,
                text=text,
                timestamp=timezone.now(),
            )
            _due(conversation)
    except IntegrityError:  # the same message raced in twice: the other one is stored
        pass
    return chat_state(assignment, item)


def _due(conversation: Conversation) -> None:
    """The bot's reply to the last turn is due: the next stream asks for it."""
    _save_chat(
        conversation, error="", asking_since=timezone.now().isoformat(), streaming_until=None
    )


def retry(assignment: Assignment, item: Item) -> ChatState:
    """Make the reply that failed (or was never asked for) due again."""
    state = chat_state(assignment, item)
    if not state.can_retry:
        raise ChatRefused(
            gettext("The reply is still coming.")
            if state.waiting
            else gettext("There is no reply to try again.")
        )
    with transaction.atomic():
        conversation, turns = _locked(state.conversation.pk)
        current = ChatState(conversation, turns, state.config, conversation.metadata["chat"])
        if not current.can_retry:
            raise ChatRefused(
                gettext("The reply is still coming.")
                if current.waiting
                else gettext("There is no reply to try again.")
            )
        _due(conversation)
    return chat_state(assignment, item)


@dataclass(frozen=True)
class ReplyJob:
    """A due reply claimed by one stream: what asking the bot needs, read beforehand."""

    conversation_id: int
    position: int  # where the reply goes
    key: str  # the conversation's id for the bot
    turns: tuple[dict, ...]  # {"speaker": 0 | 1, "text"}: the worker is 0, the bot 1
    endpoint: Endpoint | None
    refusal: str = ""  # why the bot cannot be asked (its endpoint is gone or closed)


def claim_reply(assignment: Assignment, item: Item) -> ReplyJob | None:
    """Claim the conversation's due reply for the calling stream; None when no reply is due
    (answered, failed, ended) or another stream holds it."""
    conversation = Conversation.objects.filter(external_id=external_id(assignment, item)).first()
    if conversation is None:
        return None
    lease = timedelta(seconds=reply_lease_seconds())
    with transaction.atomic():
        conversation, turns = _locked(conversation.pk)
        state = ChatState(conversation, turns, _config(assignment), conversation.metadata["chat"])
        if not state.due:
            return None
        _save_chat(conversation, streaming_until=(timezone.now() + lease).isoformat())
    history = tuple({"speaker": t.speaker, "text": t.text} for t in turns)
    job = ReplyJob(conversation.pk, len(turns), conversation.external_id, history, None)
    bot = Speaker.objects.select_related("system").get(conversation=conversation, index=BOT)
    try:
        endpoint = endpoint_chat.chat_endpoint(assignment.campaign.owner_id, bot.system)
    except endpoint_chat.ReplyFailed as failed:
        logger.warning("Chat %s: not asked: %s", conversation.external_id, failed.detail)
        return replace(job, refusal=failed.message)
    return replace(job, endpoint=endpoint)


def settle_reply(
    assignment: Assignment, item: Item, job: ReplyJob, text: str, latency_ms: int, error: str
) -> ChatState:
    """Store how the claimed reply ended: the bot's whole turn (`text`), or `error` for the
    worker and no turn. Only the reply to the turn still unanswered is kept."""
    config = _config(assignment)
    with transaction.atomic():
        conversation, turns = _locked(job.conversation_id)
        chat = conversation.metadata["chat"]
        if len(turns) == job.position and chat["status"] == OPEN:
            if error:
                _save_chat(conversation, error=error, asking_since=None, streaming_until=None)
            else:
                Turn.objects.create(
                    conversation=conversation,
                    position=job.position,
                    speaker=BOT,
                    text=text,
                    timestamp=timezone.now(),
                    latency_ms=min(MAX_LATENCY_MS, latency_ms),
                )
                worker_turns = sum(t.speaker == HUMAN for t in turns)
                done = {"status": COMPLETE, "ended_at": timezone.now().isoformat()}
                _save_chat(
                    conversation,
                    error="",
                    asking_since=None,
                    streaming_until=None,
                    **(done if worker_turns >= config["max_turns"] else {}),
                )
    return chat_state(assignment, item)


def end(assignment: Assignment, item: Item) -> ChatState:
    """End the conversation: complete after `min_turns` answered messages, incomplete when
    the worker gives up on a failed reply. Ending twice changes nothing."""
    state = chat_state(assignment, item)
    if state.status != OPEN:
        return state
    if not state.can_end:
        if state.waiting:
            raise ChatRefused(gettext("Wait for the reply before ending the conversation."))
        needed = state.config["min_turns"]
        raise ChatRefused(
            ngettext(
                "Send at least %(needed)s message before ending (you sent %(sent)s).",
                "Send at least %(needed)s messages before ending (you sent %(sent)s).",
                needed,
            )
            % {"needed": needed, "sent": state.worker_turns}
        )
    with transaction.atomic():
        conversation, turns = _locked(state.conversation.pk)
        if conversation.metadata["chat"]["status"] == OPEN:
            answered = bool(turns) and turns[-1].speaker == BOT
            enough = sum(t.speaker == HUMAN for t in turns) >= state.config["min_turns"]
            _save_chat(
                conversation,
                status=COMPLETE if answered and enough else INCOMPLETE,
                asking_since=None,
                ended_at=timezone.now().isoformat(),
            )
    return chat_state(assignment, item)


def flag(assignment: Assignment, item: Item, position, offensive: bool) -> ChatState:
    """Mark (or unmark) one of the bot's turns as offensive."""
    state = chat_state(assignment, item)
    try:
        position = int(position)
    except (TypeError, ValueError):
        position = -1
    turn = next((t for t in state.turns if t.position == position), None)
    if turn is None or turn.speaker != BOT:
        raise ChatRefused(gettext("Only the chatbot's turns can be flagged."))
    Turn.objects.filter(pk=turn.pk).update(flagged_offensive=offensive)
    return chat_state(assignment, item)


def comparison_partner(assignment, item, config, state: ChatState) -> ChatState | None:
    """The batch's other conversation this one is compared with: on the last item of a
    batch, the one before it, when both ended complete and the campaign compares."""
    if not config["compare"] or not state.complete:
        return None
    siblings = list(item.batch.items.order_by("order_in_batch")) if item.batch_id else []
    if len(siblings) < 2 or siblings[-1].pk != item.pk:
        return None
    partner = chat_state(assignment, siblings[-2])
    return partner if partner.complete else None


def chatbot_health(campaign) -> tuple[list[endpoint_chat.ChatBudget], list[dict]]:
    """Today's chat share of each chatbot a chat campaign talks with, so that its page can
    say when one is spent (its chats then tell the worker so, and end incomplete), and the
    recent failures of the endpoints they answer through; the chatbots are found once."""
    chatbots = _chatbots(campaign)
    endpoints = BotEndpoint.objects.filter(system__slug__in=chatbots)
    failures = failure_summary(endpoints.values_list("pk", flat=True)) if chatbots else []
    return endpoint_chat.chat_budgets(chatbots), failures


def _chatbots(campaign) -> list[str]:
    """The slugs of the chatbots a chat campaign talks with (none for other kinds)."""
    if not campaign.kind.live:
        return []
    systems = (
        Item.objects.filter(campaign=campaign)
        .values_list("content__meta__system", flat=True)
        .distinct()
    )
    return [slug for slug in systems if slug]


def usable_chats(queryset=None, *, include_incomplete: bool = False):
    """Catalog conversations from chat campaigns; incomplete ones left out by default."""
    queryset = Conversation.objects.all() if queryset is None else queryset
    queryset = queryset.filter(source=Conversation.Source.CHAT)
    if include_incomplete:
        return queryset
    return queryset.filter(metadata__incomplete=False)
