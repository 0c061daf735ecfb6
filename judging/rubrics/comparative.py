"""Comparative: for each dimension, in which of two conversations the chatbot does better.

The judge sees "Conversation 1" and "Conversation 2" in the order the page shows them
(random per item) and the dimensions with their definitions, in the item's shown order.
It answers {"choices": {dimension: "1" | "2" | "neither"}}, which becomes the page's
`choice_<dimension>` = left / right / neither; the kind maps sides to a / b.
"""

from .common import closed_object, mapping, one_of

PLACEHOLDERS = ("conversation_1", "conversation_2", "dimensions", "answer_format")
REQUIRED = PLACEHOLDERS
SIDES = {"1": "left", "2": "right", "neither": "neither", "none": "neither", "tie": "neither"}

DEFAULT = """\
You are comparing the chatbots of two conversations.

Conversation 1:
$conversation_1

Conversation 2:
$conversation_2

For each dimension below, say in which conversation the chatbot's responses fit the
definition better, or "neither" if they fit it equally well. The order of the two
conversations is random; do not prefer one for its place.
$dimensions

$answer_format
"""


def _dialogue(turns: list[dict]) -> str:
    return "\n".join(f"{t['name']}: {t['text']}" for t in turns)


def placeholders(task: dict, config: dict) -> dict:
    first, second = task["panels"]
    return {
        "conversation_1": _dialogue(first["turns"]),
        "conversation_2": _dialogue(second["turns"]),
        "dimensions": "\n".join(
            f"- {d['name']} ({d['label']}): {d['definition']}" for d in task["dimensions"]
        ),
    }


def answer_format(task: dict, config: dict) -> str:
    example = ", ".join(f'"{d["name"]}": "1" | "2" | "neither"' for d in task["dimensions"])
    return f'Answer with JSON only: {{"choices": {{{example}}}}}'


def answer_schema(task: dict, config: dict) -> dict:
    sides = one_of(("1", "2", "neither"))
    return closed_object({"choices": closed_object({d["name"]: sides for d in task["dimensions"]})})


def to_form(task: dict, config: dict, answer: dict) -> dict:
    choices = mapping(answer, "choices")
    fields = {}
    for dimension, choice in choices.items():
        key = str(choice).strip().lower() if isinstance(choice, str | int) else choice
        fields[f"choice_{dimension}"] = SIDES.get(key, choice)
    return fields
