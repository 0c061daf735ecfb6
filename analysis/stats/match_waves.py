"""As-soon-as-possible wave schedule of sequential two-player updates, over many rows at once.

A TrueSkill update of one match reads and writes the ratings of its two players only, so two
matches of one pass without a common player commute exactly: either order computes the same
numbers from the same numbers. A pass can therefore be run wave by wave instead of match by
match, where a match's wave is one more than the last wave of either of its players::

    wave(m) = max(next_free[first(m)], next_free[second(m)])
    next_free[first(m)] = next_free[second(m)] = wave(m) + 1

Matches of one wave have disjoint players, and every match runs after all earlier matches that
share a player, so wave by wave gives bitwise the same ratings as the sequential order. With
k players about k/2 matches fit in a wave at best; random tournaments among 10 systems need
roughly one wave per 3-4 matches, so lockstep passes take 3-4 times fewer, wider steps, and
the fixed cost of each numpy call is spread over 3-4 times more elements.

Rows (replicates) are independent and use disjoint rating slots, so a step holds the entries of
one wave of every row.
"""

from __future__ import annotations

import numpy as np

__all__ = ["WaveSchedule", "match_waves", "wave_schedule"]


def match_waves(first, second, n_slots: int):
    """Wave number (0 = first) of every entry of ``(positions, rows)`` slot arrays.

    ``first[p, r]`` and ``second[p, r]`` are the two rating slots updated by row r at position
    p; slots of different rows must differ. Rows advance together: each position costs a few
    numpy calls over the rows.
    """
    n_positions = first.shape[0]
    dtype = _wave_dtype(n_positions)
    next_free = np.zeros(n_slots, dtype=dtype)
    waves = np.empty(first.shape, dtype=dtype)
    for p in range(n_positions):
        f, s = first[p], second[p]
        wave = np.maximum(next_free[f], next_free[s], out=waves[p])
        after = wave + 1
        next_free[f] = after
        next_free[s] = after
    return waves


class WaveSchedule:
    """The entries of a ``(positions, rows)`` block in wave order, draws first in each wave.

    ``order`` lists the flat (C-order) indices of the active entries step after step; step i
    is ``order[starts[i]:starts[i + 1]]``, its first ``n_draws[i]`` entries being draws
    (the corrections work on contiguous draw and win slices).
    """

    def __init__(self, order, starts, n_draws):
        self.order = order
        self.starts = starts
        self.n_draws = n_draws

    def __len__(self):
        return len(self.n_draws)

    def steps(self):
        """``(start, stop, n_draws)`` of each step, as Python ints."""
        return zip(self.starts[:-1], self.starts[1:], self.n_draws, strict=True)

    def drawn(self):
        """Whether each entry of ``order`` is a draw."""
        pattern = np.tile([True, False], len(self))
        counts = np.column_stack([self.n_draws, np.diff(self.starts) - self.n_draws]).ravel()
        return np.repeat(pattern, counts)


def wave_schedule(first, second, drawn, active, n_slots: int) -> WaveSchedule:
    """Schedule of the active entries of ``(positions, rows)`` arrays (see the module docstring).

    ``active[p, r]`` is False for positions past the end of row r; those must come after all of
    the row's active positions (they are left out of the schedule).
    """
    waves = match_waves(first, second, n_slots)
    n_waves = int(waves[active].max(initial=-1)) + 1
    # key 2w for a draw, 2w + 1 for a win of wave w, 2 n_waves for inactive entries
    dtype = _wave_dtype(2 * n_waves + 1)
    keys = waves.astype(dtype)
    keys *= 2
    keys += ~drawn
    keys[~active] = 2 * n_waves
    keys = keys.ravel()
    # a stable sort of small integers is a radix sort in numpy
    order = np.argsort(keys, kind="stable")
    counts = np.bincount(keys, minlength=2 * n_waves + 1)[: 2 * n_waves]
    bounds = np.concatenate(([0], np.cumsum(counts)))
    order = order[: bounds[-1]]
    return WaveSchedule(order, bounds[::2].tolist(), counts[::2].tolist())


def _wave_dtype(largest: int):
    return np.int16 if largest < np.iinfo(np.int16).max else np.int32
