"""A judge run over an arena's battles (judging/battles.py, through judging/execution.py and
judging/runs.py) against a fake OpenAI-compatible judge on 127.0.0.1: both conversations
sent in a random order, the verdict in the battle's sides, battles without text skipped
with the reason, each verdict stored once on resume, the budget, and who may start one."""

import pytest
from django.urls import reverse

from judging import battles, execution, runs
from judging.models import AutomaticJudgment, JudgeRun
from tests import factories
from tests.judging import arena_builders as ab
from tests.judging import builders, fake_judges
from tests.judging.test_execution import fast_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return factories.user()


def test_each_voted_battle_is_judged_on_both_whole_conversations(fake, owner):
    server = fake(ab.marked_judge())
    arena = ab.arena(owner)
    x, y, z = ab.systems_of(arena)
    won_by_a = ab.battle(arena, x, y, "a_better", best="a")
    won_by_b = ab.battle(arena, y, z, "tie", best="b")
    even = ab.battle(arena, x, z, "both_bad", best=None)
    ab.battle(arena, x, y, vote="", best="a")  # not voted: not judged
    run = ab.arena_run(server, arena)
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    run.refresh_from_db()
    assert (run.status, run.items_total, run.items_done, run.items_failed) == ("done", 3, 3, 0)
    assert (run.prompt_tokens, run.completion_tokens) == (600, 18)
    verdicts = {j.battle_id: j.payload["choice"] for j in run.judgments.all()}
    assert verdicts == {won_by_a.pk: "a", won_by_b.pk: "b", even.pk: "tie"}
    assert all(j.item_id is None and j.status == "ok" for j in run.judgments.all())
    assert len(server.requests) == 3
    prompt = fake_judges.prompt_of(server.requests[0])
    # Both turns of both sides, each side's answers in its own conversation.
    for number in (1, 2):
        assert prompt.count(f"User: Question {number}?") == 2
        assert f"Answer {number} of a" in prompt and f"Answer {number} of b" in prompt
    assert "2 user turns" in prompt


def test_gold_battles_are_never_judged(owner):
    from arenas.models import Battle

    arena = ab.arena(owner)
    x, y, _ = ab.systems_of(arena)
    live = ab.battle(arena, x, y, "a_better")
    gold = ab.battle(arena, x, y, "b_better")
    Battle.objects.filter(pk=gold.pk).update(source=Battle.Source.GOLD)

    assert list(battles.judgeable_battles(arena)) == [live]


def test_the_side_shown_first_is_drawn_per_battle_and_kept_in_the_payload(fake, owner):
    server = fake(ab.marked_judge())
    arena = ab.arena(owner)
    x, y, _ = ab.systems_of(arena)
    made = [ab.battle(arena, x, y, best="a", turns=1) for _ in range(16)]
    run = ab.arena_run(server, arena)
    execution.execute(run.pk, client_factory=fast_client())
    judgments = {j.battle_id: j.payload for j in run.judgments.all()}
    firsts = [judgments[b.pk]["first"] for b in made]
    assert firsts == [battles.first_side(run.pk, b.pk) for b in made]
    assert set(firsts) == {"a", "b"}  # both orders occur (16 draws)
    # Whatever the order, the verdict is in the battle's own sides.
    assert {p["choice"] for p in judgments.values()} == {"a"}
    for request in server.requests:
        first, _, second = fake_judges.prompt_of(request).partition("Conversation 2:")
        assert ab.BEST in first or ab.BEST in second


def test_a_battle_without_text_is_skipped_with_the_reason_and_no_request(fake, owner):
    server = fake(ab.marked_judge())
    arena = ab.arena(owner)
    x, y, _ = ab.systems_of(arena)
    imported = ab.battle(arena, x, y, "b_better", turns=0)
    judged = ab.battle(arena, x, y, "a_better", best="a")
    run = ab.arena_run(server, arena)
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    run.refresh_from_db()
    assert (run.items_done, run.items_failed, run.items_skipped, run.percent) == (1, 0, 1, 100)
    skipped = run.judgments.get(battle=imported)
    assert (skipped.status, skipped.payload, skipped.attempts) == ("skipped", {}, 0)
    assert skipped.error == (
        "The battle has no conversation text (imported without it): nothing to judge."
    )
    assert run.judgments.get(battle=judged).status == "ok"
    assert len(server.requests) == 1
    assert runs.progress(run)["items_skipped"] == 1


def test_a_slice_spent_skipping_battles_queues_the_rest(fake, owner, settings):
    settings.EVALHUB_JUDGE_SLICE_SECONDS = 0
    server = fake(ab.marked_judge())
    arena = ab.arena(owner)
    x, y, _ = ab.systems_of(arena)
    for _ in range(3):
        ab.battle(arena, x, y, turns=0)
    run = ab.arena_run(server, arena)
    assert execution.execute(run.pk, client_factory=fast_client()) == "continued"
    run.refresh_from_db()
    assert (run.status, run.items_skipped) == ("queued", 1)
    while execution.execute(run.pk, client_factory=fast_client()) == "continued":
        pass
    run.refresh_from_db()
    assert (run.status, run.items_skipped, run.judgments.count()) == ("done", 3, 3)
    assert server.requests == []


def test_a_battle_with_a_side_missing_a_turn_is_skipped(fake, owner):
    server = fake(ab.marked_judge())
    arena = ab.arena(owner)
    x, y, _ = ab.systems_of(arena)
    battle = ab.battle(arena, x, y, turns=2, best="a")
    battle.battle_turns.get(number=2).answers.filter(side="b").update(text="  ")
    run = ab.arena_run(server, arena)
    execution.execute(run.pk, client_factory=fast_client())
    skipped = run.judgments.get(battle=battle)
    assert skipped.status == "skipped"
    assert skipped.error == "Model B has no answer to turn 2: the conversations are incomplete."
    assert server.requests == []


def test_a_resumed_run_stores_each_verdict_once(fake, owner):
    server = fake(ab.marked_judge())
    arena = ab.arena(owner)
    x, y, z = ab.systems_of(arena)
    first = ab.battle(arena, x, y, best="a")
    ab.battle(arena, y, z, best="b")
    ab.battle(arena, x, z, turns=0)
    run = ab.arena_run(server, arena)
    # A worker that died had stored the first verdict; its lease lapsed.
    AutomaticJudgment.objects.create(
        run=run, battle=first, status="ok", payload={"choice": "a", "first": "b"}
    )
    JudgeRun.objects.filter(pk=run.pk).update(status="running", lease=2, items_done=1)
    factories.lease(f"judge-run:{run.pk}", lapsed=True)
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    run.refresh_from_db()
    assert (run.items_done, run.items_skipped, run.judgments.count()) == (2, 1, 3)
    assert len(server.requests) == 1  # only the battle nobody had judged
    with pytest.raises(runs.RunInvalid, match="Every voted battle of the arena is judged"):
        runs.resume(run)
    # A battle voted since: resuming the done run judges that one alone.
    later = ab.battle(arena, z, x, "tie", best=None)
    runs.resume(run)
    assert execution.execute(run.pk, client_factory=fast_client()) == "done"
    run.refresh_from_db()
    assert run.judgments.count() == 4 and run.judgments.filter(battle=later).count() == 1
    assert (run.items_total, run.items_done, len(server.requests)) == (4, 3, 2)
    assert execution.record(run, run.lease, later.pk, battles_answer()) is False


def battles_answer():
    return execution.Answer(True, {"choice": "a", "first": "a"}, "", "", 1, None, None)


def test_the_endpoint_budget_pauses_an_arena_run(fake, owner):
    server = fake(ab.marked_judge())
    arena = ab.arena(owner)
    x, y, _ = ab.systems_of(arena)
    for _ in range(3):
        ab.battle(arena, x, y, best="a", turns=1)
    run = ab.arena_run(server, arena, concurrency=1)
    run.judge.endpoint.daily_budget = 2
    run.judge.endpoint.save()
    assert execution.execute(run.pk, client_factory=fast_client()) == "paused"
    run.refresh_from_db()
    assert "daily budget of 2 requests is spent" in run.last_error
    assert run.judgments.count() == 2 and len(server.requests) == 2


def test_an_unparseable_verdict_is_asked_again_then_recorded_failed(fake, owner):
    server = fake(fake_judges.answers('{"better": "3"}'))
    arena = ab.arena(owner)
    x, y, _ = ab.systems_of(arena)
    ab.battle(arena, x, y, turns=1)
    run = ab.arena_run(server, arena, max_attempts=2)
    execution.execute(run.pk, client_factory=fast_client())
    judgment = run.judgments.get()
    assert (judgment.status, judgment.attempts) == ("failed", 2)
    assert "is not a possible answer for which model is better" in judgment.error


# Starting a run ---------------------------------------------------------------------------


def test_the_arena_owner_starts_a_run_with_an_arena_rubric(owner):
    arena = ab.arena(owner)
    x, y, _ = ab.systems_of(arena)
    ab.battle(arena, x, y)
    ab.battle(arena, x, y, vote="")
    judge = builders.judge(None, owner=owner)
    run = runs.start(owner, judge, builders.default_rubric("arena"), arena=arena)
    assert (run.arena, run.campaign, run.items_total, run.status) == (arena, None, 1, "queued")


def test_a_campaign_rubric_is_refused_for_an_arena(owner):
    arena = ab.arena(owner)
    x, y, _ = ab.systems_of(arena)
    ab.battle(arena, x, y)
    judge = builders.judge(None, owner=owner)
    with pytest.raises(runs.RunInvalid, match="need an arena rubric"):
        runs.start(owner, judge, builders.default_rubric("ab"), arena=arena)
    assert not JudgeRun.objects.exists()


def test_an_arena_without_voted_battles_is_refused(owner):
    arena = ab.arena(owner)
    judge = builders.judge(None, owner=owner)
    with pytest.raises(runs.RunInvalid, match="no voted battle"):
        runs.start(owner, judge, builders.default_rubric("arena"), arena=arena)


def test_somebody_elses_public_arena_is_refused_with_the_reason(owner):
    arena = ab.arena(owner)
    x, y, _ = ab.systems_of(arena)
    ab.battle(arena, x, y)
    stranger = factories.user()
    judge = builders.judge(None, owner=stranger)
    with pytest.raises(runs.RunInvalid, match="arenas you manage"):
        runs.start(stranger, judge, builders.default_rubric("arena"), arena=arena)
    assert not JudgeRun.objects.exists()


def test_staff_may_judge_any_arena(owner):
    arena = ab.arena(owner, visibility="private")
    x, y, _ = ab.systems_of(arena)
    ab.battle(arena, x, y)
    admin = factories.user(staff=True)
    judge = builders.judge(None, owner=admin)
    assert runs.start(admin, judge, builders.default_rubric("arena"), arena=arena).arena == arena


def test_a_private_arena_is_not_found_for_others_through_the_api(client, owner):
    arena = ab.arena(owner, visibility="private")
    x, y, _ = ab.systems_of(arena)
    ab.battle(arena, x, y)
    stranger = factories.user()
    judge = builders.judge(None, owner=stranger)
    client.force_login(stranger)
    response = client.post(
        "/api/judge-runs/",
        {"judge": judge.slug, "rubric": builders.default_rubric("arena").pk, "arena": arena.slug},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "arena", "message": f"No arena '{arena.slug}'."}]
    assert not JudgeRun.objects.exists()


def test_the_api_starts_an_arena_run_and_lists_its_verdicts(client, owner, fake):
    server = fake(ab.marked_judge())
    arena = ab.arena(owner)
    x, y, _ = ab.systems_of(arena)
    battle = ab.battle(arena, x, y, best="b")
    judge = builders.judge(server, owner=owner)
    client.force_login(owner)
    response = client.post(
        "/api/judge-runs/",
        {"judge": judge.slug, "rubric": builders.default_rubric("arena").pk, "arena": arena.slug},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["arena"], body["campaign"], body["items_total"]) == (arena.slug, None, 1)
    execution.execute(body["id"], client_factory=fast_client())
    listed = client.get(f"/api/judge-runs/{body['id']}/judgments/").json()["results"]
    assert [(j["battle"], j["item"], j["payload"]["choice"]) for j in listed] == [
        (str(battle.public_id), None, "b")
    ]


def test_a_campaign_and_an_arena_at_once_are_refused(client, owner):
    arena = ab.arena(owner)
    campaign = builders.ab(1, owner=owner)
    judge = builders.judge(None, owner=owner)
    client.force_login(owner)
    response = client.post(
        "/api/judge-runs/",
        {
            "judge": judge.slug,
            "rubric": builders.default_rubric("arena").pk,
            "arena": arena.slug,
            "campaign": campaign.slug,
        },
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "one of them" in response.json()["errors"][0]["message"]
    assert not JudgeRun.objects.exists()


def test_the_judges_page_starts_an_arena_run_and_shows_it(client, owner, fake):
    server = fake(ab.marked_judge())
    arena = ab.arena(owner, name="Battle ground")
    x, y, _ = ab.systems_of(arena)
    ab.battle(arena, x, y, turns=0)
    judge = builders.judge(server, owner=owner)
    client.force_login(owner)
    response = client.post(
        reverse("judging:judge-detail", args=[judge.slug]),
        {
            "arena": arena.pk,
            "rubric": builders.default_rubric("arena").pk,
            "concurrency": 1,
            "max_attempts": 2,
        },
    )
    run = JudgeRun.objects.get()
    assert response.status_code == 302 and response["Location"] == run.get_absolute_url()
    execution.execute(run.pk, client_factory=fast_client())
    page = client.get(run.get_absolute_url()).content.decode()
    assert "on the arena Battle ground" in page
    assert "Skipped (nothing to judge)" in page
    assert f"/results/arenas/{arena.slug}/human-vs-automatic/?judge_run={run.pk}" in page
    assert (
        "imported without it"
        in client.get(run.get_absolute_url() + "?status=skipped").content.decode()
    )


def test_the_judges_page_refuses_neither_target(client, owner):
    judge = builders.judge(None, owner=owner)
    client.force_login(owner)
    response = client.post(
        reverse("judging:judge-detail", args=[judge.slug]),
        {"rubric": builders.default_rubric("arena").pk, "concurrency": 1, "max_attempts": 2},
    )
    assert response.status_code == 400
    assert "Choose a campaign or an arena to judge (one of them)." in response.content.decode()
    assert not JudgeRun.objects.exists()
