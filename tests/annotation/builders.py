"""Campaigns built straight from item specs, without going through the catalog."""

import itertools

from annotation.models import Campaign
from annotation.services import add_items
from annotation.tasks.base import ItemSpec

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
    return Campaign.objects.create(task_kind=kind, status=status, **fields)


def ab_campaign(
    n_items: int = 6, *, groups: int | None = None, gold: int = 0, **fields
) -> Campaign:
    """An A/B campaign; with `groups`, item i belongs to group i % groups."""
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
    add_items(c, specs)
    return c
