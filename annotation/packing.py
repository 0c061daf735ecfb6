"""Group items into batches of a given size so that no batch holds two items of one group.

A pure function: it sees only group keys, and returns lists of indices. Items are spread
round-robin over their groups, which also mixes systems and segment lengths when the keys
and the input order carry them (the tournament packer refines this for Spot The Bot).
"""

from collections import defaultdict, deque


def pack_batches(group_keys: list[str], batch_size: int) -> list[list[int]]:
    """Indices of the items, in batches of at most `batch_size`, no group twice in a batch.

    Items with an empty key are in no group. A batch is closed early only when every item
    left belongs to a group it already holds.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    queues: dict[str, deque[int]] = defaultdict(deque)
    loners: deque[int] = deque()
    for index, key in enumerate(group_keys):
        (queues[key] if key else loners).append(index)
    # Largest groups first, so that they are spread over as many batches as possible.
    order = deque(sorted(queues, key=lambda k: (-len(queues[k]), k)))
    batches: list[list[int]] = []
    while order or loners:
        batch: list[int] = []
        for _ in range(len(order)):
            if len(batch) == batch_size:
                break
            key = order.popleft()
            batch.append(queues[key].popleft())
            if queues[key]:
                order.append(key)
        while loners and len(batch) < batch_size:
            batch.append(loners.popleft())
        batches.append(batch)
    return batches
