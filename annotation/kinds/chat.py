"""Live chat: a worker talks with one system through its registered endpoint, then rates the
conversation (ABC-Eval's interactors' dialogue-level Likert) and, on the second
conversation of a batch, compares the two side by side.

Items. One item per conversation slot, one system each (`build_from_systems`): every
system gets `conversations_per_system` slots, in rounds whose order is drawn with the
seeded rng, so systems are balanced. `group_key` is `system:<slug>`: the packer never puts
one system twice in a batch, and allocation never hands a worker a batch with a system
they have already talked with, unless `repeat_systems` is on (no group key then). Which
system speaks sits in `content["meta"]` only; the page never names it.

The chat itself (annotation/chat.py, pages in annotation/views/chat.py) stores the
conversation in the catalog as it goes: source "chat", the worker as speaker 0 (no
system), the system as speaker 1, per-turn timestamps, the bot's latency and the worker's
offensive flags. Only once it has ended does the item page show the rating form.

Config (`ChatConfig`): `min_turns` and `max_turns` (the worker's messages), the longest
message, the rated `dimensions` (Likert's, from dimensions.py), `compare`, `repeat_systems`
and `conversations_per_system`.

Payload: `{"conversation": external id, "complete": true, "ratings": {dimension: 1..5},
"dimension_order": [...], "comparison": {"a": earlier conversation, "b": this one, "left":
"a" | "b", "choices": {dimension: "a" | "b" | "neither"}}}`; "comparison" only on the
last conversation of a batch whose two conversations are complete. An incomplete
conversation (the bot failed and the worker ended it) is not rated:
`{"conversation": ..., "complete": false}`.

Export (`export_row`): `{"campaign", "conversation", "system", "complete", "worker",
"batch", "ratings", "comparison", "dimension_order", "started_at_ms", "duration_ms"}`; CSV
lines (`csv_rows`) have a `rating_<dimension>` and a `choice_<dimension>` column per
dimension, and `compared_with` and `left`, empty where nothing was rated or compared.
"""

import hashlib
import random
from typing import ClassVar

from django.utils.translation import gettext, gettext_noop
from pydantic import Field, field_validator, model_validator

from evalhub.declared import Declared

from .base import (
    AnswerField,
    ItemSpec,
    PayloadInvalid,
    TaskKind,
    choice_field,
    in_sentence,
    parse_answers,
)
from .dimensions import DEFINITIONS, DIMENSIONS, ORDER_KEY, known_once, shown_order
from .likert import ALLOWED, _question, _scale, field_name, invalid_message, missing_message

MAX_TURNS = 50
SIDES = ("a", "b", "neither")
COMPARE_PREFIX = "compare_"


class ChatConfig(Declared):
    """A chat campaign's config."""

    noun: ClassVar[str] = "chat config key"
    messages: ClassVar[dict[str, str]] = {
        "dimensions": f"dimensions must be a non-empty list of: {', '.join(DIMENSIONS)}."
    }

    min_turns: int = Field(
        3,
        ge=1,
        le=MAX_TURNS,
        description="Messages the worker sends before the conversation may end (1 to 50).",
    )
    max_turns: int = Field(
        10,
        ge=1,
        le=MAX_TURNS,
        description="The conversation ends after this many of the worker's messages (1 to 50).",
    )
    max_message_chars: int = Field(
        500, ge=20, le=2000, description="The longest message a worker may send (20 to 2000)."
    )
    dimensions: list[str] = Field(
        default_factory=lambda: list(DIMENSIONS),
        min_length=1,
        max_length=len(DIMENSIONS),
        description=f"Rated 1-5 after the chat, a subset of: {', '.join(DIMENSIONS)}.",
    )
    compare: bool = Field(
        True,
        description="With two conversations in a batch, compare them side by side after "
        "rating the second.",
    )
    repeat_systems: bool = Field(
        False, description="Let a worker talk with the same system in more than one batch."
    )
    conversations_per_system: int = Field(
        10,
        ge=1,
        le=10_000,
        description="Conversation slots per system (each is held redundancy times).",
    )

    _known_once = field_validator("dimensions")(known_once)

    @model_validator(mode="after")
    def _min_below_max(self):
        if self.min_turns > self.max_turns:
            raise ValueError(
                f"min_turns ({self.min_turns}) cannot be more than max_turns ({self.max_turns})."
            )
        return self


def build_items(systems, config: dict, rng) -> list[ItemSpec]:
    """`conversations_per_system` slots per system, in rounds of every system (each round
    in its own random order), so any prefix of the items is balanced across systems."""
    systems = sorted(systems, key=lambda s: s.slug)
    specs = []
    for _ in range(config["conversations_per_system"]):
        round_ = list(systems)
        rng.shuffle(round_)
        for system in round_:
            specs.append(
                ItemSpec(
                    content={"slot": len(specs) + 1, "meta": {"system": system.slug}},
                    group_key="" if config["repeat_systems"] else f"system:{system.slug}",
                )
            )
    return specs


def _rng(assignment, item) -> random.Random:
    seed = hashlib.sha256(f"{assignment.public_id}:{item.pk}".encode()).digest()
    return random.Random(seed)


def _label(name: str) -> str:
    return gettext(DIMENSIONS[name][0])


def _sides() -> list[dict]:
    return [
        {"value": "left", "text": gettext("Conversation 1"), "key": "1"},
        {"value": "right", "text": gettext("Conversation 2"), "key": "2"},
        {"value": "neither", "text": gettext("Neither"), "key": "3"},
    ]


class ChatKind(TaskKind):
    key = "chat"
    label = "Live chat"
    template = "annotation/kinds/chat.html"
    shortcuts = (
        ("1–5", gettext_noop("rate the first scale not yet answered")),
        (
            "1 / 2 / 3",
            gettext_noop("then, in the comparison: conversation 1, conversation 2, neither"),
        ),
    )
    config_schema = ChatConfig
    # The item page starts with a conversation (annotation/views/chat.py) before any form.
    live = True

    def build_from_systems(self, systems, config, rng) -> list[ItemSpec]:
        return build_items(systems, self.clean_config(config), rng)

    def item_context(self, item, config):
        # Without an assignment (staff preview): what will be rated, no conversation yet.
        return {
            "preview": True,
            "dimensions": [_scale(d) for d in shown_order(item, config["dimensions"])],
        }

    def assignment_context(self, assignment, item, config):
        from ..chat import chat_state, comparison_partner

        state = chat_state(assignment, item)
        context = {
            "preview": False,
            "complete": state.complete,
            "turns": state.shown_turns(),
            "dimensions": [_scale(d) for d in shown_order(item, config["dimensions"])],
            "comparison": None,
        }
        partner = comparison_partner(assignment, item, config, state)
        if partner is not None:
            left = _rng(assignment, item).choice(["a", "b"])
            sides = {"a": partner, "b": state}
            right = "b" if left == "a" else "a"
            context["comparison"] = {
                "panels": [
                    {"title": gettext("Conversation 1"), "turns": sides[left].shown_turns()},
                    {"title": gettext("Conversation 2"), "turns": sides[right].shown_turns()},
                ],
                "dimensions": [
                    {
                        "label": _label(name),
                        "definition": gettext(DEFINITIONS[name]),
                        "field": COMPARE_PREFIX + name,
                        "options": _sides(),
                    }
                    for name in shown_order(item, config["dimensions"])
                ],
            }
        return context

    def parse_payload(self, item, config, data):
        raise PayloadInvalid({"": gettext("A chat is rated from the worker's own conversation.")})

    def parse_assignment_payload(self, assignment, item, config, data):
        from ..chat import chat_state, comparison_partner

        state = chat_state(assignment, item)
        if state.status == "open":
            raise PayloadInvalid({"": gettext("End the conversation before rating it.")})
        conversation = state.conversation.external_id
        if not state.complete:
            return {"conversation": conversation, "complete": False}
        dimensions = config["dimensions"]
        fields = {
            field_name(d): AnswerField(
                ALLOWED,
                missing=missing_message(_question(d)),
                invalid=invalid_message(_question(d)),
            )
            for d in dimensions
        }
        partner = comparison_partner(assignment, item, config, state)
        left = _rng(assignment, item).choice(["a", "b"])
        if partner is not None:
            sides = {"left": left, "right": "b" if left == "a" else "a", "neither": "neither"}
            fields |= {
                COMPARE_PREFIX + d: choice_field(
                    sides,
                    gettext("the comparison on %(dimension)s")
                    % {"dimension": in_sentence(_label(d))},
                )
                for d in dimensions
            }
        values = parse_answers(data, fields)
        payload = {
            "conversation": conversation,
            "complete": True,
            "ratings": {d: values[field_name(d)] for d in dimensions},
            ORDER_KEY: shown_order(item, dimensions),
        }
        if partner is not None:
            payload["comparison"] = {
                "a": partner.conversation.external_id,
                "b": conversation,
                "left": left,
                "choices": {d: values[COMPARE_PREFIX + d] for d in dimensions},
            }
        return payload

    def export_row(self, judgment):
        payload = judgment.payload
        return {
            "campaign": judgment.campaign.slug,
            "conversation": payload["conversation"],
            "system": judgment.item.content["meta"]["system"],
            "complete": payload["complete"],
            "worker": str(judgment.worker.public_id),
            "batch": f"{judgment.campaign.slug}:{judgment.assignment.batch.position}",
            "ratings": payload.get("ratings", {}),
            "comparison": payload.get("comparison"),
            ORDER_KEY: payload.get(ORDER_KEY, []),
            "started_at_ms": int(judgment.started_at.timestamp() * 1000),
            "duration_ms": round(judgment.seconds * 1000),
        }

    def csv_rows(self, judgment):
        # Every line has the same columns: a rating_<dimension> and a choice_<dimension> per
        # configured dimension, empty where the conversation was not rated or compared.
        dimensions = self.clean_config(judgment.campaign.task_config)["dimensions"]
        row = self.export_row(judgment)
        ratings, comparison = row.pop("ratings"), row.pop("comparison") or {}
        choices = comparison.get("choices", {})
        return [
            {
                **row,
                "rating": {d: ratings.get(d) for d in dimensions},
                "compared_with": comparison.get("a", ""),
                "left": comparison.get("left", ""),
                "choice": {d: choices.get(d) for d in dimensions},
            }
        ]


KIND = ChatKind()
