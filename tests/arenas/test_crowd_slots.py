"""A crowd voter's batch in the arena (arenas/crowd_slots.py, arenas/crowd.py's
`next_step`, the battle pages): they arrive by Prolific's link, are identified by their
platform id, fight N battles with a gold battle mixed in (shown as a battle, scored, never
on the leaderboard), get the completion code and Prolific's redirect, are paid through the
review and, once blocked, take no more battles. Two fake streaming models on 127.0.0.1."""

import itertools
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from annotation.crowd import review
from annotation.models import Assignment, Judgment, Worker
from annotation.quality import worker_figures
from arenas.crowd import launch
from arenas.crowd_models import CrowdBattle
from arenas.interchange.export import export_lines
from arenas.leaderboard import compute, counted_battles
from arenas.models import Battle
from tests import factories
from tests.arenas.crowd_setup import crowd_arena, mturk_stubber, prolific_fake, setup
from tests.endpoints import sse_fake

pytestmark = pytest.mark.django_db(transaction=True)
PID = "5f0c1a2b3c4d5e6f7a8b9c0d"
SESSION = "60aa1a2b3c4d5e6f7a8b9c0d"
PID_2 = "6f0c1a2b3c4d5e6f7a8b9c0e"
SESSION_2 = "70aa1a2b3c4d5e6f7a8b9c0e"


@pytest.fixture
def fake_prolific(settings, monkeypatch):
    with prolific_fake(settings, monkeypatch) as server:
        yield server


@pytest.fixture
def launched(fake_prolific):
    """An arena launched on Prolific's fake: one participant, three battles, one gold."""
    with sse_fake.StreamingPool() as pool:
        one = pool.start(sse_fake.words("Waves ", "are ", "wind."))
        two = pool.start(sse_fake.words("The ", "moon ", "pulls."))
        made = crowd_arena(urls=(one.base_url, two.base_url))
        boss = factories.user("boss", staff=True)
        result = launch(
            made,
            setup(participants=2, battles_per_participant=3, budget=Decimal("5.00")),
            boss,
            confirm=True,
        )
        yield made, result.campaign, boss, fake_prolific


def arrive(client, campaign, pid=PID, session=SESSION):
    query = {"PROLIFIC_PID": pid, "STUDY_ID": campaign.platform_ref, "SESSION_ID": session}
    return client.get(reverse("annotation:start", args=[campaign.slug]), query, follow=True)


PROMPTS = itertools.count(1)


def fight(client, made, vote_gold="right"):
    """Do the next battle of the batch from the arena's new-battle page: vote a live one
    "a_better", a gold one right or wrong. Returns the battle, or the final response."""
    page = client.get(reverse("arenas:battle-new", args=[made.slug]))
    if page.status_code == 302 and "/battles/" in page["Location"]:
        battle = Battle.objects.get(public_id=page["Location"].rstrip("/").split("/")[-1])
    elif page.status_code == 200:
        started = client.post(
            # A new prompt each time: a repeated one would be flagged (arenas/voter_limits.py).
            reverse("arenas:battle-start", args=[made.slug]),
            {"prompt": f"Why are there waves? Question {next(PROMPTS)}."},
        )
        assert started.status_code == 302, started.content
        battle = Battle.objects.get(public_id=started["Location"].rstrip("/").split("/")[-1])
    else:
        return page
    vote = "a_better"
    if battle.source == "gold":
        crowd = CrowdBattle.objects.get(battle=battle)
        better = (
            crowd.first_side
            if crowd.item.gold["better"] == "first"
            else ("b" if crowd.first_side == "a" else "a")
        )
        worse = "b" if better == "a" else "a"
        vote = f"{better if vote_gold == 'right' else worse}_better"
    client.post(reverse("arenas:vote", args=[made.slug, battle.public_id]), {"vote": vote})
    return battle


def test_a_participant_does_n_battles_with_gold_and_is_sent_back_with_the_code(client, launched):
    made, campaign, _, _ = launched
    landed = arrive(client, campaign)
    # Prolific's link leads, through the campaign's start page, to the arena's battles.
    assert landed.status_code == 200
    assert landed.request["PATH_INFO"].startswith(f"/arenas/{made.slug}/")
    battles = [fight(client, made) for _ in range(3)]
    assert all(isinstance(b, Battle) for b in battles)

    worker = Worker.objects.get(provider="prolific", external_id=PID)
    assignment = Assignment.objects.get(campaign=campaign, worker=worker)
    assert assignment.status == "submitted" and assignment.provider_ref == SESSION
    assert assignment.completion_code
    # Identified by the platform id; one gold battle, two live ones.
    assert {(b.voter_platform, b.voter_ref) for b in battles} == {("prolific", PID)}
    assert sorted(b.source for b in battles) == ["gold", "live", "live"]
    judgments = Judgment.objects.filter(assignment=assignment)
    assert judgments.count() == 3
    gold = judgments.get(item__role="gold")
    assert gold.gold_correct is True and gold.payload["first"] in ("a", "b")
    # The next page is the completion page, which sends them to Prolific with the code.
    done = client.get(reverse("arenas:battle-new", args=[made.slug]))
    assert done["Location"] == reverse("annotation:done", args=[assignment.public_id])
    page = client.get(done["Location"]).content.decode()
    campaign.refresh_from_db()
    code = campaign.provider_config["completion_code"]
    assert f"https://app.prolific.com/submissions/complete?cc={code}" in page


def test_the_gold_battle_looks_like_a_live_one_and_is_never_counted(client, launched):
    made, campaign, _, _ = launched
    arrive(client, campaign)
    battles = [fight(client, made) for _ in range(3)]
    gold = next(b for b in battles if b.source == "gold")
    live = next(b for b in battles if b.source == "live")
    gold_page = client.get(gold.get_absolute_url()).content.decode()
    live_page = client.get(live.get_absolute_url()).content.decode()
    # The same page: the battle's prompt, Model A and B, the vote; no word of gold.
    assert "gold" not in gold_page.lower()
    assert "What is 2 + 2?" in gold_page or "capital of France" in gold_page
    for page in (gold_page, live_page):
        assert "Model A" in page and "Model B" in page and "You voted: " in page
    assert {gold.system_a.name, gold.system_b.name} == {"Alpha", "Beta"}
    # Never on the leaderboard, nor in its count of left-out battles.
    assert gold not in counted_battles(made)
    result = compute(made)
    assert result["battles"] == 2 and result["flagged_left_out"] == 0
    # Nor exported as a battle.
    assert len(list(export_lines(made))) == 2


def test_a_wrong_gold_vote_feeds_the_campaigns_quality_figures(client, launched):
    made, campaign, boss, fake = launched
    arrive(client, campaign)
    for _ in range(3):
        fight(client, made, vote_gold="wrong")
    (figures,) = [f for f in worker_figures(campaign) if f.judgments]
    assert (figures.gold.hits, figures.gold.total) == (0, 1)
    client.force_login(boss)
    page = client.get(reverse("annotation:quality-workers", args=[campaign.slug]))
    assert page.status_code == 200 and PID in page.content.decode()


def test_paying_through_the_review_approves_the_prolific_submission(client, launched):
    made, campaign, boss, fake = launched
    arrive(client, campaign)
    for _ in range(3):
        fight(client, made)
    assignment = Assignment.objects.get(campaign=campaign, status="submitted")
    fake.add_submissions(
        campaign.platform_ref,
        [{"id": SESSION, "participant_id": PID, "status": "AWAITING REVIEW"}],
    )
    review.approve(assignment, actor=boss)
    assignment.refresh_from_db()
    assert assignment.status == "approved"
    assert fake.submissions[campaign.platform_ref][0]["status"] == "APPROVED"


def test_a_blocked_participant_takes_no_more_battles(client, launched):
    made, campaign, boss, fake = launched
    arrive(client, campaign)
    fight(client, made)
    worker = Worker.objects.get(external_id=PID)
    review.block(worker, "Failed the checks", campaign=campaign, actor=boss)
    assert PID in next(iter(fake.groups.values()))
    before = Battle.objects.count()
    page = client.get(reverse("arenas:battle-new", args=[made.slug]))
    assert page.status_code == 403 and "no longer take battles" in page.content.decode()
    started = client.post(
        reverse("arenas:battle-start", args=[made.slug]), {"prompt": "Why are there waves?"}
    )
    # Refused as anybody the arena does not let vote (here: log in first); nothing stored.
    assert started.status_code == 302 and started["Location"].startswith("/accounts/login/")
    assert Battle.objects.count() == before


def test_two_participants_each_fight_their_own_batch(client, launched):
    made, campaign, _, _ = launched
    other = Client()
    arrive(client, campaign)
    arrive(other, campaign, PID_2, SESSION_2)
    first = fight(client, made)
    assert other.get(first.get_absolute_url()).status_code == 404
    for _ in range(3):
        fight(other, made)
    assert Assignment.objects.filter(campaign=campaign, status="submitted").count() == 1
    refs = set(Battle.objects.values_list("voter_ref", flat=True))
    assert refs == {PID, PID_2}


def test_an_mturk_worker_battles_inside_mturks_frame_and_posts_the_hit_back(
    client, settings, monkeypatch
):
    with sse_fake.StreamingPool() as pool, mturk_stubber(settings, monkeypatch) as stub:
        one = pool.start(sse_fake.words("Waves ", "are ", "wind."))
        two = pool.start(sse_fake.words("The ", "moon ", "pulls."))
        made = crowd_arena(urls=(one.base_url, two.base_url))
        stub.add_response(
            "create_qualification_type", {"QualificationType": {"QualificationTypeId": "Q"}}
        )
        stub.add_response("create_hit_type", {"HITTypeId": "HT1"})
        stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "HIT1"}})
        campaign = launch(
            made, setup(provider="mturk", participants=1, battles_per_participant=2), made.owner
        ).campaign
        batch = campaign.batches.get()
        query = {
            "provider": "mturk",
            "batch": batch.pk,
            "assignmentId": "ASG1",
            "hitId": "HIT1",
            "workerId": "AWORKER1",
            "turkSubmitTo": "https://workersandbox.mturk.com",
        }
        landed = client.get(reverse("annotation:start", args=[campaign.slug]), query, follow=True)
        assert landed.request["PATH_INFO"].startswith(f"/arenas/{made.slug}/")
        policy = landed["Content-Security-Policy"]
        assert "frame-ancestors 'self' https://workersandbox.mturk.com" in policy
        assert "X-Frame-Options" not in landed
        battles = [fight(client, made) for _ in range(2)]
        assert {(b.voter_platform, b.voter_ref) for b in battles} == {("mturk", "AWORKER1")}
        done = client.get(reverse("arenas:battle-new", args=[made.slug]), follow=True)
        html = done.content.decode()
        assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in html
        assert 'name="assignmentId" value="ASG1"' in html
    assignment = Assignment.objects.get(provider_ref="ASG1")
    assert assignment.status == "submitted"
    assert Judgment.objects.filter(assignment=assignment).count() == 2


def test_nobody_else_gets_the_crowds_frame_permission(client, launched):
    made, _, _, _ = launched
    client.force_login(made.owner)
    page = client.get(reverse("arenas:battle-new", args=[made.slug]))
    assert page.status_code == 200 and page["X-Frame-Options"] == "DENY"


def test_a_vote_after_the_batch_ran_out_of_time_is_no_judgment(client, launched):
    from datetime import timedelta

    from django.utils import timezone

    made, campaign, _, _ = launched
    arrive(client, campaign)
    page = client.get(reverse("arenas:battle-new", args=[made.slug]))
    if page.status_code == 302:  # the gold battle came first: vote on it
        battle = Battle.objects.get(source="gold")
    else:
        started = client.post(
            # A new prompt each time: a repeated one would be flagged (arenas/voter_limits.py).
            reverse("arenas:battle-start", args=[made.slug]),
            {"prompt": f"Why are there waves? Question {next(PROMPTS)}."},
        )
        battle = Battle.objects.get(public_id=started["Location"].rstrip("/").split("/")[-1])
    Assignment.objects.filter(campaign=campaign, status="started").update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    client.post(reverse("arenas:vote", args=[made.slug, battle.public_id]), {"vote": "tie"})
    assert not Judgment.objects.exists()
    refused = client.get(reverse("arenas:battle-new", args=[made.slug]))
    assert (
        refused.status_code == 403 and "time for your battles ran out" in refused.content.decode()
    )
