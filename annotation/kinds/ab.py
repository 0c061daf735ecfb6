"""ChatEval's A/B test: a context and two responses in random order; which is better, or a tie.

Identical responses are never shown: the item is stored with an automatic tie. The side on
which each response is shown is random per item and stored with the judgment, so that
position bias can be analysed. Payload: {"choice": "a" | "b" | "tie", "left": "a" | "b"},
where a is `response_a` (the submitted system) and b is `response_b` (the baseline).
"""

import random

from django.utils.translation import gettext, gettext_noop

from .base import (
    NOT_SHOWN,
    GoldResult,
    ItemSpec,
    PayloadInvalid,
    TaskKind,
    choice_field,
    parse_answers,
)


def same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def build_items(pairs, rng: random.Random) -> list[ItemSpec]:
    """One item per (prompt, response_a, response_b); `pairs` yields catalog objects."""
    specs = []
    for prompt, response_a, response_b in pairs:
        meta = {
            "prompt": prompt.external_id,
            "system_a": response_a.submission.system.slug,
            "system_b": response_b.submission.system.slug,
        }
        common = {
            "prompt_id": prompt.pk,
            "response_a_id": response_a.pk,
            "response_b_id": response_b.pk,
        }
        if same_text(response_a.text, response_b.text):
            specs.append(
                ItemSpec(
                    content={"context": prompt.context, "meta": meta},
                    auto_payload={"choice": "tie", "automatic": "identical responses"},
                    **common,
                )
            )
            continue
        left = rng.choice(["a", "b"])
        texts = {"a": response_a.text, "b": response_b.text}
        right = "b" if left == "a" else "a"
        specs.append(
            ItemSpec(
                content={
                    "context": prompt.context,
                    "left": texts[left],
                    "right": texts[right],
                    "left_is": left,
                    "meta": meta,
                },
                **common,
            )
        )
    return specs


class ABKind(TaskKind):
    key = "ab"
    label = "A/B response comparison"
    template = "annotation/kinds/ab.html"
    shortcuts = (
        ("1", gettext_noop("Response 1 is better")),
        ("2", gettext_noop("Response 2 is better")),
        ("3", gettext_noop("it's a tie")),
    )

    def build_from_responses(self, pairs, rng: random.Random) -> list[ItemSpec]:
        return build_items(pairs, rng)

    def item_context(self, item, config):
        content = item.content
        return {"context": content["context"], "left": content["left"], "right": content["right"]}

    def parse_payload(self, item, config, data):
        sides = {"left": "left", "right": "right", "tie": "tie"}
        side = parse_answers(
            data, {"choice": choice_field(sides, gettext("which response is better"))}
        )["choice"]
        left = item.content.get("left_is")
        if left not in ("a", "b"):
            raise PayloadInvalid({"": gettext(NOT_SHOWN)})
        right = "b" if left == "a" else "a"
        choice = {"left": left, "right": right, "tie": "tie"}[side]
        return {"choice": choice, "left": left}

    def check_gold(self, content, gold):
        if gold.get("choice") not in ("a", "b", "tie"):
            return [f"'choice' must be a, b or tie, not {gold.get('choice')!r}."]
        return []

    def score_gold(self, item, payload):
        if not item.gold:
            return None
        correct = payload["choice"] == item.gold["choice"]
        feedback = (
            []
            if correct
            else [
                {
                    "where": "this comparison",
                    "field": "choice",
                    "yours": payload["choice"],
                    "gold": item.gold["choice"],
                    "explanation": item.gold.get("explanation", ""),
                }
            ]
        )
        return GoldResult(correct=correct, mistakes=0 if correct else 1, feedback=feedback)

    def export_row(self, judgment):
        meta = judgment.item.content.get("meta", {})
        row = super().export_row(judgment)
        del row["payload"]  # its two fields are the columns choice and left
        return {
            **row,
            "prompt": meta.get("prompt"),
            "system_a": meta.get("system_a"),
            "system_b": meta.get("system_b"),
            "choice": judgment.payload["choice"],
            "left": judgment.payload.get("left"),
        }


KIND = ABKind()
