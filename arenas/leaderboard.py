"""An arena's leaderboard: its voted battles to the API's JSON, through evalstats.arena.

The result (`GET /api/arenas/<slug>/leaderboard/`, and the arena's page):

    {"systems": [{"system": slug, "name", "rating", "lower", "upper", "rank", "battles",
                  "provisional"}, ...],            # best rating first
     "win_rate": {"systems": [slug, ...], "matrix": [[share or null, ...], ...]},
     "pair_battles": {"systems": [slug, ...], "matrix": [[count, ...], ...]},
     "battles": N, "flagged_left_out": M, "confidence": 0.95, "bootstrap_rounds": R,
     "scale": "...", "warnings": [...], "computed_at": ISO time, "pending": bool}

``rating`` is Bradley-Terry on Chatbot Arena's Elo-like scale (mean 1000, 400 points for
10:1 odds); ``lower``/``upper`` the 95% bootstrap interval; ``rank`` 1 + the systems whose
lower bound is above this one's upper bound; ``battles`` the counted battles the system was
in; ``provisional`` fewer than EVALHUB_ARENA_PROVISIONAL_BATTLES of them. ``win_rate``'s
row i, column j is the share of i's decisive battles against j that i won (null: none);
``pair_battles`` counts every battle between them, ties included. Votes count as in
Chatbot Arena: "A is better" and "B is better" are wins, "tie" and "both are bad" ties.
Flagged battles are left out when the arena says so (its default).
"""

from __future__ import annotations

import math

from django.conf import settings
from django.utils import timezone

from evalhub.models import System

from .models import Arena, Battle, Leaderboard

SCALE = "Bradley-Terry, Elo-like: mean 1000, 400 points for 10:1 odds"


def counted_battles(arena: Arena):
    voted = arena.battles.exclude(vote="").exclude(source=Battle.Source.GOLD)
    return voted.filter(flags=[]) if arena.exclude_flagged else voted


def _rounded(value: float) -> float | None:
    return None if value is None or math.isnan(value) else round(float(value), 4)


def empty_result() -> dict:
    return {
        "systems": [],
        "win_rate": {"systems": [], "matrix": []},
        "pair_battles": {"systems": [], "matrix": []},
        "battles": 0,
        "flagged_left_out": 0,
        "confidence": 0.95,
        "bootstrap_rounds": settings.EVALHUB_ARENA_BOOTSTRAP_ROUNDS,
        "scale": SCALE,
        "warnings": [],
        "computed_at": None,
    }


def stored_result(arena: Arena) -> dict:
    """What the last computation stored (the empty leaderboard before the first), and
    whether a newer one is queued (`pending`)."""
    stored = Leaderboard.objects.filter(arena=arena).values_list("result", flat=True).first()
    result = stored or empty_result()
    return {**result, "pending": arena.leaderboard_queued_at is not None}


def outcome_codes() -> dict[str, int]:
    """Each vote as `evalstats.pairwise`'s outcome code ("both are bad" is a tie)."""
    from evalstats.pairwise import A_WINS, B_WINS, TIE

    return {
        Battle.Vote.A_BETTER: A_WINS,
        Battle.Vote.B_BETTER: B_WINS,
        Battle.Vote.TIE: TIE,
        Battle.Vote.BOTH_BAD: TIE,
    }


def compute(arena: Arena) -> dict:
    """The leaderboard of `arena` now (see the module for the shape)."""
    # The statistics are loaded by the task that computes, not when the site starts
    # (tests/evalhub/test_startup.py).
    import numpy as np

    from evalstats.arena import arena_leaderboard

    codes = outcome_codes()
    index: dict[int, int] = {}
    a, b, outcome = [], [], []
    rows = counted_battles(arena).values_list("system_a_id", "system_b_id", "vote")
    for system_a, system_b, vote in rows.iterator(chunk_size=10_000):
        a.append(index.setdefault(system_a, len(index)))
        b.append(index.setdefault(system_b, len(index)))
        outcome.append(codes[vote])
    voted = arena.battles.exclude(vote="").exclude(source=Battle.Source.GOLD).count()
    result = {
        **empty_result(),
        "battles": len(a),
        "flagged_left_out": voted - len(a),
        "computed_at": timezone.now().isoformat(),
    }
    if not a:
        return result
    ids = list(index)
    names = dict(System.objects.filter(pk__in=ids).values_list("pk", "slug"))
    titles = dict(System.objects.filter(pk__in=ids).values_list("pk", "name"))
    slugs = [names[pk] for pk in ids]
    board = arena_leaderboard(
        np.array(a, dtype=np.int64),
        np.array(b, dtype=np.int64),
        np.array(outcome, dtype=np.int64),
        len(ids),
        n_bootstrap=settings.EVALHUB_ARENA_BOOTSTRAP_ROUNDS,
        confidence=0.95,
        seed=len(a),  # the same battles give the same intervals
        labels=slugs,
    )
    order = sorted(range(len(ids)), key=lambda i: (-board.ratings[i], slugs[i]))
    threshold = settings.EVALHUB_ARENA_PROVISIONAL_BATTLES
    result["systems"] = [
        {
            "system": slugs[i],
            "name": titles[ids[i]],
            "rating": round(float(board.ratings[i]), 1),
            "lower": round(float(board.lower[i]), 1),
            "upper": round(float(board.upper[i]), 1),
            "rank": int(board.ranks[i]),
            "battles": int(board.battles[i]),
            "provisional": int(board.battles[i]) < threshold,
        }
        for i in order
    ]
    ordered = [slugs[i] for i in order]
    result["win_rate"] = {
        "systems": ordered,
        "matrix": [[_rounded(board.win_rate[i, j]) for j in order] for i in order],
    }
    result["pair_battles"] = {
        "systems": ordered,
        "matrix": [[int(board.pair_battles[i, j]) for j in order] for i in order],
    }
    result["warnings"] = list(board.warnings)
    return result
