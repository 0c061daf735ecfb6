"""Spot The Bot packing: segments into batches (HITs) for annotation.

Invariants (tested with hypothesis):
- every segment is in exactly one batch, and no batch exceeds the batch size;
- no batch holds two segments of the same conversation;
- batches mix strata (system pair × segment length): a batch of two or more takes from a
  single stratum only when every other stratum's remaining segments belong to
  conversations the batch already holds.

The algorithm deals round-robin over strata, taking from each stratum the first segment
whose conversation the batch does not hold yet, so strata interleave and conversations
spread over batches. A pure function over plain tuples; add_items() calls it.
"""

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class Segment:
    conversation: str
    pair: str  # e.g. "bert_rank|blender" (sorted slugs), or "human|human"
    length: int  # exchanges


def pack_segments(segments: list[Segment], batch_size: int) -> list[list[int]]:
    """Indices of `segments` in batches of at most `batch_size`, under the invariants above."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    strata: dict[tuple[str, int], deque[int]] = {}
    for index, segment in enumerate(segments):
        strata.setdefault((segment.pair, segment.length), deque()).append(index)
    # Strata in a fixed order: deterministic output for the same input.
    order = deque(sorted(strata))
    batches: list[list[int]] = []
    while order:
        batch: list[int] = []
        held: set[str] = set()
        stalled = 0
        while order and len(batch) < batch_size and stalled < len(order):
            key = order[0]
            order.rotate(-1)
            queue = strata[key]
            pick = next((i for i in queue if segments[i].conversation not in held), None)
            if pick is None:
                stalled += 1
                continue
            stalled = 0
            queue.remove(pick)
            batch.append(pick)
            held.add(segments[pick].conversation)
            if not queue:
                order.remove(key)
        batches.append(batch)
    return batches
