"""What every rubric shares: filling the template, finding the JSON in a reply, and turning
it into a payload through the kind's own form validation."""

import json
import re
import string

from django.http import QueryDict

from annotation.kinds.base import PayloadInvalid
from evalhub.text import without_nul

from . import rubric_module

# The model's earlier reply is sent back with the problem when it is retried; a runaway
# reply is cut so a retry does not cost a whole context window.
ECHO_CHARS = 4000
SYSTEM_MESSAGE = (
    "You are a careful evaluator of chatbot conversations. Follow the instructions exactly "
    "and reply with one JSON object and nothing else."
)
PLACEHOLDER = re.compile(r"\$(?:(\$)|([a-z_][a-z0-9_]*)|\{([a-z_][a-z0-9_]*)\})")


class AnswerInvalid(ValueError):
    """A reply that does not give a valid answer; the message says why (sent back to the
    model when it is asked again, and stored with a failed judgment)."""


def used_placeholders(text: str) -> list[str]:
    return [m.group(2) or m.group(3) for m in PLACEHOLDER.finditer(text) if not m.group(1)]


def check_instructions(kind: str, text: str) -> list[str]:
    """What is wrong with a rubric's template for `kind`: unknown placeholders, or the
    ones every rubric of the kind needs missing."""
    module = rubric_module(kind)
    known = set(module.PLACEHOLDERS)
    used = used_placeholders(text)
    problems = []
    unknown = sorted({name for name in used if name not in known})
    if unknown:
        problems.append(
            f"Unknown placeholder {', '.join('$' + n for n in unknown)}; "
            f"this kind knows {', '.join('$' + n for n in sorted(known))}."
        )
    missing = [name for name in module.REQUIRED if name not in used]
    if missing:
        problems.append(
            f"The rubric must show the judge {', '.join('$' + n for n in missing)} "
            "(what to judge and how to answer)."
        )
    return problems


def closed_object(properties: dict) -> dict:
    """A JSON schema object with exactly these properties, every one required: the shape
    OpenAI's strict structured output accepts (no optional or extra keys)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def one_of(values) -> dict:
    return {"type": "string", "enum": [str(v) for v in values]}


def response_format(kind: str, task: dict, config: dict) -> dict:
    """The rubric's answer as OpenAI's structured output (`response_format`): the JSON
    schema of what `answer_format` asks for, strict. The reply still goes through
    `parse_reply`: the schema narrows what the model may write, the kind decides."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": f"{kind}_answer",
            "schema": rubric_module(kind).answer_schema(task, config),
            "strict": True,
        },
    }


def render(kind: str, instructions: str, task: dict, config: dict) -> str:
    module = rubric_module(kind)
    values = dict(module.placeholders(task, config))
    values["answer_format"] = module.answer_format(task, config)
    return string.Template(instructions).safe_substitute(values)


def prompt(kind: str, instructions: str, task: dict, config: dict) -> list[dict]:
    return [
        {"role": "system", "content": SYSTEM_MESSAGE},
        {"role": "user", "content": render(kind, instructions, task, config)},
    ]


def retry_messages(messages: list[dict], raw_text: str, problem: str) -> list[dict]:
    """The conversation so far, the unusable reply and what was wrong with it."""
    return [
        *messages,
        {"role": "assistant", "content": raw_text[:ECHO_CHARS]},
        {
            "role": "user",
            "content": f"That answer could not be used: {problem} "
            "Reply again with only the JSON object, in the format asked for.",
        },
    ]


def extract_json(text: str) -> dict:
    """The first JSON object in `text` (models wrap it in prose or ``` fences), without
    the NUL characters its escapes may hold ("\\u0000"): dropped from a model's answer, as
    the client drops them from its text (evalhub/text.py)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except RecursionError:  # nested deeper than Python's json goes
            raise AnswerInvalid("The reply's JSON is nested too deeply.") from None
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return without_nul(value)
        start = text.find("{", start + 1)
    raise AnswerInvalid("The reply holds no JSON object.")


def form_value(value) -> str | None:
    """A JSON scalar as the string a browser would send; None leaves the field unanswered.
    Booleans and fractional numbers are kept recognisable so the kind refuses them."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value)


def as_query_dict(fields: dict) -> QueryDict:
    data = QueryDict(mutable=True)
    for name, value in fields.items():
        text = form_value(value)
        if text is not None and text != "":
            data[name] = text
    return data


def mapping(answer: dict, key: str) -> dict:
    value = answer.get(key)
    if not isinstance(value, dict):
        raise AnswerInvalid(f'"{key}" must be a JSON object.')
    return value


def problem_text(invalid: PayloadInvalid) -> str:
    return " ".join(
        message if not field else f"{field}: {message}" for field, message in invalid.errors.items()
    )


def parse_reply(kind_obj, item, config: dict, task: dict, text: str) -> dict:
    """The payload a reply gives, validated by the kind as a human's would be;
    AnswerInvalid with the reason otherwise."""
    module = rubric_module(kind_obj.key)
    answer = extract_json(text)
    fields = module.to_form(task, config, answer)
    try:
        return kind_obj.parse_payload(item, config, as_query_dict(fields))
    except PayloadInvalid as invalid:
        raise AnswerInvalid(problem_text(invalid)) from None
