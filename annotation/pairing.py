"""Adaptive allocation for A/B and comparative campaigns, and their stopping rule.

The engine is the arena's (evalstats/pairing.py): a Bradley-Terry state over the systems
and a pick rule that favours the pairs whose next judgment most narrows the ranking, with a
floor of uniform exploration. A campaign's items are made before launch, each about one pair
of systems, and handed out in batches; with ``allocation = adaptive`` a worker gets, among
the open slots they may take (the same rules as in order: annotation/allocation.py), the
batch whose items' pairs the rule prefers: a batch is drawn with probability proportional
to the sum over its items of the pair's probability under the rule, divided by the number
of open items of that pair (so a pair with many items left is not favoured for that
alone). Only the first ``WINDOW`` open slots in batch order are considered, which bounds the
cost of a request whatever the campaign's size.

The state is fitted from the campaign's judgments when a worker asks (one grouped query
over them, then Newton on an n x n matrix): a campaign holds thousands of judgments, not an
arena's millions, and a fit of the counts costs milliseconds. An A/B judgment is a win for
the chosen side or a tie; a comparative one is a win for the conversation preferred on
more dimensions ("neither" counts for neither), a tie when equal. The systems of a
comparative conversation are its bot speakers, joined ("a+b") when there are several.

The stopping rule (every adjacent pair separated at ``separation_level``) is shown on the
campaign's page; ``pause_when_answered`` pauses a live campaign when a submitted batch
answers it.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict

from .models import Campaign, Item, Judgment

KINDS = ("ab", "comparative")
WINDOW = 500


def supported(campaign: Campaign) -> bool:
    return campaign.task_kind in KINDS


def _pair_key(campaign: Campaign, a, b) -> tuple[str, str] | None:
    if campaign.task_kind == "comparative":
        a = "+".join(sorted(a or []))
        b = "+".join(sorted(b or []))
    if not a or not b or a == b:
        return None
    return str(a), str(b)


def _meta_fields(campaign: Campaign, prefix: str = "") -> tuple[str, str]:
    names = (
        ("systems_a", "systems_b")
        if campaign.task_kind == "comparative"
        else (
            "system_a",
            "system_b",
        )
    )
    return tuple(f"{prefix}content__meta__{name}" for name in names)


def _comparative_outcome(choices) -> str:
    if not isinstance(choices, dict):
        return "tie"
    a = sum(1 for value in choices.values() if value == "a")
    b = sum(1 for value in choices.values() if value == "b")
    return "a" if a > b else "b" if b > a else "tie"


def judged_pairs(campaign: Campaign) -> Counter:
    """(system a, system b, "a" | "b" | "tie") -> how many judgments said so."""
    a_field, b_field = _meta_fields(campaign, "item__")
    payload = "payload__choices" if campaign.task_kind == "comparative" else "payload__choice"
    rows = (
        Judgment.objects.filter(campaign=campaign, item__role=Item.Role.TASK)
        .order_by()
        .values_list(a_field, b_field, payload)
    )
    counts: Counter = Counter()
    for a, b, answer in rows.iterator(chunk_size=5000):
        key = _pair_key(campaign, a, b)
        if key is None:
            continue
        outcome = _comparative_outcome(answer) if campaign.task_kind == "comparative" else answer
        if outcome in ("a", "b", "tie"):
            counts[(*key, outcome)] += 1
    return counts


def item_systems(campaign: Campaign) -> list[str]:
    """The systems the campaign's task items compare, judged yet or not."""
    rows = (
        Item.objects.filter(campaign=campaign, role=Item.Role.TASK)
        .order_by()
        .values_list(*_meta_fields(campaign))
        .distinct()
    )
    keys: list[str] = []
    for a, b in rows:
        pair = _pair_key(campaign, a, b)
        keys += [key for key in pair or () if key not in keys]
    return keys


def campaign_state(campaign: Campaign, extra_keys=(), counts: Counter | None = None):
    """(evalstats state, system keys) fitted from the campaign's judgments (`counts`:
    `judged_pairs(campaign)` when the caller has it)."""
    import numpy as np

    from evalstats import pairing

    counts = judged_pairs(campaign) if counts is None else counts
    keys: list[str] = []
    for a, b, _ in counts:
        keys += [k for k in (a, b) if k not in keys]
    keys += [k for k in extra_keys if k not in keys]
    while len(keys) < 2:
        keys.append(f"(none {len(keys)})")
    index = {key: i for i, key in enumerate(keys)}
    wins, ties = np.zeros((len(keys), len(keys))), np.zeros((len(keys), len(keys)))
    for (a, b, outcome), count in counts.items():
        i, j = index[a], index[b]
        if outcome == "a":
            wins[i, j] += count
        elif outcome == "b":
            wins[j, i] += count
        else:
            ties[i, j] += count
            ties[j, i] += count
    return pairing.state_from_counts(wins, ties), keys


def choose_slot(campaign: Campaign, candidates, rng: random.Random) -> int | None:
    """The pk of the open slot to hand out among `candidates` (a queryset of open
    assignments in batch order), or None when there is none."""
    import numpy as np

    from evalstats import pairing

    rows = list(candidates.values_list("pk", "batch_id")[:WINDOW])
    if not rows:
        return None
    first_slot = {}
    for pk, batch_id in rows:
        first_slot.setdefault(batch_id, pk)
    a_field, b_field = _meta_fields(campaign)
    items = Item.objects.filter(batch_id__in=list(first_slot), role=Item.Role.TASK).values_list(
        "batch_id", a_field, b_field
    )
    batch_pairs: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for batch_id, a, b in items:
        key = _pair_key(campaign, a, b)
        if key is not None:
            batch_pairs[batch_id].append(key)
    present = {key for pairs in batch_pairs.values() for pair in pairs for key in pair}
    state, keys = campaign_state(campaign, sorted(present))
    index = {key: i for i, key in enumerate(keys)}
    probabilities = pairing.pair_probabilities(state, level=campaign.separation_level)
    probabilities = probabilities + probabilities.T
    open_items = Counter(pair for pairs in batch_pairs.values() for pair in pairs)
    batches = list(first_slot)
    scores = np.array(
        [
            sum(
                probabilities[index[a], index[b]] / open_items[(a, b)]
                for a, b in batch_pairs.get(batch_id, [])
            )
            for batch_id in batches
        ]
    )
    if scores.sum() <= 0:
        return rows[0][0]
    generator = np.random.default_rng(rng.getrandbits(64))
    chosen = batches[int(generator.choice(len(batches), p=scores / scores.sum()))]
    return first_slot[chosen]


def stopping_status(campaign: Campaign) -> dict | None:
    """The stopping rule for the campaign page (None for kinds it does not apply to)."""
    if not supported(campaign):
        return None
    from evalstats import pairing

    counts = judged_pairs(campaign)
    judged = sum(counts.values())
    if not judged:
        return {
            "level": campaign.separation_level,
            "judgments": 0,
            "adjacent_pairs": 0,
            "separated_pairs": 0,
            "answered": False,
        }
    state, keys = campaign_state(campaign, counts=counts)
    separation = pairing.separation(state, campaign.separation_level)
    return {
        "level": campaign.separation_level,
        "judgments": judged,
        "adjacent_pairs": int(separation.separated.size),
        "separated_pairs": int(separation.separated.sum()),
        "answered": separation.answered,
        "order": [keys[i] for i in separation.order],
    }


def pause_if_answered(campaign_id: int) -> bool:
    """Pause a live campaign that asks for it once its ranking question is answered (the
    crowd platform's pause hook included: annotation.campaigns.change_status)."""
    from .campaigns import TransitionRefused, change_status

    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if not (
        campaign
        and campaign.pause_when_answered
        and campaign.status == Campaign.Status.LIVE
        and supported(campaign)
    ):
        return False
    status = stopping_status(campaign)
    if not (status and status["answered"]):
        return False
    try:
        change_status(campaign, "pause")
    except TransitionRefused:
        return False
    return True
