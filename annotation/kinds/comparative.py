"""Comparative evaluation (ABC-Eval's "Comparative"): two dialogues side by side; for each
dimension, in which one do the chatbot's responses fit the definition better, or neither.

Items. One item per pair of catalog conversations: a is `conversation`, b is
`conversation_b`. Which one is shown first ("Conversation 1", on the left on a wide
screen) is random per item, stored in `content["left_is"]` and in every payload, so that
position bias can be analysed. The page names speakers by role only ("Human",
"Chatbot"; numbered when a conversation has several of one kind); which systems speak
lives in `content["meta"]`, which `item_context` never passes on. `group_key` is the pair
of external ids, so a worker never judges the same pair twice.

Pairing rule (`build_items`):
- with config `pairs` (a list of [external id a, external id b]) exactly those pairs, in
  that order;
- otherwise every pair of conversations in the same `domain` whose bot systems are
  disjoint (each conversation has at least one bot speaker, and no system speaks in
  both); a is the one with the smaller external id. When there are more than
  `max_pairs` (default 200, as many pairs as ABC-Eval collected; null for no cap), the
  pairs are drawn with the seeded `rng` in turns from each (domain, systems of a,
  systems of b) cell, so every pairing of systems keeps its share.

Config (`clean_config` fills the defaults): `dimensions` (default the 8 of ABC-Eval's Table
3, after Finch and Choi, 2020, defined in `dimensions.py` as for Likert), `dimension_definitions` (adds or overrides the short
definitions shown on the page; every dimension needs one), `pairs`, `max_pairs`,
`human_name`, `bot_name`, and `gold_pairs`: attention checks, each
`{"a": id, "b": id, "choices": {dimension: "a" | "b" | "neither"}, "explanation": "..."}`
(the choices may cover only the dimensions with an obvious answer); each gives one gold
item whose mistakes are the dimensions answered differently.

Payload: `{"choices": {dimension: "a" | "b" | "neither"}, "left": "a" | "b",
"dimension_order": [dimension, ...]}`; a and b name the conversations, whatever side they
were shown on; `dimension_order` is the random order the page showed the dimensions in
(`dimensions.shown_order`, as ABC-Eval did; absent from imported judgments).

Export (`export_row`), one JSON object per judgment: `{"campaign", "item", "worker",
"batch", "domain", "conversation_a", "conversation_b", "systems_a", "systems_b", "left",
"choices", "dimension_order", "started_at_ms", "duration_ms"}`. `worker` is the worker's opaque public id;
`batch` is "<campaign slug>:<batch position>"; `systems_*` are the slugs of the bot
speakers of each conversation; `duration_ms` is the browser's measure, or the server's
when the browser sent none.
"""

import hashlib
import re
from collections import defaultdict
from itertools import combinations
from typing import ClassVar

from django.utils.translation import gettext, gettext_noop
from pydantic import Field, field_validator, model_validator

from evalhub.declared import Declared

from .base import (
    NOT_SHOWN,
    ConfigInvalid,
    GoldResult,
    ItemSpec,
    PayloadInvalid,
    TaskKind,
    check_config,
    choice_field,
    in_sentence,
    parse_answers,
    shown,
)
from .dimensions import DEFINITIONS, ORDER_KEY, shown_order

DIMENSION_DEFINITIONS = DEFINITIONS
SIDES = ("a", "b", "neither")
DIMENSION_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
GROUP_KEY_MAX = 200


def _is_id_pair(value) -> bool:
    return (
        isinstance(value, list | tuple)
        and len(value) == 2
        and all(isinstance(v, str) and v for v in value)
        and value[0] != value[1]
    )


MAX_PAIRS_LIMIT = 10_000


class ComparativeConfig(Declared):
    """A comparative campaign's config."""

    noun: ClassVar[str] = "comparative config key"
    messages: ClassVar[dict[str, str]] = {
        "dimensions": "dimensions must be a non-empty list of distinct names (at most 20).",
        "pairs": "pairs must be a list of [conversation id, other conversation id].",
        "gold_pairs": "gold_pairs must be a list.",
        "dimension_definitions": "dimension_definitions must map dimension names to sentences.",
    }

    dimensions: list[str] = Field(
        default_factory=lambda: list(DIMENSION_DEFINITIONS),
        min_length=1,
        max_length=20,
        description="Dimensions compared: lowercase names (letters, digits, _); by default "
        "the 8 of ABC-Eval's Table 3.",
    )
    dimension_definitions: dict[str, str] = Field(
        default_factory=dict,
        description="Short definitions shown on the page, adding to or overriding the "
        "built-in ones; every dimension needs one.",
    )
    pairs: list[list[str]] | None = Field(
        None,
        max_length=MAX_PAIRS_LIMIT,
        description="Exactly these [id a, id b] pairs, in order; null: pair by the rule.",
    )
    max_pairs: int | None = Field(
        200,
        ge=1,
        le=MAX_PAIRS_LIMIT,
        description="Cap on the pairs the rule makes, drawn evenly across system pairings; "
        "null for no cap.",
    )
    gold_pairs: list[dict] = Field(
        default_factory=list,
        description='Attention checks: {"a", "b", "choices": {dimension: "a" | "b" | '
        '"neither"}, "explanation"}.',
    )
    human_name: str = Field(gettext_noop("Human"), description="How the page names a person.")
    bot_name: str = Field(gettext_noop("Chatbot"), description="How the page names a chatbot.")

    @field_validator("dimensions")
    @classmethod
    def _names(cls, dimensions: list[str]) -> list[str]:
        if len(set(dimensions)) != len(dimensions):
            raise ValueError("dimensions must be a non-empty list of distinct names.")
        for name in dimensions:
            if not DIMENSION_NAME.match(name):
                raise ValueError(
                    f"Dimension name {name!r}: use lowercase letters, digits and _ (at most 40)."
                )
        return dimensions

    @field_validator("pairs")
    @classmethod
    def _id_pairs(cls, pairs):
        if pairs is not None and not all(map(_is_id_pair, pairs)):
            raise ValueError("pairs must be a list of [conversation id, other conversation id].")
        return pairs

    @field_validator("human_name", "bot_name")
    @classmethod
    def _named(cls, name: str, info) -> str:
        if not name.strip():
            raise ValueError(f"{info.field_name} must be a non-empty name.")
        return name

    @model_validator(mode="after")
    def _definitions_and_gold(self):
        definitions = {**DIMENSION_DEFINITIONS, **self.dimension_definitions}
        missing = [n for n in self.dimensions if not definitions.get(n, "").strip()]
        if missing:
            raise ValueError(f"Give a short definition for: {', '.join(missing)}.")
        self.dimension_definitions = {name: definitions[name] for name in self.dimensions}
        for n, gold in enumerate(self.gold_pairs, 1):
            _check_gold_pair(f"gold_pairs[{n}]", gold, self.dimensions)
        return self


GOLD_PAIR_KEYS = ("a", "b", "choices", "explanation")


def _check_gold_pair(where: str, gold: dict, dimensions: list[str]) -> None:
    unknown = sorted(set(gold) - set(GOLD_PAIR_KEYS))
    if unknown:
        raise ValueError(
            f"{where}: unknown key {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(GOLD_PAIR_KEYS)}."
        )
    if not _is_id_pair([gold.get("a"), gold.get("b")]):
        raise ValueError(f"{where}: give two different conversation ids as a and b.")
    choices = gold.get("choices")
    if not isinstance(choices, dict) or not choices:
        raise ValueError(f"{where}: give the gold choices per dimension.")
    for dimension, choice in choices.items():
        if dimension not in dimensions:
            raise ValueError(f"{where}: {dimension!r} is not one of the dimensions.")
        if choice not in SIDES:
            raise ValueError(f"{where}: {dimension} must be a, b or neither.")
    if not isinstance(gold.get("explanation", ""), str):
        raise ValueError(f"{where}: the explanation must be text.")


def clean_config(config: dict | None) -> dict:
    """The config with defaults filled in and `dimension_definitions` for every dimension."""
    return check_config(ComparativeConfig, config)


def pair_key(a: str, b: str) -> str:
    """The group key of a pair, the same whichever way round; hashed when ids are long."""
    key = "|".join(sorted((a, b)))
    if len(key) > GROUP_KEY_MAX:
        return "pair:" + hashlib.sha256(key.encode()).hexdigest()
    return key


def _bots(conversation) -> list[str]:
    return sorted({s.system.slug for s in conversation.speakers.all() if s.system_id})


def _dialogue(conversation, config: dict) -> list[dict]:
    speakers = sorted(conversation.speakers.all(), key=lambda s: s.index)
    bots = [s for s in speakers if s.system_id]
    humans = [s for s in speakers if not s.system_id]
    names = {}
    for group, base in ((bots, config["bot_name"]), (humans, config["human_name"])):
        for n, speaker in enumerate(group, 1):
            names[speaker.index] = base if len(group) == 1 else f"{base} {n}"
    turns = sorted(conversation.turns.all(), key=lambda t: t.position)
    return [
        {
            "speaker": t.speaker,
            "name": names.get(t.speaker, f"Speaker {t.speaker + 1}"),
            "text": t.text,
        }
        for t in turns
    ]


def _default_pairs(conversations, config: dict, rng, excluded: set[str]) -> list[tuple]:
    cells: dict[tuple, list[tuple]] = defaultdict(list)
    by_domain = defaultdict(list)
    for conversation in conversations:
        by_domain[conversation.domain].append(conversation)
    for domain, members in by_domain.items():
        members.sort(key=lambda c: c.external_id)
        bots = {c.external_id: _bots(c) for c in members}
        for a, b in combinations(members, 2):
            bots_a, bots_b = bots[a.external_id], bots[b.external_id]
            if not bots_a or not bots_b or set(bots_a) & set(bots_b):
                continue
            if pair_key(a.external_id, b.external_id) in excluded:
                continue
            cells[(domain, tuple(bots_a), tuple(bots_b))].append((a, b))
    cap = config["max_pairs"]
    total = sum(len(pairs) for pairs in cells.values())
    if cap is None or total <= cap:
        return [pair for cell in sorted(cells) for pair in cells[cell]]
    queues = []
    for cell in sorted(cells):
        pairs = cells[cell]
        rng.shuffle(pairs)
        queues.append(pairs)
    chosen: list[tuple] = []
    while len(chosen) < cap:
        for pairs in queues:
            if pairs and len(chosen) < cap:
                chosen.append(pairs.pop())
    return chosen


def _spec(a, b, config: dict, rng, **extra) -> ItemSpec:
    left = rng.choice(["a", "b"])
    return ItemSpec(
        content={
            "dialogues": {"a": _dialogue(a, config), "b": _dialogue(b, config)},
            "left_is": left,
            "meta": {
                "a": a.external_id,
                "b": b.external_id,
                "systems_a": _bots(a),
                "systems_b": _bots(b),
                "domain": a.domain if a.domain == b.domain else "",
            },
        },
        group_key=pair_key(a.external_id, b.external_id),
        conversation_id=a.pk,
        conversation_b_id=b.pk,
        **extra,
    )


def build_items(conversations, config: dict, rng) -> list[ItemSpec]:
    """Item specs for pairs of `conversations` (speakers__system and turns prefetched)."""
    config = clean_config(config)
    conversations = list(conversations)
    by_id = {c.external_id: c for c in conversations}

    def lookup(external_id):
        try:
            return by_id[external_id]
        except KeyError:
            raise ConfigInvalid(
                f"Conversation {external_id} is not among the conversations."
            ) from None

    gold_specs = [
        _spec(
            lookup(gold["a"]),
            lookup(gold["b"]),
            config,
            rng,
            role="gold",
            gold={"choices": dict(gold["choices"]), "explanation": gold.get("explanation", "")},
        )
        for gold in config["gold_pairs"]
    ]
    if config["pairs"] is not None:
        pairs = [(lookup(a), lookup(b)) for a, b in config["pairs"]]
    else:
        # A gold pair shown as a task too would let its answer leak into the analysis.
        excluded = {pair_key(g["a"], g["b"]) for g in config["gold_pairs"]}
        pairs = _default_pairs(conversations, config, rng, excluded)
    return [_spec(a, b, config, rng) for a, b in pairs] + gold_specs


# The built-in dimensions' labels as `_label` makes them, for the translation catalog.
BUILT_IN_LABELS = (
    gettext_noop("Consistency"),
    gettext_noop("Emotion understanding"),
    gettext_noop("Engagingness"),
    gettext_noop("Grammaticality"),
    gettext_noop("Informativeness"),
    gettext_noop("Quality"),
    gettext_noop("Proactivity"),
    gettext_noop("Relevance"),
)


def _label(name: str) -> str:
    """A dimension's name as the page shows it: a built-in one translated (kinds.base.shown)."""
    return shown(name.replace("_", " ").capitalize())


def _named(turns: list[dict]) -> list[dict]:
    """Turns with the speakers' stored names as the page shows them (a default name, such
    as "Chatbot", translated)."""
    return [{**turn, "name": shown(turn["name"])} for turn in turns]


def _other(side: str) -> str:
    return "b" if side == "a" else "a"


class ComparativeKind(TaskKind):
    key = "comparative"
    label = "Side-by-side dialogue comparison"
    template = "annotation/kinds/comparative.html"
    shortcuts = (
        ("1", gettext_noop("conversation 1")),
        ("2", gettext_noop("conversation 2")),
        ("3", gettext_noop("neither")),
    )

    config_schema = ComparativeConfig

    def clean_config(self, config):
        return clean_config(config)

    def build_from_conversations(self, conversations, config, rng) -> list[ItemSpec]:
        return build_items(conversations, config, rng)

    def item_context(self, item, config):
        content = item.content
        left = content["left_is"]
        options = [
            {"value": "left", "text": gettext("Conversation 1"), "key": "1"},
            {"value": "right", "text": gettext("Conversation 2"), "key": "2"},
            {"value": "neither", "text": gettext("Neither"), "key": "3"},
        ]
        return {
            "panels": [
                {"title": gettext("Conversation 1"), "turns": _named(content["dialogues"][left])},
                {
                    "title": gettext("Conversation 2"),
                    "turns": _named(content["dialogues"][_other(left)]),
                },
            ],
            "dimensions": [
                {
                    "name": name,
                    "label": _label(name),
                    "definition": shown(config["dimension_definitions"][name]),
                    "field": f"choice_{name}",
                    "options": options,
                }
                for name in shown_order(item, config["dimensions"])
            ],
        }

    def parse_payload(self, item, config, data):
        left = item.content.get("left_is")
        if left not in ("a", "b"):
            raise PayloadInvalid({"": gettext(NOT_SHOWN)})
        sides = {"left": left, "right": _other(left), "neither": "neither"}
        fields = {
            f"choice_{name}": choice_field(sides, in_sentence(_label(name)))
            for name in config["dimensions"]
        }

        def unknown_dimensions(keys):
            unknown = [k[len("choice_") :] for k in keys if k.startswith("choice_")]
            if not unknown:
                return ""
            return gettext("Unknown dimension: %(names)s.") % {"names": ", ".join(unknown)}

        values = parse_answers(data, fields, unknown_dimensions)
        return {
            "choices": {name: values[f"choice_{name}"] for name in config["dimensions"]},
            "left": left,
            ORDER_KEY: shown_order(item, config["dimensions"]),
        }

    def check_gold(self, content, gold):
        choices = gold.get("choices")
        if choices is None:
            return []
        if not isinstance(choices, dict):
            return ["'choices' must map each dimension to a, b or neither."]
        return [
            f"{dimension}: the choice must be a, b or neither, not {side!r}."
            for dimension, side in choices.items()
            if side not in SIDES
        ]

    def score_gold(self, item, payload):
        if not item.gold or not item.gold.get("choices"):
            return None
        left = item.content["left_is"]
        # Feedback speaks the page's language: the worker saw "Conversation 1" and "2".
        shown = {left: "Conversation 1", _other(left): "Conversation 2", "neither": "Neither"}
        feedback = [
            {
                "where": _label(dimension),
                "field": f"choice_{dimension}",
                "yours": shown.get(payload["choices"].get(dimension), "no answer"),
                "gold": shown[gold],
                "explanation": item.gold.get("explanation", ""),
            }
            for dimension, gold in item.gold["choices"].items()
            if payload["choices"].get(dimension) != gold
        ]
        return GoldResult(correct=not feedback, mistakes=len(feedback), feedback=feedback)

    def export_row(self, judgment):
        meta = judgment.item.content["meta"]
        return {
            "campaign": judgment.campaign.slug,
            "item": judgment.item.position,
            "worker": str(judgment.worker.public_id),
            "batch": f"{judgment.campaign.slug}:{judgment.assignment.batch.position}",
            "domain": meta["domain"],
            "conversation_a": meta["a"],
            "conversation_b": meta["b"],
            "systems_a": meta["systems_a"],
            "systems_b": meta["systems_b"],
            "left": judgment.payload["left"],
            "choices": judgment.payload["choices"],
            ORDER_KEY: judgment.payload.get(ORDER_KEY, []),
            "started_at_ms": int(judgment.started_at.timestamp() * 1000),
            "duration_ms": round(judgment.seconds * 1000),
        }

    def csv_rows(self, judgment):
        # A choice per dimension (choice_<dimension>: a, b or neither).
        row = self.export_row(judgment)
        row["choice"] = row.pop("choices")
        return [row]


KIND = ComparativeKind()
