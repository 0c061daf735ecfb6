"""ABC-Eval: which of the task's behaviour labels apply to each bot turn.

The judge sees the conversation (bot turns numbered as on the page) and the task's labels
with their definitions and an example each way. It answers {"turns": {"<bot turn
number>": [labels that apply], ...}} for every bot turn (an empty list where none does),
which becomes the page's ticked `flag_<label>_<position>` boxes; answering every turn is
what the page's "I checked every bot turn" box stands for.
"""

from annotation.kinds.abc_eval import FIELD_PREFIX, LABELS, field_name

from .common import AnswerInvalid, closed_object, mapping, one_of
from .likert import conversation_text

PLACEHOLDERS = ("conversation", "labels", "bot_turns", "title", "answer_format")
REQUIRED = ("conversation", "labels", "answer_format")

DEFAULT = """\
You are labelling the behaviour of a chatbot in a conversation with a person.

The conversation (the bot's turns are numbered):
$conversation

Behaviour labels ($title):
$labels

For each of the bot's $bot_turns numbered turns, list the labels that apply to that turn
(none, one or several). Judge each turn in the context of what was said before it.

$answer_format
"""


def label_lines(labels: list[dict]) -> str:
    """The task's labels as the page describes them (`Label.shown`), named by their keys."""
    return "\n".join(
        f'- "{label["name"]}": {label["definition"]}\n'
        f"  Applies: {label['yes']}\n  Does not apply: {label['no']}"
        for label in labels
    )


def placeholders(task: dict, config: dict) -> dict:
    bot_turns = sum(1 for t in task["turns"] if t["bot"])
    return {
        "conversation": conversation_text(task["turns"]),
        "labels": label_lines(task["labels"]),
        "bot_turns": str(bot_turns),
        "title": task["title"],
    }


def answer_format(task: dict, config: dict) -> str:
    numbers = [t["number"] for t in task["turns"] if t["bot"]]
    names = ", ".join(f'"{label["name"]}"' for label in task["labels"])
    example = ", ".join(f'"{n}": [...]' for n in numbers)
    return (
        f'Answer with JSON only: {{"turns": {{{example}}}}}, where each list holds the '
        f"labels that apply to that bot turn, chosen from {names}, or is empty."
    )


def answer_schema(task: dict, config: dict) -> dict:
    labels = {"type": "array", "items": one_of(label["name"] for label in task["labels"])}
    numbers = [str(t["number"]) for t in task["turns"] if t["bot"]]
    return closed_object({"turns": closed_object(dict.fromkeys(numbers, labels))})


def to_form(task: dict, config: dict, answer: dict) -> dict:
    turns = mapping(answer, "turns")
    positions = {str(t["number"]): t["position"] for t in task["turns"] if t["bot"]}
    stray = sorted(str(n) for n in turns if str(n) not in positions)
    if stray:
        raise AnswerInvalid(
            f"There is no bot turn {', '.join(stray)}; the bot turns are 1 to {len(positions)}."
        )
    missing = [n for n in positions if n not in {str(k) for k in turns}]
    if missing:
        raise AnswerInvalid(
            f"Every bot turn needs a list of labels; missing turn {', '.join(missing)}."
        )
    fields = {"reviewed": "1"}
    for number, names in turns.items():
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise AnswerInvalid(f"Bot turn {number} needs a list of label names.")
        position = positions[str(number)]
        for name in names:
            label = LABELS.get(name.strip().lower())
            # An unknown label (or one of another task) becomes a field the kind refuses,
            # with its message naming the label.
            code = label.code if label else name.strip().replace(" ", "_").replace("-", "_")
            fields[field_name(label, position) if label else f"{FIELD_PREFIX}{code}_{position}"] = (
                "1"
            )
    return fields
