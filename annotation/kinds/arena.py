"""Arena battles voted by a paid crowd: the items of the campaign an arena launches on a
crowd platform (arenas/crowd.py), so that the arena reuses the campaigns' whole crowd side
(providers, allocation, completion codes, budget, staff approval, review, pay, block and
the quality screens) instead of a second copy of it.

Items. A batch is one participant's N battles. A task item is a battle slot
(`{"slot": n}`): the participant writes the prompt and two of the arena's systems answer,
as in any live battle. A gold item is an owner's gold battle (`{"prompt", "answers":
[first, second]}`, `gold = {"better": "first" | "second"}`), mixed into batches as every
campaign's gold is (annotation/items.add_items, `gold_per_batch`). The arena shows it as a
battle like the others, with the two fixed answers on sides drawn at random.

The items are not answered on annotation's item page: the worker's assignment page hands
them to the arena's battle pages (`TaskKind.page_elsewhere`, which the arenas app
registers), and a vote there is stored here as the item's judgment.

Payload: `{"battle": public id, "vote": "a_better" | "b_better" | "tie" | "both_bad"}`,
and for gold `"first": "a" | "b"`, the side the first answer was shown on. A gold vote is
correct when it names the better answer's side.
"""

from django.utils.translation import gettext

from .base import GoldResult, ItemSpec, PayloadInvalid, TaskKind

VOTES = ("a_better", "b_better", "tie", "both_bad")
ORDER = ("first", "second")


def battle_slots(count: int) -> list[ItemSpec]:
    return [ItemSpec(content={"slot": n}) for n in range(1, count + 1)]


def gold_item(prompt: str, first: str, second: str, better: str) -> ItemSpec:
    """A gold battle: `better` is "first" or "second"."""
    if better not in ORDER:
        raise ValueError(f"better must be one of {ORDER}, not {better!r}")
    return ItemSpec(
        content={"prompt": prompt, "answers": [first, second]},
        role="gold",
        gold={"better": better},
    )


class ArenaKind(TaskKind):
    key = "arena"
    label = "Arena battles (an arena's crowd)"
    template = "annotation/kinds/arena.html"
    # The worker does the battle before anything is stored; on the arena's pages.
    live = True
    # Made by an arena's crowd launch, never from the campaign form.
    standalone = False

    def item_context(self, item, config):
        # The MTurk preview and the staff preview: what the worker will do, never a gold.
        return {"preview": True}

    def parse_payload(self, item, config, data):
        raise PayloadInvalid({"": gettext("An arena battle is voted on the arena's battle page.")})

    def check_gold(self, content, gold):
        problems = []
        if not isinstance(gold, dict) or gold.get("better") not in ORDER:
            problems.append('A gold battle names the better answer: "first" or "second".')
        answers = content.get("answers")
        if not (isinstance(answers, list) and len(answers) == 2 and content.get("prompt")):
            problems.append("A gold battle has a prompt and two answers.")
        return problems

    def score_gold(self, item, payload):
        first = payload.get("first")
        if first not in ("a", "b") or payload.get("vote") not in VOTES:
            return None
        second = "b" if first == "a" else "a"
        better_side = first if item.gold["better"] == "first" else second
        correct = payload["vote"] == f"{better_side}_better"
        return GoldResult(correct=correct, mistakes=0 if correct else 1)

    def export_row(self, judgment):
        return {
            "campaign": judgment.campaign.slug,
            "item": judgment.item.position,
            "role": judgment.item.role,
            "worker": str(judgment.worker.public_id),
            "batch": judgment.assignment.batch.position,
            "battle": judgment.payload.get("battle"),
            "vote": judgment.payload.get("vote"),
            "gold_correct": judgment.gold_correct,
            "started_at_ms": int(judgment.started_at.timestamp() * 1000),
            "duration_ms": judgment.client_duration_ms,
        }


KIND = ArenaKind()
