"""Arena battles: which of two models' whole conversations with the same voter is better.

The judge sees "Conversation 1" and "Conversation 2", each the voter's turns and one side's
answers, in an order drawn per battle and run (judging/battles.py: the same random order
the A/B kind uses against position bias); it answers {"better": "1" | "2" | "tie" |
"both_bad"}, the four choices a voter has. The battle's kind (judging/battles.py) maps the
place back to the side (a or b), so a payload reads as a vote does.
"""

from .common import AnswerInvalid, closed_object, one_of

PLACEHOLDERS = ("conversation_1", "conversation_2", "turns", "answer_format")
REQUIRED = ("conversation_1", "conversation_2", "answer_format")
SIDES = {
    "1": "first",
    "2": "second",
    "tie": "tie",
    "both_bad": "both_bad",
    "both bad": "both_bad",
    "bothbad": "both_bad",
}

DEFAULT = """\
You are comparing two AI assistants. A user had the same conversation ($turns user turns)
with each of them: every user turn went to both assistants.

Conversation 1:
$conversation_1

Conversation 2:
$conversation_2

Which assistant served the user better over the whole conversation? Judge how helpful,
correct, relevant and clear the answers are. Say "tie" when they are equally good and
"both_bad" when neither is acceptable. The order of the conversations is random; do not
prefer one for its place, nor a longer answer for its length.

$answer_format
"""


def _dialogue(turns: list[dict]) -> str:
    return "\n\n".join(f"User: {t['prompt']}\n\nAssistant: {t['answer']}" for t in turns)


def placeholders(task: dict, config: dict) -> dict:
    return {
        "conversation_1": _dialogue(task["first"]),
        "conversation_2": _dialogue(task["second"]),
        "turns": str(len(task["first"])),
    }


def answer_format(task: dict, config: dict) -> str:
    return (
        'Answer with JSON only: {"better": "1"} or {"better": "2"} or {"better": "tie"} '
        'or {"better": "both_bad"}.'
    )


def answer_schema(task: dict, config: dict) -> dict:
    return closed_object({"better": one_of(("1", "2", "tie", "both_bad"))})


def to_form(task: dict, config: dict, answer: dict) -> dict:
    if "better" not in answer:
        raise AnswerInvalid('The answer needs "better": "1", "2", "tie" or "both_bad".')
    better = answer["better"]
    key = str(better).strip().lower() if isinstance(better, str | int) else better
    return {"choice": SIDES.get(key, better)}
