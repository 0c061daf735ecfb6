"""A/B (ChatEval): which of two responses is the better next turn, or a tie.

The judge sees the conversation so far and "Response 1" and "Response 2" in the order the
page shows them (random per item); it answers {"better": "1" | "2" | "tie"}, which is the
page's choice left / right / tie, and the kind maps it to a / b as for a worker.
"""

from .common import AnswerInvalid, closed_object, one_of

PLACEHOLDERS = ("context", "response_1", "response_2", "answer_format")
REQUIRED = PLACEHOLDERS
SIDES = {"1": "left", "2": "right", "tie": "tie"}

DEFAULT = """\
You are comparing two candidate responses of chatbots to the same conversation.

The conversation so far (speakers alternate, oldest turn first):
$context

Response 1:
$response_1

Response 2:
$response_2

Which response is the better next turn of the conversation? Judge how sensible,
specific and engaging each one is as a reply to the last turn. Say "tie" only when
neither is better. The order of the responses is random; do not prefer one for its place.

$answer_format
"""


def placeholders(task: dict, config: dict) -> dict:
    context = "\n".join(f"{'AB'[i % 2]}: {u}" for i, u in enumerate(task["context"]))
    return {"context": context, "response_1": task["left"], "response_2": task["right"]}


def answer_format(task: dict, config: dict) -> str:
    return 'Answer with JSON only: {"better": "1"} or {"better": "2"} or {"better": "tie"}.'


def answer_schema(task: dict, config: dict) -> dict:
    return closed_object({"better": one_of(SIDES)})


def to_form(task: dict, config: dict, answer: dict) -> dict:
    if "better" not in answer:
        raise AnswerInvalid('The answer needs "better": "1", "2" or "tie".')
    better = answer["better"]
    key = str(better).strip().lower() if isinstance(better, str | int) else better
    return {"choice": SIDES.get(key, better)}
