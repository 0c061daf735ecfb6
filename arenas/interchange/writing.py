"""Storing imported battles: all of a file's, or none.

The file is checked whole first (arenas/interchange/reading.py), and the models it names
are matched with the catalog: a system the arena already has of that name, else the system
whose slug is the name's (`name_slug`: "Llama-3.1-405B" is llama-3-1-405b), which the
arena's owner may enter (their own, or a public one), else, with `create`, a new system of
the owner's, named exactly as the file names it. Any problem, of a line or a name, is an
`InvalidUpload` listing them with their lines, and nothing is stored. Then, in one
transaction, the systems are created and entered (without an endpoint: named by imported
battles only) and the battles stored; a battle the arena already has (its question_id, or
content hash) is left as it is, so importing a file again stores nothing new. The arena's
leaderboard is asked for when any battle was stored.

On PostgreSQL the one reading that checks the file also stages its battles by COPY, and a
few statements store them (arenas/interchange/copying.py: a million lines in well under a
minute); elsewhere (SQLite) the file is read a second time and stored in chunks through the
ORM.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import BinaryIO

from django.db import transaction
from django.utils import timezone

from evalhub.errors import Problem, Problems
from evalhub.importers.problems import InvalidUpload
from evalhub.models import System

from .. import leaderboard_queue
from ..models import Arena, ArenaSystem, Battle, BattleAnswer, BattleTurn, entry_problem
from . import copying, reading
from .rows import battle_values

CHUNK = 2000


@dataclass
class ImportResult:
    created: int = 0
    unchanged: int = 0
    systems_created: list[str] = field(default_factory=list)
    systems_entered: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Match:
    name: str
    slug: str
    system: System | None  # None: to be created


def match_models(
    arena: Arena, models: dict[str, int], create: bool
) -> tuple[list[_Match], Problems]:
    """Each model name of the file matched with a system (or one to create), and the
    problems of the names, on the first line naming each."""
    problems = Problems()
    entered: dict[str, list[System]] = {}
    for entry in arena.entries.select_related("system"):
        entered.setdefault(entry.system.name, []).append(entry.system)
    slugs = {reading.name_slug(name) for name in models}
    existing = {s.slug: s for s in System.objects.filter(slug__in=slugs)}
    matches, new_slugs = [], {}
    for name, line in sorted(models.items(), key=lambda item: item[1]):
        if len(entered.get(name, [])) == 1:
            matches.append(_Match(name, entered[name][0].slug, entered[name][0]))
            continue
        slug = reading.name_slug(name)
        if not slug:
            problems.append(Problem(line, f"model {name!r} has no letter or digit to name it by."))
            continue
        system = existing.get(slug)
        if system is not None:
            problem = entry_problem(arena, system, None)
            if problem:
                problems.append(Problem(line, f"model {name!r}: {problem}"))
            else:
                matches.append(_Match(name, slug, system))
            continue
        if not create:
            problems.append(
                Problem(
                    line,
                    f"no system {slug!r} for model {name!r}: create it (import with --create, "
                    "or create=true) or register it first.",
                )
            )
            continue
        if slug in new_slugs:
            problems.append(
                Problem(
                    line,
                    f"models {new_slugs[slug]!r} and {name!r} would both be the system {slug!r}.",
                )
            )
            continue
        new_slugs[slug] = name
        matches.append(_Match(name, slug, None))
    return matches, problems


def _systems(arena: Arena, matches: list[_Match], result: ImportResult) -> dict[str, System]:
    """The systems by model name, created and entered as needed."""
    visibility = System.Visibility.PUBLIC if arena.is_public() else System.Visibility.PRIVATE
    by_name = {}
    for match in matches:
        system = match.system
        if system is None:
            system = System.objects.create(
                slug=match.slug,
                name=match.name,
                owner=arena.owner,
                visibility=visibility,
                description=f"Created by an import of battles into the arena {arena.slug}.",
            )
            result.systems_created.append(system.slug)
        _, entered = ArenaSystem.objects.get_or_create(arena=arena, system=system)
        if entered:
            result.systems_entered.append(system.slug)
        by_name[match.name] = system
    return by_name


def _chunks(items: Iterable, size: int) -> Iterator[list]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _store(arena: Arena, chunk: list[reading.ParsedBattle], systems: dict[str, System]) -> int:
    known = set(
        arena.battles.filter(question_id__in=[b.question_id for b in chunk]).values_list(
            "question_id", flat=True
        )
    )
    fresh = [b for b in chunk if b.question_id not in known]
    now = timezone.now()
    rows = [
        Battle(
            arena=arena,
            system_a=systems[parsed.model_a],
            system_b=systems[parsed.model_b],
            source=Battle.Source.IMPORTED,
            voter_platform=Battle.Platform.IMPORTED,
            **battle_values(parsed, now),
        )
        for parsed in fresh
    ]
    Battle.objects.bulk_create(rows)
    turns, answers = [], []
    for battle, parsed in zip(rows, fresh, strict=True):
        for number, (prompt, text_a, text_b) in enumerate(parsed.exchanges, 1):
            turns.append(BattleTurn(battle=battle, number=number, prompt=prompt))
            answers.append((text_a, text_b))
    BattleTurn.objects.bulk_create(turns)
    BattleAnswer.objects.bulk_create(
        BattleAnswer(turn=turn, side=side, status=BattleAnswer.Status.DONE, text=text)
        for turn, pair in zip(turns, answers, strict=True)
        for side, text in zip(("a", "b"), pair, strict=True)
    )
    return len(rows)


def import_battles(arena: Arena, stream: BinaryIO, *, create: bool = False) -> ImportResult:
    """Check the whole file, then store every battle of it the arena does not have yet."""
    with transaction.atomic():
        if copying.available():
            # PostgreSQL: the checked battles are staged by COPY during the one reading.
            with copying.Staging() as staging:
                checked = reading.check(stream, take=staging.take)
                staging.finish_copy()  # the connection is free for other queries again
                systems, result = _prepared(arena, checked, create)
                result.created = staging.store(arena, systems)
                result.unchanged = checked.battles - result.created
        else:
            checked = reading.check(stream)
            systems, result = _prepared(arena, checked, create)
            for chunk in _chunks(reading.battles(stream), CHUNK):
                stored = _store(arena, chunk, systems)
                result.created += stored
                result.unchanged += len(chunk) - stored
        if result.created:
            leaderboard_queue.vote_arrived(arena)
    return result


def _prepared(
    arena: Arena, checked: reading.Checked, create: bool
) -> tuple[dict[str, System], ImportResult]:
    """The systems by model name, matched, created and entered; or InvalidUpload with every
    problem of the file and its names (then the caller's transaction stores nothing)."""
    matches, name_problems = match_models(arena, checked.models, create)
    problems = Problems()
    problems.extend(checked.problems)
    problems.extend(name_problems)
    if problems:
        ordered = Problems(sorted(problems.kept, key=lambda p: p.line or 0))
        ordered.total = problems.total
        raise InvalidUpload(ordered)
    result = ImportResult()
    return _systems(arena, matches, result), result
