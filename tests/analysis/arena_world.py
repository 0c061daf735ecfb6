"""An arena whose battles a fake judge (127.0.0.1) has judged, with a hand-computed answer.

Nine voted battles between x, y and z; the fake judge prefers the side whose answers hold
the marked word (tests/judging/arena_builders.py), so its verdicts are known in advance:

====  ======  ==========  ========  =====
 #    pair    vote        verdict   agree
====  ======  ==========  ========  =====
 1    x - y   a_better    a         yes
 2    y - z   b_better    b         yes
 3    x - z   a_better    b         no
 4    x - y   tie         tie       yes
 5    y - z   both_bad    tie       yes (both-bad is a tie)
 6    z - x   b_better    a         no
 7    x - y   a_better    a         yes
 8    x - y   a_better    skipped   (imported without text: not compared)
 9    y - x   a_better    a         yes
====  ======  ==========  ========  =====

Raw agreement 6 / 8 = 0.75. Votes a 4, b 2, tie 2; verdicts a 4, b 2, tie 2; chance
agreement (16 + 4 + 4) / 64 = 0.375; kappa (0.75 - 0.375) / (1 - 0.375) = 0.6.
Win rates (ties a half) by the votes: x 4.5/6, y 2/6, z 1.5/4; by the judge: x 2.5/6,
y 2/6, z 3.5/4.
"""

from judging import execution
from tests.judging import arena_builders as ab
from tests.judging.test_execution import fast_client

RAW_AGREEMENT = 0.75
KAPPA = 0.6
VOTE_WIN_RATES = {"x": 4.5 / 6, "y": 2 / 6, "z": 1.5 / 4}
JUDGE_WIN_RATES = {"x": 2.5 / 6, "y": 2 / 6, "z": 3.5 / 4}

BATTLES = [
    ("x", "y", "a_better", "a", 1),
    ("y", "z", "b_better", "b", 1),
    ("x", "z", "a_better", "b", 1),
    ("x", "y", "tie", None, 1),
    ("y", "z", "both_bad", None, 1),
    ("z", "x", "b_better", "a", 1),
    ("x", "y", "a_better", "a", 1),
    ("x", "y", "a_better", "a", 0),
    ("y", "x", "a_better", "a", 1),
]


def judged_arena(fake, owner, **arena_fields):
    """The arena (systems x, y, z by name: their slugs end in -x, -y, -z) and its judge run,
    executed against a fake judge; returns (arena, run, {name: slug})."""
    server = fake(ab.marked_judge())
    arena = ab.arena(owner, **arena_fields)
    systems = dict(zip("xyz", ab.systems_of(arena), strict=True))
    for a, b, vote, best, turns in BATTLES:
        ab.battle(arena, systems[a], systems[b], vote, best=best, turns=turns)
    run = ab.arena_run(server, arena)
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    return arena, run, {name: system.slug for name, system in systems.items()}
