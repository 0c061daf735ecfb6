"""As-soon-as-possible wave schedule of sequential two-player updates, over many rows at once.

A TrueSkill update of one match reads and writes the ratings of its two players only, so two
matches of one pass without a common player commute exactly: either order computes the same
numbers from the same numbers. A pass can therefore be run wave by wave instead of match by
match, where a match's wave is one more than the last wave of either of its players::

    wave(m) = max(next_free[first(m)], next_free[second(m)])
    next_free[first(m)] = next_free[second(m)] = wave(m) + 1

Matches of one wave have disjoint players, and every match runs after all earlier matches that
share a player, so wave by wave gives bitwise the same ratings as the sequential order. No
exact schedule has fewer steps: matches sharing a player must keep their order, and this
schedule's depth is the longest such chain. For random pairs among 10 systems that is about
0.47 waves per match, so lockstep passes take half as many steps, each twice as wide.

Rows (replicates) are independent and use disjoint rating slots, so a step holds the entries of
one wave of every row.
"""

from __future__ import annotations

import numpy as np

__all__ = ["WaveSchedule", "WaveScheduler", "match_waves"]

# entry numbers are packed below the sort key in one int64
_ENTRY_BITS = 32


def match_waves(first, second, n_slots: int, out=None):
    """Wave number (0 = first) of every entry of ``(positions, rows)`` slot arrays.

    ``first[p, r]`` and ``second[p, r]`` are the two rating slots updated by row r at position
    p; slots of different rows must differ. Rows advance together: each position costs a few
    numpy calls over the rows. ``out``: an int16 or int32 array of the same shape.
    """
    n_positions = first.shape[0]
    waves = np.empty(first.shape, dtype=_wave_dtype(n_positions)) if out is None else out
    next_free = np.zeros(n_slots, dtype=waves.dtype)
    for p in range(n_positions):
        f, s = first[p], second[p]
        wave = np.maximum(next_free.take(f), next_free.take(s), out=waves[p])
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


class WaveScheduler:
    """Wave schedules of successive blocks, in buffers reused from block to block.

    Fresh multi-megabyte temporaries cost a page fault per 4 KiB on every block, which was as
    much as the scheduling itself; so the block-sized arrays are kept and written in place.
    """

    def __init__(self, n_slots: int):
        self.n_slots = n_slots
        self._buffers = {}

    def buffer(self, name, shape, dtype):
        """A reusable array of this shape and dtype (contents undefined)."""
        size = int(np.prod(shape))
        dtype = np.dtype(dtype)
        held = self._buffers.get(name)
        if held is None or held.size < size or held.dtype != dtype:
            held = self._buffers[name] = np.empty(size, dtype=dtype)
        return held[:size].reshape(shape)

    def schedule(self, first, second, drawn, active=None) -> WaveSchedule:
        """Schedule of the entries of ``(positions, rows)`` arrays (see the module docstring).

        ``active[p, r]`` (None: all) is False for positions past the end of row r; those must
        come after all of the row's active positions (they are left out of the schedule).
        ``drawn`` is a bool or 0/1 integer array.
        """
        shape = first.shape
        n = first.size
        if n >= 1 << _ENTRY_BITS:
            raise ValueError("block too large")
        waves = match_waves(
            first,
            second,
            self.n_slots,
            out=self.buffer("waves", shape, _wave_dtype(shape[0])),
        )
        n_waves = (
            int(waves.max(where=active, initial=-1) if active is not None else waves.max()) + 1
        )
        # key 2w for a draw, 2w + 1 for a win of wave w, 2 n_waves for inactive entries; the
        # entry number below it makes every value distinct, so any sort gives the same order
        packed = self.buffer("packed", shape, np.int64)
        np.copyto(packed, waves)
        packed *= 2
        packed += 1
        packed -= drawn
        if active is not None:
            np.copyto(packed, 2 * n_waves, where=~active)
        packed = packed.ravel()
        packed <<= _ENTRY_BITS
        packed |= self._entries(n)
        packed.sort()
        bounds = np.searchsorted(packed, np.arange(2 * n_waves + 1) << _ENTRY_BITS).tolist()
        order = self.buffer("order", bounds[-1], np.intp)
        np.bitwise_and(packed[: bounds[-1]], (1 << _ENTRY_BITS) - 1, out=order)
        starts = bounds[::2]
        n_draws = [mid - lo for lo, mid in zip(bounds[::2], bounds[1::2], strict=False)]
        return WaveSchedule(order, starts, n_draws)

    def _entries(self, n):
        entries = self._buffers.get("entries")
        if entries is None or entries.size < n:
            entries = self._buffers["entries"] = np.arange(n, dtype=np.int64)
        return entries[:n]


def _wave_dtype(largest: int):
    return np.int16 if largest < np.iinfo(np.int16).max else np.int32
