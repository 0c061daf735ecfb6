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
lower bound is above this one's upper bound (at least 2 for a provisional system);
``battles`` the counted battles the system was in; ``provisional`` fewer than the arena's
``provisional_battles`` of them or an interval wider than its ``provisional_width``
(provisional systems come after the others in ``systems``). ``win_rate``'s
row i, column j is the share of i's decisive battles against j that i won (null: none);
``pair_battles`` counts every battle between them, ties included. Votes count as in
Chatbot Arena: "A is better" and "B is better" are wins, "tie" and "both are bad" ties.
Flagged battles are left out when the arena says so (its default).

Variants (`compute_all`, computed by the same task, all at once: the arena's page shows
them side by side, and a request never computes): ``style`` (Chatbot Arena's style
control: the same contract plus ``style_coefficients``, over the battles with style
features), ``category:<name>`` (the battles of one category: arenas/categories.py and the
owner's `ArenaCategory`), and ``style,category:<name>``. The overall result lists the
categories with their battles (``categories``).
"""

from __future__ import annotations

import enum
import math

from django.conf import settings
from django.utils import timezone

from evalhub.models import System

from .categories import FIXED, BattleFacts, Rule, categories_of, looks_like_code
from .models import (
    Arena,
    ArenaCategory,
    Battle,
    BattleAnswer,
    BattleTurn,
    Leaderboard,
    LeaderboardVariant,
)
from .style import count_tokens

STYLE = "style"
# The style columns, in evalstats.style_control's order: answer tokens, then the markdown
# counts summed over their kinds (header levels, ordered + unordered, ** + __).
STYLE_GROUPS = ("header_count", "list_count", "bold_count")

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


class VariantState(enum.Enum):
    STORED = "stored"  # the last computation made it
    EMPTY = "empty"  # a known category the last computation found no battles in
    COMPUTING = "computing"  # not made yet: queued
    UNKNOWN = "unknown"  # no such category


def stored_variant(arena: Arena, style_control: bool, category: str) -> tuple[VariantState, dict]:
    """A variant as the last computation stored it; one it did not make yet (a category
    defined since) is answered as being computed (`pending`): the caller asks for it
    (arenas.leaderboard_queue.ask_for)."""
    from .categories import is_builtin

    key = variant_key(style_control, category)
    owned = bool(category) and ArenaCategory.objects.filter(arena=arena, name=category).exists()
    if category and not owned and not is_builtin(category):
        return VariantState.UNKNOWN, {}
    pending = arena.leaderboard_queued_at is not None
    stored = (
        LeaderboardVariant.objects.filter(arena=arena, key=key)
        .values_list("result", flat=True)
        .first()
    )
    if stored is not None:
        return VariantState.STORED, {**stored, "pending": pending}
    blank = {**empty_result(), "category": category or None, "style_control": style_control}
    if style_control:
        blank["style_coefficients"] = []
    computed = Leaderboard.objects.filter(arena=arena).exists()
    if computed and not owned and not pending:
        # A language nobody wrote in: the last computation had no battles for it.
        return VariantState.EMPTY, {**blank, "pending": False}
    if not computed and not arena.battles.exclude(vote="").exists():
        return VariantState.EMPTY, {**blank, "pending": False}
    return VariantState.COMPUTING, {**blank, "pending": True, "detail": "Being computed."}


def outcome_codes() -> dict[str, int]:
    """Each vote as `evalstats.pairwise`'s outcome code ("both are bad" is a tie)."""
    from evalstats.pairwise import A_WINS, B_WINS, TIE

    return {
        Battle.Vote.A_BETTER: A_WINS,
        Battle.Vote.B_BETTER: B_WINS,
        Battle.Vote.TIE: TIE,
        Battle.Vote.BOTH_BAD: TIE,
    }


def variant_key(style_control: bool, category: str = "") -> str:
    """ "" (overall), "style", "category:<name>" or "style,category:<name>"."""
    parts = ([STYLE] if style_control else []) + ([f"category:{category}"] if category else [])
    return ",".join(parts)


def _style_counts(tokens, style) -> list[int] | None:
    """[tokens, headers, list items, bold spans] of one side; None when not recorded."""
    if tokens is None or not style:
        return None
    counts = [int(tokens)]
    for group in STYLE_GROUPS:
        value = style.get(group, {})
        counts.append(sum(int(v) for v in value.values()) if isinstance(value, dict) else 0)
    return counts


def _texts(battles) -> tuple[dict, dict]:
    """Each battle's prompts (joined) and whether its answers hold code."""
    prompts: dict[int, list[str]] = {}
    for battle_id, prompt in (
        BattleTurn.objects.filter(battle__in=battles)
        .order_by("battle_id", "number")
        .values_list("battle_id", "prompt")
        .iterator(chunk_size=5_000)
    ):
        prompts.setdefault(battle_id, []).append(prompt)
    code: set[int] = set()
    answers = BattleAnswer.objects.filter(turn__battle__in=battles).values_list(
        "turn__battle_id", "text"
    )
    for battle_id, text in answers.iterator(chunk_size=5_000):
        if battle_id not in code and looks_like_code(text):
            code.add(battle_id)
    return {k: "\n\n".join(v) for k, v in prompts.items()}, code


def _facts(pk, language, turns, extra, prompts, answer_code) -> BattleFacts:
    prompt = prompts.get(pk, "")
    metadata = extra.get("conv_metadata") or {}
    user_tokens = metadata.get("sum_user_tokens")
    if not isinstance(user_tokens, int):
        user_tokens = count_tokens(prompt)
    code = extra.get("is_code")
    if not isinstance(code, bool):
        code = pk in answer_code or looks_like_code(prompt)
    return BattleFacts(language, turns, user_tokens, code, prompt)


def owner_rules(arena: Arena) -> list[Rule]:
    import re

    return [
        Rule(
            name=c.name,
            language=c.language,
            min_turns=c.min_turns,
            max_turns=c.max_turns,
            min_user_tokens=c.min_user_tokens,
            max_user_tokens=c.max_user_tokens,
            pattern=re.compile(c.prompt_pattern) if c.prompt_pattern else None,
        )
        for c in ArenaCategory.objects.filter(arena=arena)
    ]


def compute(arena: Arena) -> dict:
    """The overall leaderboard of `arena` now (see the module for the shape)."""
    return compute_all(arena)[""]


def compute_all(arena: Arena) -> dict[str, dict]:
    """Every variant of the arena's leaderboard now, by `variant_key`."""
    # The statistics are loaded by the task that computes, not when the site starts
    # (tests/evalhub/test_startup.py).
    import numpy as np

    codes = outcome_codes()
    counted = counted_battles(arena)
    prompts, answer_code = _texts(counted)
    rules = owner_rules(arena)
    rows = counted.values_list(
        "pk", "system_a_id", "system_b_id", "vote", "tokens_a", "tokens_b", "style_a",
        "style_b", "language", "turns", "extra",
    )  # fmt: skip
    a, b, outcome, style_a, style_b, member = [], [], [], [], [], []
    for pk, sa, sb, vote, ta, tb, fa, fb, language, turns, extra in rows.iterator(
        chunk_size=10_000
    ):
        a.append(sa)
        b.append(sb)
        outcome.append(codes[vote])
        style_a.append(_style_counts(ta, fa))
        style_b.append(_style_counts(tb, fb))
        facts = _facts(pk, language, turns, extra or {}, prompts, answer_code)
        member.append(categories_of(facts, rules))
    voted = arena.battles.exclude(vote="").exclude(source=Battle.Source.GOLD).count()
    base = {**empty_result(), "flagged_left_out": voted - len(a)}
    ids = sorted(set(a) | set(b))
    systems = {
        pk: (slug, name)
        for pk, slug, name in System.objects.filter(pk__in=ids).values_list("pk", "slug", "name")
    }
    battles = _Battles(
        np.array(a, dtype=np.int64),
        np.array(b, dtype=np.int64),
        np.array(outcome, dtype=np.int64),
        style_a,
        style_b,
    )
    names = {name for names in member for name in names}
    names |= set(FIXED) | {rule.name for rule in rules}
    results = {}
    everything = np.ones(len(a), dtype=bool)
    for category in ["", *sorted(names)]:
        chosen = everything if not category else np.array([category in m for m in member], bool)
        for style_control in (False, True):
            key = variant_key(style_control, category)
            results[key] = _board(arena, battles, chosen, style_control, systems, base)
            results[key].update(category=category or None, style_control=style_control)
    results[""]["categories"] = [
        {
            "name": name,
            "battles": results[variant_key(False, name)]["battles"],
            "builtin": name not in {rule.name for rule in rules},
        }
        for name in sorted(names)
    ]
    return results


class _Battles:
    def __init__(self, a, b, outcome, style_a, style_b):
        self.a, self.b, self.outcome = a, b, outcome
        self.style_a, self.style_b = style_a, style_b


def _board(arena, battles, chosen, style_control, systems, base) -> dict:
    """The leaderboard of the chosen battles (style-controlled: those with style features)."""
    import numpy as np

    from evalstats.arena import arena_leaderboard, arena_style_leaderboard, provisional_ranks
    from evalstats.style_control import STYLE_FEATURES

    result = {**base, "computed_at": timezone.now().isoformat()}
    warnings = []
    if style_control:
        styled = np.array(
            [
                x is not None and y is not None
                for x, y in zip(battles.style_a, battles.style_b, strict=True)
            ],
            dtype=bool,
        )
        missing = int((chosen & ~styled).sum())
        if missing:
            warnings.append(f"{missing} battles without style features left out")
        chosen = chosen & styled
        result["style_coefficients"] = []
    where = np.flatnonzero(chosen)
    result["battles"] = int(where.size)
    if where.size == 0:
        result["warnings"] = warnings
        return result
    a, b = battles.a[where], battles.b[where]
    ids = sorted(set(a.tolist()) | set(b.tolist()))
    position = {pk: i for i, pk in enumerate(ids)}
    index_a = np.array([position[x] for x in a.tolist()], dtype=np.int64)
    index_b = np.array([position[x] for x in b.tolist()], dtype=np.int64)
    outcome = battles.outcome[where]
    slugs = [systems[pk][0] for pk in ids]
    rounds = settings.EVALHUB_ARENA_BOOTSTRAP_ROUNDS
    if style_control:
        board = arena_style_leaderboard(
            index_a,
            index_b,
            outcome,
            np.array([battles.style_a[i] for i in where], dtype=float),
            np.array([battles.style_b[i] for i in where], dtype=float),
            len(ids),
            n_bootstrap=rounds,
            seed=len(where),
        )
        fit = board.style
        result["style_coefficients"] = [
            {
                "feature": feature,
                "coefficient": _rounded(fit.coefficients[c]),
                "lower": _rounded(fit.coefficients_lower[c]),
                "upper": _rounded(fit.coefficients_upper[c]),
            }
            for c, feature in enumerate(STYLE_FEATURES)
        ]
        result["bootstrap_method"] = fit.bootstrap_method
    else:
        board = arena_leaderboard(
            index_a,
            index_b,
            outcome,
            len(ids),
            n_bootstrap=rounds,
            confidence=0.95,
            seed=len(where),  # the same battles give the same intervals
            labels=slugs,
        )
    provisional, ranks = provisional_ranks(
        board.ranks,
        board.battles,
        board.lower,
        board.upper,
        min_battles=arena.provisional_battles,
        max_width=arena.provisional_width,
    )
    # Ranked systems first, then the provisional ones; each by rating.
    order = sorted(range(len(ids)), key=lambda i: (provisional[i], -board.ratings[i], slugs[i]))
    result["systems"] = [
        {
            "system": slugs[i],
            "name": systems[ids[i]][1],
            "rating": round(float(board.ratings[i]), 1),
            "lower": round(float(board.lower[i]), 1),
            "upper": round(float(board.upper[i]), 1),
            "rank": int(ranks[i]),
            "battles": int(board.battles[i]),
            "provisional": bool(provisional[i]),
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
    result["warnings"] = warnings + list(board.warnings)
    return result
