"""Collection plans: rows per schedule, idempotency, endpoint checks, bulk insert."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from endpoints.models import BotEndpoint
from tests import factories
from tournaments import schedule
from tournaments.models import PartnerSet, PlannedDialogue, Tournament
from tournaments.plan import PlanInvalid, make_plan

pytestmark = pytest.mark.django_db


def bot(slug: str, *, endpoint: bool = True):
    system = factories.system(None, slug=slug)
    if endpoint:
        BotEndpoint.objects.create(system=system, url=f"http://127.0.0.1:9/{slug}")
    return system


def tournament(kind, targets, *, partners=None, per_pair=2, seed=11, slug="cup"):
    t = Tournament.objects.create(
        slug=slug,
        name=slug,
        kind="spot_the_bot",
        schedule=kind,
        domain="chitchat",
        conversations_per_pair=per_pair,
        seed=seed,
    )
    t.systems.set(targets)
    if partners is not None:
        partner_set = PartnerSet.objects.create(slug=f"{slug}-partners", name="Partners")
        partner_set.systems.set(partners)
        t.partner_set = partner_set
        t.save()
    return t


def rows(t):
    return {(p.key, tuple(p.speakers), p.index, p.seed, p.status) for p in t.plan.all()}


def expected(planned):
    return {(p.key, p.speakers, p.index, p.seed, "pending") for p in planned}


def test_all_play_all_plans_every_ordered_pair():
    t = tournament("all-play-all", [bot("a"), bot("b"), bot("c")], per_pair=2)
    assert make_plan(t) == 3 * 2 * 2
    assert rows(t) == expected(schedule.all_play_all(["a", "b", "c"], 2, seed=11))


def test_self_play_plans_each_target_with_itself():
    t = tournament("self-play", [bot("a"), bot("b"), bot("c")], per_pair=2)
    assert make_plan(t) == 3 * 1 * 2
    assert rows(t) == expected(schedule.self_play(["a", "b", "c"], 2, seed=11))


def test_bipartite_play_plans_targets_against_the_partner_set():
    t = tournament(
        "bipartite-play", [bot("t1"), bot("t2")], partners=[bot("p1"), bot("p2"), bot("p3")]
    )
    assert make_plan(t) == 2 * 3 * 2
    assert rows(t) == expected(schedule.bipartite_play(["t1", "t2"], ["p1", "p2", "p3"], 2, 11))
    assert {p.speakers[0] for p in t.plan.all()} == {"t1", "t2"}  # targets speak first


def test_it_is_idempotent_and_adds_only_what_is_missing():
    t = tournament("all-play-all", [bot("a"), bot("b"), bot("c")], per_pair=2)
    assert make_plan(t) == 12
    PlannedDialogue.objects.filter(key="a--b--0").update(status="complete", attempts=1)
    assert make_plan(t) == 0
    assert t.plan.count() == 12
    t.systems.add(bot("d"))
    assert make_plan(t) == 4 * 3 * 2 - 12
    assert t.plan.count() == 24
    assert t.plan.get(key="a--b--0").status == "complete"  # existing rows are left alone


def test_it_names_every_speaker_without_an_endpoint():
    t = tournament(
        "bipartite-play",
        [bot("t1"), bot("zeta", endpoint=False)],
        partners=[bot("p1"), bot("gamma", endpoint=False)],
    )
    with pytest.raises(PlanInvalid, match="no bot endpoint.*: gamma, zeta\\. Register"):
        make_plan(t)
    assert not t.plan.exists()


def test_bipartite_play_needs_a_partner_set():
    t = tournament("bipartite-play", [bot("t1")])
    with pytest.raises(PlanInvalid, match="needs a partner set"):
        make_plan(t)


def test_partners_must_not_be_targets():
    shared = bot("shared")
    t = tournament("bipartite-play", [bot("t1"), shared], partners=[shared, bot("p1")])
    with pytest.raises(PlanInvalid, match="partners must be separate from the targets"):
        make_plan(t)


def test_all_play_all_needs_two_targets():
    t = tournament("all-play-all", [bot("alone")])
    with pytest.raises(PlanInvalid, match="at least two targets"):
        make_plan(t)


def test_an_imported_tournament_has_nothing_to_collect():
    t = tournament("imported", [bot("a"), bot("b")])
    with pytest.raises(PlanInvalid, match="imported, not collected"):
        make_plan(t)


def test_a_plan_needs_at_least_one_exchange():
    # Issue 9: zero exchanges cannot even be stored now (tournament_exchanges_range).
    t = tournament("self-play", [bot("a")])
    t.exchanges = 0
    with pytest.raises(IntegrityError, match="tournament_exchanges_range"), transaction.atomic():
        t.save()
    assert not PlannedDialogue.objects.exists()


def test_the_seed_changes_every_conversation_seed():
    one = tournament("self-play", [bot("a")], per_pair=3, seed=1, slug="one")
    two = tournament("self-play", list(one.systems.all()), per_pair=3, seed=2, slug="two")
    make_plan(one), make_plan(two)
    seeds_one = set(one.plan.values_list("seed", flat=True))
    seeds_two = set(two.plan.values_list("seed", flat=True))
    assert len(seeds_one) == 3 and not seeds_one & seeds_two


def test_rows_are_inserted_in_bulk():
    t = tournament("all-play-all", [bot(f"s{i}") for i in range(8)], per_pair=10)
    with CaptureQueriesContext(connection) as captured:
        assert make_plan(t) == 8 * 7 * 10
    inserts = [q for q in captured.captured_queries if q["sql"].lstrip().startswith("INSERT")]
    # SQLite caps the parameters of one statement (about 100 rows here); PostgreSQL takes 500.
    assert len(inserts) <= 8 * 7 * 10 // 50
    assert len(captured.captured_queries) - len(inserts) <= 6
