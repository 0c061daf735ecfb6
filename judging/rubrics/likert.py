"""Likert: a rating from 1 to 5 per dimension, for the whole dialogue or for every bot turn.

The judge sees the conversation (bot turns numbered as on the page) and the campaign's
dimensions with their definitions, in the item's shown order. It answers
{"ratings": {dimension: 1..5}} (dialogue level) or {"ratings": {dimension: [1..5 per bot
turn, in order]}} (turn level), which becomes the page's `rating_<dimension>` or
`rating_<dimension>_<turn position>` fields.
"""

from annotation.kinds.likert import SCALE, field_name

from .common import AnswerInvalid, closed_object, mapping

PLACEHOLDERS = ("conversation", "dimensions", "level", "answer_format")
REQUIRED = ("conversation", "dimensions", "answer_format")

DEFAULT = """\
You are rating a chatbot's side of a conversation with a person.

The conversation (the bot's turns are numbered):
$conversation

Rate $level on each of these dimensions, from 1 (not at all) to 5 (completely):
$dimensions

$answer_format
"""


def conversation_text(turns: list[dict]) -> str:
    return "\n".join(
        f"Bot (turn {t['number']}): {t['text']}" if t["bot"] else f"User: {t['text']}"
        for t in turns
    )


def dimension_lines(dimensions: list[dict]) -> str:
    return "\n".join(f"- {d['key']} ({d['title']}): {d['definition']}" for d in dimensions)


def placeholders(task: dict, config: dict) -> dict:
    bot_turns = sum(1 for t in task["turns"] if t["bot"])
    level = (
        "the bot's responses over the whole conversation"
        if task["level"] == "dialogue"
        else f"each of the bot's {bot_turns} numbered turns"
    )
    return {
        "conversation": conversation_text(task["turns"]),
        "dimensions": dimension_lines(task["dimensions"]),
        "level": level,
    }


def answer_format(task: dict, config: dict) -> str:
    names = [d["key"] for d in task["dimensions"]]
    if task["level"] == "dialogue":
        example = ", ".join(f'"{n}": <1-5>' for n in names)
        return f'Answer with JSON only: {{"ratings": {{{example}}}}}'
    bot_turns = sum(1 for t in task["turns"] if t["bot"])
    example = ", ".join(
        f'"{n}": [<1-5 for each of the {bot_turns} bot turns, in order>]' for n in names
    )
    return f'Answer with JSON only: {{"ratings": {{{example}}}}}'


def answer_schema(task: dict, config: dict) -> dict:
    rating = {"type": "integer", "enum": list(SCALE)}
    if task["level"] != "dialogue":
        # One per bot turn: strict schemas take no length, the kind checks the count.
        rating = {"type": "array", "items": rating}
    return closed_object({"ratings": closed_object({d["key"]: rating for d in task["dimensions"]})})


def to_form(task: dict, config: dict, answer: dict) -> dict:
    ratings = mapping(answer, "ratings")
    if task["level"] == "dialogue":
        return {field_name(str(d)): v for d, v in ratings.items()}
    positions = [t["position"] for t in task["turns"] if t["bot"]]
    fields = {}
    for dimension, values in ratings.items():
        if not isinstance(values, list) or len(values) != len(positions):
            raise AnswerInvalid(
                f'"{dimension}" needs a list of {len(positions)} ratings, one per bot turn.'
            )
        fields |= {field_name(str(dimension), p): v for p, v in zip(positions, values, strict=True)}
    return fields
