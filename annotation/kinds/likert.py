"""Likert ratings (ABC-Eval's Dialogue Likert and Turn Likert): 1 (least) to 5 (most).

Dimensions: the 8 of the ABC-Eval paper's Table 3 (from Finch and Choi, 2020), with the
one-sentence definitions shown on the page (`DIMENSIONS`, from `dimensions.py`).

Config: `{"level": "dialogue" | "turn", "dimensions": [subset of DIMENSIONS]}`, by default
dialogue level and all 8. The paper's Turn Likert tasks use one dimension each.

Items. One item per human-bot conversation, built as for ABC-Eval (the bot is the speaker
whose system is set; other conversations are skipped and counted); `group_key` is the
conversation's external id. The content holds every turn and `bot_turns`.

Page. Dialogue level: the conversation, then one 1-5 scale per dimension (field
`rating_<dimension>`). Turn level: under each bot turn, one scale per dimension (field
`rating_<dimension>_<turn position>`). Each scale is a `data-choice-group` with `data-key`
1-5, so the digit keys answer the first scale still open.

Dimensions and their definitions come from `dimensions.py` (shared with comparative);
each item shows them in its own random order (`shown_order`), as ABC-Eval did.

Payload: `{"ratings": {dimension: 1..5}, "dimension_order": [dimension, ...]}` (dialogue) or
`{"ratings": {dimension: [1..5 per bot turn, in order]}, "dimension_order": [...]}` (turn);
`dimension_order` is the order the page showed (absent from imported judgments).

Gold is optional: `{"ratings": <same shape>, "explanations": {dimension: text}}`; a mistake
is a rating more than 1 away from the gold one.

Export (`export_row`), one JSON line per judgment: `{"campaign", "conversation", "system",
"level", "worker", "batch", "bot_turns", "ratings", "dimension_order", "started_at_ms",
"duration_ms"}`, where
`system` is the bot's slug and `worker` the worker's opaque public id; `bot_turns` (the
positions the turn-level lists follow) is empty at dialogue level.
"""

from typing import ClassVar, Literal

from django.utils.translation import gettext, gettext_noop
from pydantic import Field, field_validator

from evalhub.declared import Declared

from .abc_eval import human_bot_items, shown_turns
from .base import (
    AnswerField,
    GoldResult,
    ItemSpec,
    PayloadInvalid,
    TaskKind,
    check_config,
    in_sentence,
    parse_answers,
)
from .dimensions import DIMENSIONS, ORDER_KEY, known_once, shown_order

LEVELS = ("dialogue", "turn")
SCALE = range(1, 6)
ALLOWED = {str(v): v for v in SCALE}
FIELD_PREFIX = "rating_"


class LikertConfig(Declared):
    """A Likert campaign's config."""

    noun: ClassVar[str] = "Likert config key"
    messages: ClassVar[dict[str, str]] = {
        "dimensions": f"dimensions must be a non-empty list of: {', '.join(DIMENSIONS)}."
    }

    level: Literal["dialogue", "turn"] = Field(
        "dialogue",
        description="'dialogue': one rating per dimension for the whole conversation; "
        "'turn': one per dimension under every bot turn.",
    )
    dimensions: list[str] = Field(
        default_factory=lambda: list(DIMENSIONS),
        min_length=1,
        max_length=len(DIMENSIONS),
        description=f"The dimensions rated, a subset of: {', '.join(DIMENSIONS)}.",
    )

    _known_once = field_validator("dimensions")(known_once)


def clean_config(config: dict | None) -> dict:
    return check_config(LikertConfig, config)


def build_items(conversations) -> tuple[list[ItemSpec], int]:
    """One item per human-bot conversation; returns (specs, number of conversations skipped)."""
    return human_bot_items(conversations)


def field_name(dimension: str, position: int | None = None) -> str:
    suffix = "" if position is None else f"_{position}"
    return f"{FIELD_PREFIX}{dimension}{suffix}"


def _question(dimension: str, number: int | None = None) -> str:
    """The dimension as the page's messages name it, in the page's language."""
    title = in_sentence(gettext(DIMENSIONS[dimension][0]))
    if number is None:
        return title
    return gettext("%(dimension)s of bot turn %(number)s") % {"dimension": title, "number": number}


def missing_message(question: str) -> str:
    return gettext("Choose a rating from 1 to 5 for %(question)s.") % {"question": question}


def invalid_message(question: str) -> str:
    """AnswerField's `invalid`: it fills in {value} itself."""
    return gettext("'{value}' is not a rating from 1 to 5 for %(question)s.") % {
        "question": question
    }


def _scale(dimension: str, position: int | None = None, number: int | None = None) -> dict:
    """One 1-5 question. The (field, value) pairs let the template find the re-submitted
    answer and the usual error with `in`, in constant time per radio button."""
    title, definition = DIMENSIONS[dimension]
    field = field_name(dimension, position)
    missing = missing_message(_question(dimension, number))
    return {
        "key": dimension,
        "title": gettext(title),
        "definition": gettext(definition),
        "field": field,
        "options": [{"value": v, "text": v, "pair": (field, v)} for v in ALLOWED],
        "missing": missing,
        "missing_pair": (field, missing),
    }


def _is_rating(value) -> bool:
    return type(value) is int and value in SCALE


def check_ratings(content: dict, config: dict, ratings) -> dict:
    """Validate a `ratings` mapping arriving as JSON (imports, gold); raises PayloadInvalid."""
    dimensions = config["dimensions"]
    n = len(content["bot_turns"])
    if not isinstance(ratings, dict):
        raise PayloadInvalid({"": "ratings must map each dimension to a rating."})
    problems = []
    unknown = sorted(set(ratings) - set(dimensions))
    if unknown:
        problems.append(f"unknown dimension {', '.join(map(repr, unknown))}")
    for dimension in dimensions:
        value = ratings.get(dimension)
        if value is None:
            problems.append(f"missing {dimension!r}")
        elif config["level"] == "dialogue" and not _is_rating(value):
            problems.append(f"{dimension!r} must be a whole number from 1 to 5")
        elif config["level"] == "turn" and (
            not isinstance(value, list) or len(value) != n or not all(map(_is_rating, value))
        ):
            problems.append(f"{dimension!r} needs a rating from 1 to 5 for each of {n} bot turns")
    if problems:
        raise PayloadInvalid({"": "; ".join(problems) + "."})
    return {d: ratings[d] for d in dimensions}


class LikertKind(TaskKind):
    key = "likert"
    label = "Likert ratings"
    template = "annotation/kinds/likert.html"
    shortcuts = (("1–5", gettext_noop("rate the first scale not yet answered")),)

    config_schema = LikertConfig

    def default_config(self) -> dict:
        return clean_config(None)

    def clean_config(self, config):
        return clean_config(config)

    def build_from_conversations(self, conversations, config, rng) -> list[ItemSpec]:
        clean_config(config)
        return build_items(conversations)[0]

    def item_context(self, item, config):
        turns = shown_turns(item.content)
        order = shown_order(item, config["dimensions"])
        if config["level"] == "turn":
            for turn in turns:
                if turn["bot"]:
                    turn["scales"] = [_scale(d, turn["position"], turn["number"]) for d in order]
        scales = [_scale(d) for d in order]
        return {"level": config["level"], "turns": turns, "dimensions": scales}

    def parse_payload(self, item, config, data):
        dimensions = config["dimensions"]
        bot_turns = item.content["bot_turns"]
        if config["level"] == "dialogue":
            questions = {field_name(d): _question(d) for d in dimensions}
        else:
            questions = {
                field_name(d, p): _question(d, n)
                for n, p in enumerate(bot_turns, 1)
                for d in dimensions
            }
        fields = {
            name: AnswerField(
                ALLOWED,
                missing=missing_message(question),
                invalid=invalid_message(question),
            )
            for name, question in questions.items()
        }

        def unknown_ratings(keys):
            unknown = [k for k in keys if k.startswith(FIELD_PREFIX)]
            if unknown:
                return gettext("The form sent ratings this item does not have: %(fields)s.") % {
                    "fields": ", ".join(unknown)
                }
            return ""

        values = parse_answers(data, fields, unknown_ratings)
        if config["level"] == "dialogue":
            ratings = {d: values[field_name(d)] for d in dimensions}
        else:
            ratings = {d: [values[field_name(d, p)] for p in bot_turns] for d in dimensions}
        return {"ratings": ratings, ORDER_KEY: shown_order(item, dimensions)}

    def check_gold(self, content, gold):
        ratings = gold.get("ratings")
        if ratings is None:
            return []
        if not isinstance(ratings, dict):
            return ["'ratings' must map each dimension to a rating."]
        turns = len(content.get("bot_turns", []))
        problems = []
        for dimension, value in ratings.items():
            if dimension not in DIMENSIONS:
                problems.append(f"unknown dimension {dimension!r}.")
            elif isinstance(value, list):
                if len(value) != turns:
                    problems.append(f"{dimension}: one rating per bot turn ({turns}).")
                elif not all(_is_rating(v) for v in value):
                    problems.append(f"{dimension}: every rating must be 1 to 5.")
            elif not _is_rating(value):
                problems.append(f"{dimension}: the rating must be 1 to 5, not {value!r}.")
        return problems

    def score_gold(self, item, payload):
        if not item.gold or "ratings" not in item.gold:
            return None
        gold = item.gold["ratings"]
        explanations = item.gold.get("explanations", {})
        feedback = []
        for dimension, yours in payload["ratings"].items():
            right = gold.get(dimension)
            title = DIMENSIONS[dimension][0]
            if isinstance(yours, int) and isinstance(right, int):
                pairs = [(title, None, yours, right)]
            elif isinstance(yours, list) and isinstance(right, list) and len(yours) == len(right):
                pairs = [
                    (f"{title}, bot turn {n}", p, y, r)
                    for n, (p, y, r) in enumerate(
                        zip(item.content["bot_turns"], yours, right, strict=True), 1
                    )
                ]
            else:  # no gold of this shape for this dimension
                continue
            feedback += [
                {
                    "where": where,
                    "field": field_name(dimension, position),
                    "yours": y,
                    "gold": r,
                    "explanation": explanations.get(dimension, ""),
                }
                for where, position, y, r in pairs
                if abs(y - r) > 1
            ]
        return GoldResult(correct=not feedback, mistakes=len(feedback), feedback=feedback)

    def export_row(self, judgment):
        content = judgment.item.content
        ratings = judgment.payload["ratings"]
        turn_level = any(isinstance(v, list) for v in ratings.values())
        return {
            "campaign": judgment.campaign.slug,
            "conversation": content["meta"]["conversation"],
            "system": content["meta"]["system"],
            "level": "turn" if turn_level else "dialogue",
            "worker": str(judgment.worker.public_id),
            "batch": f"{judgment.campaign.slug}:{judgment.assignment.batch.position}",
            "bot_turns": content["bot_turns"] if turn_level else [],
            "ratings": ratings,
            ORDER_KEY: judgment.payload.get(ORDER_KEY, []),
            "started_at_ms": int(judgment.started_at.timestamp() * 1000),
            "duration_ms": round(judgment.seconds * 1000),
        }

    def csv_rows(self, judgment):
        # A rating per dimension (rating_<dimension>); turn-level ratings get one line per
        # bot turn, dialogue-level ones one line per judgment.
        row = self.export_row(judgment)
        bot_turns, ratings = row.pop("bot_turns"), row.pop("ratings")
        if row["level"] == "dialogue":
            return [{**row, "rating": ratings}]
        return [
            {**row, "turn": position, "rating": {d: values[i] for d, values in ratings.items()}}
            for i, position in enumerate(bot_turns)
        ]


KIND = LikertKind()
