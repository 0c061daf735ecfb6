"""Who talks to whom: the dialogue collection schedules of the bipartite-play paper (Sato,
Kishinami, Sugiyama, Akama, Tokuhisa & Suzuki, 2022, "Bipartite-play Dialogue Collection for
Practical Automatic Evaluation of Dialogue Systems"), as pure functions over system slugs.

With i evaluation targets, j conversations per pairing and k fixed partners:
- self-play: every target talks to itself, i × 1 × j conversations;
- all-play-all: every ordered pair of distinct targets (both speaker orders), i × (i-1) × j;
- bipartite-play: every target talks to every partner of a fixed, shared partner set,
  the target speaking first, i × k × j.
Each planned conversation carries a seed derived from the base seed, the pairing and its
index, so that a plan is reproducible and one conversation can be re-run on its own.
"""

import hashlib
from dataclasses import dataclass
from itertools import permutations


@dataclass(frozen=True)
class PlannedConversation:
    speakers: tuple[str, str]  # system slugs; the first speaks first
    index: int  # 0-based: the index-th conversation of this pairing
    seed: int

    @property
    def key(self) -> str:
        """A stable identifier of this conversation within a plan."""
        return f"{self.speakers[0]}--{self.speakers[1]}--{self.index}"


def conversation_seed(base_seed: int, speakers: tuple[str, str], index: int) -> int:
    digest = hashlib.sha256(f"{base_seed}|{speakers[0]}|{speakers[1]}|{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1  # fits a signed 64-bit column


def _check(names: list[str], what: str) -> None:
    if len(set(names)) != len(names):
        raise ValueError(f"{what} contain duplicates: {sorted(names)}")


def _plan(pairings, per_pairing: int, seed: int) -> list[PlannedConversation]:
    if per_pairing < 1:
        raise ValueError("at least one conversation per pairing is needed")
    return [
        PlannedConversation(pair, index, conversation_seed(seed, pair, index))
        for pair in pairings
        for index in range(per_pairing)
    ]


def self_play(targets: list[str], per_pairing: int, seed: int = 0) -> list[PlannedConversation]:
    _check(targets, "targets")
    return _plan([(t, t) for t in targets], per_pairing, seed)


def all_play_all(targets: list[str], per_pairing: int, seed: int = 0) -> list[PlannedConversation]:
    _check(targets, "targets")
    if len(targets) < 2:
        raise ValueError("all-play-all needs at least two targets")
    return _plan(list(permutations(targets, 2)), per_pairing, seed)


def bipartite_play(
    targets: list[str], partners: list[str], per_pairing: int, seed: int = 0
) -> list[PlannedConversation]:
    _check(targets, "targets")
    _check(partners, "partners")
    if not partners:
        raise ValueError("bipartite-play needs at least one partner")
    overlap = set(targets) & set(partners)
    if overlap:
        raise ValueError(f"partners must be separate from the targets: {sorted(overlap)}")
    return _plan([(t, p) for t in targets for p in partners], per_pairing, seed)


def pairing_count(kind: str, targets: list[str], partners: list[str] | None = None) -> int:
    """How many pairings `kind` makes, with the same checks as the schedule itself but
    without listing them: the size of a plan is known before anything is built."""
    _check(targets, "targets")
    if kind == "self-play":
        return len(targets)
    if kind == "all-play-all":
        if len(targets) < 2:
            raise ValueError("all-play-all needs at least two targets")
        return len(targets) * (len(targets) - 1)
    if kind == "bipartite-play":
        partners = partners or []
        _check(partners, "partners")
        if not partners:
            raise ValueError("bipartite-play needs at least one partner")
        overlap = set(targets) & set(partners)
        if overlap:
            raise ValueError(f"partners must be separate from the targets: {sorted(overlap)}")
        return len(targets) * len(partners)
    raise ValueError(f"unknown schedule {kind!r}")
