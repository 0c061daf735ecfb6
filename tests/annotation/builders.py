"""Campaigns built straight from item specs, without going through the catalog."""

import itertools

from annotation.items import add_items
from annotation.kinds.base import ItemSpec
from annotation.models import Assignment, Campaign, Item

_counter = itertools.count(1)


def ab_spec(n: int, group_key: str = "", gold: dict | None = None, role: str = "task") -> ItemSpec:
    return ItemSpec(
        content={
            "context": [f"context {n} ?"],
            "left": f"left answer {n}",
            "right": f"right answer {n}",
            "left_is": "a" if n % 2 else "b",
            "meta": {"prompt": str(n), "system_a": "sys-a", "system_b": "sys-b"},
        },
        group_key=group_key,
        gold=gold,
        role=role,
    )


def campaign(kind: str = "ab", *, status: str = "live", **fields) -> Campaign:
    n = next(_counter)
    fields.setdefault("slug", f"campaign-{n}")
    fields.setdefault("title", f"Campaign {n}")
    # Most tests arrive by `?worker=<id>`; the tests of the switch turn it off.
    fields.setdefault("allow_worker_param", True)
    return Campaign.objects.create(task_kind=kind, status=status, **fields)


def ab_campaign(
    n_items: int = 6, *, groups: int | None = None, gold: int = 0, **fields
) -> Campaign:
    """An A/B campaign; with `groups`, item i belongs to group i % groups. `batch_size`
    counts the task items of a batch: with gold, the campaign's batches hold one more."""
    if gold:
        fields["batch_size"] = fields.get("batch_size", 10) + 1
    c = campaign("ab", **fields)
    specs = [ab_spec(i, f"g{i % groups}" if groups else "") for i in range(n_items)]
    specs += [
        ab_spec(
            1000 + i,
            gold={"choice": "a", "explanation": "Response a answers the question."},
            role="gold",
        )
        for i in range(gold)
    ]
    add_items(c, specs, rng=MIDDLE)
    return c


class _Middle:
    """Places each check in the middle of its batch, so that tests can name items by
    position; tests/annotation/test_services.py checks that real positions are random."""

    def randint(self, low: int, high: int) -> int:
        return (low + high) // 2


MIDDLE = _Middle()


def batch_items(assignment: Assignment) -> list[Item]:
    """The assignment's batch in the order a worker sees it."""
    return list(assignment.batch.items.order_by("order_in_batch"))
