"""The Spot The Bot packer keeps every invariant on random tournaments."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments.packing import Segment, pack_segments


@st.composite
def tournaments(draw):
    n_pairs = draw(st.integers(1, 5))
    lengths = draw(st.lists(st.sampled_from([1, 2, 3, 5]), min_size=1, max_size=3, unique=True))
    segments = []
    for p in range(n_pairs):
        for c in range(draw(st.integers(1, 8))):
            for k in draw(
                st.lists(st.sampled_from(lengths), min_size=1, max_size=len(lengths), unique=True)
            ):
                segments.append(Segment(f"p{p}-c{c}", f"pair{p}", k))
    order = draw(st.permutations(range(len(segments))))
    return [segments[i] for i in order], draw(st.integers(1, 25))


@settings(max_examples=200, deadline=None)
@given(tournaments())
def test_invariants(case):
    segments, batch_size = case
    batches = pack_segments(segments, batch_size)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(len(segments)))
    left = set(range(len(segments)))
    for batch in batches:
        assert 1 <= len(batch) <= batch_size
        conversations = {segments[i].conversation for i in batch}
        assert len(conversations) == len(batch)
        strata_here = {(segments[i].pair, segments[i].length) for i in batch}
        if len(batch) > 1 and len(strata_here) == 1:
            # Mixing was impossible only if every other stratum's remaining segments
            # belong to conversations this batch already holds.
            others = [
                i
                for i in left
                if (segments[i].pair, segments[i].length) not in strata_here
                and segments[i].conversation not in conversations
            ]
            assert not others, "a batch took from one stratum while it could have mixed"
        left -= set(batch)


def test_a_worked_example():
    segments = [
        Segment("a", "x|y", 2),
        Segment("a", "x|y", 3),
        Segment("b", "x|z", 2),
        Segment("b", "x|z", 3),
        Segment("h", "human|human", 2),
    ]
    # Strata in sorted order: human|human·2, x|y·2, x|y·3, x|z·2, x|z·3. Batch 1 takes
    # h, a·2, skips a·3 (conversation a is held), takes b·2 and is full; the dealing goes
    # on where it stopped: b·3, then a·3.
    assert pack_segments(segments, 3) == [[4, 0, 2], [3, 1]]


def test_deterministic():
    segments = [Segment(f"c{i % 7}", f"p{i % 3}", 2 + i % 2) for i in range(40)]
    assert pack_segments(segments, 6) == pack_segments(list(segments), 6)
