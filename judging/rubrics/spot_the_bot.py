"""Spot The Bot: is each speaker a human, a bot, or unsure; and who is better on each feature.

The judge sees the segment with the page's neutral speaker names (and the opening, when the
campaign shows it) and the features with their definitions. It answers
{"speakers": {name: "human" | "bot" | "unsure"}, "better": {feature: name | "none"}},
which becomes the page's `label_<index>` and `better_<feature>` fields.
"""

from annotation.kinds.spot_the_bot import NO_DIFFERENCE

from .common import AnswerInvalid, closed_object, mapping, one_of

PLACEHOLDERS = ("conversation", "opening", "speakers", "features", "answer_format")
REQUIRED = ("conversation", "speakers", "answer_format")

DEFAULT = """\
Some conversations are between two people, some between two chatbots, and some between
a person and a chatbot. Read this conversation between $speakers.
$opening
$conversation

For each speaker, decide whether it is a human or a bot; say "unsure" only if you really
cannot tell. Then, for each of these features, say which speaker is better, or "none" if
neither is:
$features

$answer_format
"""


def placeholders(task: dict, config: dict) -> dict:
    names = [s["name"] for s in task["speakers"]]
    opening = ""
    if task["seed"]:
        lines = "\n".join(f"{t['name']}: {t['text']}" for t in task["seed"])
        opening = f"\nThe opening, given to both speakers (neither wrote it):\n{lines}\n\nThen:"
    return {
        "conversation": "\n".join(f"{t['name']}: {t['text']}" for t in task["turns"]),
        "opening": opening,
        "speakers": " and ".join(names),
        "features": "\n".join(f"- {f['name']}: {f['definition']}" for f in task["features"]),
    }


def answer_format(task: dict, config: dict) -> str:
    names = [s["name"] for s in task["speakers"]]
    speakers = ", ".join(f'"{n}": "human" | "bot" | "unsure"' for n in names)
    choices = " | ".join(f'"{n}"' for n in names) + ' | "none"'
    better = ", ".join(f'"{f["name"]}": {choices}' for f in task["features"])
    return f'Answer with JSON only: {{"speakers": {{{speakers}}}, "better": {{{better}}}}}'


def answer_schema(task: dict, config: dict) -> dict:
    names = [s["name"] for s in task["speakers"]]
    labels = one_of(("human", "bot", "unsure"))
    answer = {"speakers": closed_object(dict.fromkeys(names, labels))}
    if task["features"]:
        better = one_of([*names, "none"])
        answer["better"] = closed_object({f["name"]: better for f in task["features"]})
    return closed_object(answer)


def to_form(task: dict, config: dict, answer: dict) -> dict:
    names = {s["name"]: i for i, s in enumerate(task["speakers"])}
    labels = mapping(answer, "speakers")
    stray = sorted(str(n) for n in labels if n not in names)
    if stray:
        raise AnswerInvalid(
            f"Unknown speaker {', '.join(stray)}; the speakers are {', '.join(names)}."
        )
    fields = {f"label_{names[name]}": label for name, label in labels.items()}
    better = answer.get("better", {}) if task["features"] else {}
    if not isinstance(better, dict):
        raise AnswerInvalid('"better" must be a JSON object.')
    for feature, choice in better.items():
        if isinstance(choice, str) and choice.strip().lower() in ("none", "neither", "tie"):
            value = NO_DIFFERENCE
        else:
            value = str(names[choice]) if isinstance(choice, str) and choice in names else choice
        fields[f"better_{feature}"] = value
    return fields
