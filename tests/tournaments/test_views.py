"""Tournament pages: visibility and permissions, creating, the plan, the actions, queries."""

import json
import time
import tracemalloc
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import IntegrityError, transaction
from django.test import override_settings
from django.urls import reverse

from annotation.crowd.local import LocalProvider
from annotation.models import Assignment, Campaign, Judgment
from evalhub.models import Conversation, System
from evalhub.services import import_conversations
from tests import factories
from tournaments import spot_the_bot_campaign
from tournaments.models import PlannedDialogue, Tournament

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return factories.user("owner")


@pytest.fixture
def researcher():
    return factories.user("researcher")


@pytest.fixture
def staff():
    return factories.user("boss", staff=True)


def conversation(cid, speakers, exchanges=3, domain="garden"):
    return {
        "id": cid,
        "domain": domain,
        "speakers": speakers,
        "turns": [{"speaker": p % 2, "text": f"{cid} line {p}"} for p in range(2 * exchanges)],
    }


def load(lines):
    if not lines:
        return
    import_conversations(data="\n".join(json.dumps(c) for c in lines).encode(), filename="c.jsonl")


def spot(owner, *, slug="garden-cup", published=False, n_conversations=2, **fields):
    systems = [System.objects.get_or_create(slug=s, defaults={"name": s})[0] for s in ("a", "b")]
    load([conversation(f"{slug}-{i}", ["a", "b"]) for i in range(n_conversations)])
    t = Tournament.objects.create(
        slug=slug,
        name=slug.replace("-", " ").title(),
        kind="spot_the_bot",
        domain="garden",
        owner=owner,
        published=published,
        segment_lengths=[1, 2],
        human_share=0,
        batch_size=4,
        **fields,
    )
    t.systems.set(systems)
    t.included_conversations.set(Conversation.objects.filter(external_id__startswith=f"{slug}-"))
    return t


def ab(owner, *, published=False):
    prompts = factories.prompt_set(3, slug="three")
    mine = factories.system(owner, slug="mine")
    ours = factories.submission(mine, prompts, ["same", "a2", "a3"])
    bases = [factories.system(None, slug=s, is_baseline=True) for s in ("base1", "base2")]
    factories.submission(bases[0], prompts, ["same", "b2", "b3"])
    factories.submission(bases[1], prompts, ["c1", "c2", "c3"])
    t = Tournament.objects.create(
        slug="mine-ab",
        name="Mine vs baselines",
        kind="ab",
        owner=owner,
        published=published,
        prompt_set=prompts,
        submission=ours,
        judgments_per_prompt=3,
        prompts_per_batch=2,
        reward_per_judgment=Decimal("0.10"),
    )
    t.baselines.set(bases)
    return t


def url(name, t):
    return reverse(f"tournaments:{name}", args=[t.slug])


# Visibility ------------------------------------------------------------------------------


def test_list_shows_published_and_own(client, owner, researcher, staff):
    spot(owner, slug="public-cup", published=True)
    spot(owner, slug="private-cup")
    listing = reverse("tournaments:list")
    assert (
        "Public Cup" in (page := client.get(listing).content.decode()) and "Private Cup" not in page
    )
    client.force_login(researcher)
    assert "Private Cup" not in client.get(listing).content.decode()
    client.force_login(owner)
    assert "Private Cup" in client.get(listing).content.decode()
    client.force_login(staff)
    assert "Private Cup" in client.get(listing).content.decode()


@pytest.mark.parametrize(
    "who, published, status",
    [
        (None, True, 200),
        (None, False, 404),
        ("researcher", False, 404),
        ("researcher", True, 200),
        ("owner", False, 200),
        ("staff", False, 200),
    ],
)
def test_detail_visibility(client, owner, researcher, staff, who, published, status):
    t = spot(owner, published=published)
    users = {"owner": owner, "researcher": researcher, "staff": staff}
    if who:
        client.force_login(users[who])
    assert client.get(url("detail", t)).status_code == status


# Actions ---------------------------------------------------------------------------------


@pytest.mark.parametrize("action", ["collect", "generate", "launch"])
def test_actions_only_allow_post(client, owner, action):
    t = spot(owner)
    client.force_login(owner)
    assert client.get(url(action, t)).status_code == 405


@pytest.mark.parametrize(
    "who, published, status",
    [
        (None, True, 302),  # to the login page
        ("researcher", True, 403),
        ("researcher", False, 404),
        ("owner", False, 302),
        ("staff", False, 302),
    ],
)
def test_generate_validates_ownership(client, owner, researcher, staff, who, published, status):
    t = spot(owner, published=published)
    if who:
        client.force_login({"owner": owner, "researcher": researcher, "staff": staff}[who])
    response = client.post(url("generate", t))
    assert response.status_code == status
    t.refresh_from_db()
    generated = who in ("owner", "staff")
    assert (t.campaign is not None) == generated
    if not who:
        assert response["Location"].startswith(reverse("login"))
    if generated:
        assert response["Location"] == url("detail", t)


def test_generate_reports_the_counts(client, owner):
    t = spot(owner, n_conversations=3)
    client.force_login(owner)
    page = client.post(url("generate", t), follow=True).content.decode()
    assert "Campaign generated: 3 conversations gave segments (3 of 1, 3 of 2 exchanges)" in page
    assert "0 too short skipped" in page


def test_generate_says_what_is_missing(client, owner):
    t = spot(owner, n_conversations=0)
    client.force_login(owner)
    page = client.post(url("generate", t), follow=True).content.decode()
    assert "No bot-bot conversation collected or included" in page
    assert not Campaign.objects.exists()


def test_launch_sets_live_and_calls_the_provider_hook(client, owner, monkeypatch):
    launched = []
    monkeypatch.setattr(
        LocalProvider, "launch", lambda self, campaign, **kw: launched.append(campaign.slug)
    )
    t = spot(owner)
    spot_the_bot_campaign.generate_campaign(t)
    client.force_login(owner)
    response = client.post(url("launch", t))
    assert response.status_code == 302
    t.refresh_from_db()
    assert t.campaign.status == "live" and t.status == "annotating"
    assert launched == [t.campaign.slug]
    page = client.get(url("detail", t)).content.decode()
    assert t.campaign.start_url() in page and "Launch the campaign" not in page


def test_a_live_tournament_page_shows_the_ways_in_and_links_its_campaign_for_the_owner(
    client, owner
):
    t = spot(owner)
    spot_the_bot_campaign.generate_campaign(t)
    t.refresh_from_db()
    Campaign.objects.filter(pk=t.campaign.pk).update(status="live")
    client.force_login(owner)

    page = client.get(url("detail", t)).content.decode()

    assert 'data-testid="ways-in"' in page and "Invitation links" in page
    assert reverse("annotation:manage-campaign", args=[t.campaign.slug]) in page
    assert "PROLIFIC_PID" not in page


def test_launch_before_generating_is_refused(client, owner):
    t = spot(owner)
    client.force_login(owner)
    page = client.post(url("launch", t), follow=True).content.decode()
    assert "Generate the campaign before launching it." in page


def test_collect_queues_the_task(client, owner, monkeypatch):
    from endpoints.models import BotEndpoint
    from tournaments import tasks

    queued = []
    monkeypatch.setattr(tasks.collect_tournament, "delay", lambda pk: queued.append(pk))
    t = spot(owner, schedule="all-play-all", conversations_per_pair=2)
    load([conversation("seed-0", ["human", "human"])])
    for system in t.systems.all():
        # Nobody owns these systems: their endpoints serve the owner's tournament by consent.
        BotEndpoint.objects.create(
            system=system, url="http://127.0.0.1:9/", allow_other_owners=True
        )
    client.force_login(owner)
    page = client.post(url("collect", t), follow=True).content.decode()
    assert queued == [t.pk]
    assert "Collection started" in page


def _refused_endpoints(t):
    from endpoints.models import BotEndpoint

    load([conversation("seed-0", ["human", "human"])])
    for system in t.systems.all():
        BotEndpoint.objects.create(
            system=system, url="http://127.0.0.1:9/", allow_other_owners=True
        )


def test_a_collection_that_failed_at_once_is_flashed_as_failed_with_its_reasons(
    client, owner, settings
):
    # Without a broker the collection runs inside the click: every dialogue fails on an
    # address this deployment refuses, and the page says so rather than "started".
    settings.EVALHUB_OUTBOUND_ALLOW = []
    t = spot(owner, schedule="all-play-all", conversations_per_pair=2)
    _refused_endpoints(t)
    client.force_login(owner)

    page = client.post(url("collect", t), follow=True).content.decode()

    assert "Collection started" not in page
    assert "4 of 4 conversations failed (0 collected)" in page
    assert 'id="endpoint-errors"' in page and "address refused" in page
    assert t.plan.filter(status="failed").count() == 4


def test_endpoint_errors_are_not_shown_to_visitors(client, owner, settings):
    from endpoints.calls import record
    from endpoints.models import BotEndpoint

    t = spot(owner, schedule="all-play-all", published=True)
    _refused_endpoints(t)
    for endpoint in BotEndpoint.objects.all():
        record(endpoint.pk, purpose="collection", status="refused", latency_ms=1)
    client.force_login(factories.user("visitor"))

    page = client.get(url("detail", t)).content.decode()

    assert 'id="endpoint-errors"' not in page


def test_collect_is_not_offered_when_every_conversation_is_in(client, owner):
    t = spot(owner, schedule="all-play-all", conversations_per_pair=1)
    PlannedDialogue.objects.create(
        tournament=t, key="k0", speakers=["a", "b"], index=0, seed=0, status="complete"
    )
    client.force_login(owner)

    page = client.get(url("detail", t)).content.decode()

    assert "Collect the missing conversations" not in page


def test_collect_says_what_to_fix(client, owner, monkeypatch):
    from tournaments import tasks

    monkeypatch.setattr(tasks.collect_tournament, "delay", lambda pk: pytest.fail("queued"))
    t = spot(owner, schedule="all-play-all")
    client.force_login(owner)
    page = client.post(url("collect", t), follow=True).content.decode()
    assert "These systems have no bot endpoint" in page


# Detail ----------------------------------------------------------------------------------


def test_spot_the_bot_detail_shows_plan_progress_and_results_placeholder(client, owner):
    t = spot(owner, schedule="all-play-all", conversations_per_pair=3)
    for n, status in enumerate(["complete", "complete", "failed", "pending"]):
        PlannedDialogue.objects.create(
            tournament=t, key=f"k{n}", speakers=["a", "b"], index=n, seed=n, status=status
        )
    client.force_login(owner)
    page = client.get(url("detail", t)).content.decode()
    assert "6 conversations over 2 pairings (3 each)" in page
    assert "<strong>2 / 4</strong> collected" in page
    assert "<strong>1</strong> failed" in page
    assert "Results appear here once the analysis has run." in page


@pytest.mark.parametrize(
    ("schedule", "paper"),
    [("bipartite-play", "600 conversations per pair"), ("self-play", "1,000")],
)
def test_detail_says_how_many_conversations_the_paper_collected(client, owner, schedule, paper):
    t = spot(owner, schedule=schedule, conversations_per_pair=3)
    client.force_login(owner)
    response = client.get(url("detail", t))
    note = response.content.decode().split('data-testid="paper-scale">')[1].split("</p>")[0]
    assert response.status_code == 200
    assert paper in note and "this tournament collects 3" in note


def test_ab_detail_shows_the_cost_before_launch(client, owner):
    t = ab(owner)
    client.force_login(owner)
    page = client.get(url("detail", t)).content.decode()
    # 3 prompts × 2 baselines, one identical pair: 5 shown × 3 judgments × 0.10.
    assert "<strong>5</strong> comparisons shown" in page
    assert "<strong>1.50</strong> cost: 15 judgments" in page
    client.post(url("generate", t))
    client.post(url("launch", t))
    page = client.get(url("detail", t)).content.decode()
    assert "comparisons shown" not in page and "Live" in page


def test_detail_queries_do_not_grow_with_the_tournament(
    client, owner, django_assert_max_num_queries
):
    small = spot(owner, slug="small", n_conversations=2, schedule="all-play-all")
    big = spot(owner, slug="big", n_conversations=40, schedule="all-play-all")
    for t in (small, big):
        PlannedDialogue.objects.bulk_create(
            PlannedDialogue(
                tournament=t, key=f"k{n}", speakers=["a", "b"], index=n, seed=n, status="complete"
            )
            for n in range(2 if t is small else 80)
        )
        spot_the_bot_campaign.generate_campaign(t)
    client.force_login(owner)
    client.get(url("detail", small))
    # 20, and since #24: the speaking systems' endpoint failures (2) and whether the
    # campaign is public, for the ways in (2).
    with django_assert_max_num_queries(24) as small_queries:
        client.get(url("detail", small))
    with django_assert_max_num_queries(len(small_queries.captured_queries)):
        assert client.get(url("detail", big)).status_code == 200


# Creating --------------------------------------------------------------------------------


def test_creating_needs_a_login(client):
    response = client.get(reverse("tournaments:create-spot-the-bot"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def spot_form(**overrides):
    data = {
        "name": "Garden cup",
        "slug": "garden-cup",
        "domain": "garden",
        "systems": ["a", "b"],
        "schedule": "all-play-all",
        "conversations_per_pair": "5",
        "exchanges": "5",
        "segment_lengths": "2, 3",
        "human_share": "0.1",
        "features": "sensibleness, fluency",
        "batch_size": "10",
        "max_batches_per_worker": "3",
        "judgments_per_segment": "2",
    }
    data.update(overrides)
    return data


def test_create_a_spot_the_bot_tournament(client, researcher):
    for s in ("a", "b"):
        factories.system(None, slug=s)
    client.force_login(researcher)
    response = client.post(reverse("tournaments:create-spot-the-bot"), spot_form())
    t = Tournament.objects.get(slug="garden-cup")
    assert response.status_code == 302 and response["Location"] == url("detail", t)
    assert (t.kind, t.owner, t.segment_lengths, t.features) == (
        "spot_the_bot",
        researcher,
        [2, 3],
        ["sensibleness", "fluency"],
    )
    assert sorted(t.systems.values_list("slug", flat=True)) == ["a", "b"]


def test_create_errors_sit_next_to_their_fields_and_keep_the_answers(client, researcher):
    factories.system(None, slug="a")
    private = factories.system(factories.user("someone"), slug="secret", visibility="private")
    client.force_login(researcher)
    response = client.post(
        reverse("tournaments:create-spot-the-bot"),
        spot_form(systems=["a"], segment_lengths="2, x", features="Fluency", human_share="0.95"),
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "All-play-all needs at least two systems." in page
    assert "&#x27;x&#x27; is not a whole number." in page
    assert "Feature name &#x27;Fluency&#x27;" in page
    assert "less than or equal to 0.9" in page
    assert 'value="Garden cup"' in page and 'value="2, x"' in page
    assert private.slug not in page  # a private system of someone else is not offered
    assert not Tournament.objects.exists()


def test_create_an_ab_experiment_from_an_own_submission(client, owner):
    prompts = factories.prompt_set(2, slug="two")
    ours = factories.submission(factories.system(owner, slug="mine"), prompts)
    base = factories.system(None, slug="base", is_baseline=True)
    factories.submission(base, prompts)
    theirs = factories.submission(factories.system(factories.user(), slug="theirs"), prompts)
    client.force_login(owner)
    form = reverse("tournaments:create-ab")
    assert str(theirs.public_id) not in client.get(form).content.decode()
    data = {
        "name": "Mine",
        "slug": "mine-ab",
        "baselines": ["base"],
        "judgments_per_prompt": "3",
        "prompts_per_batch": "10",
        "reward_per_judgment": "0.05",
    }
    refused = client.post(form, {**data, "submission": str(theirs.public_id)})
    assert refused.status_code == 400 and "Select a valid choice" in refused.content.decode()
    client.post(form, {**data, "submission": str(ours.public_id)})
    t = Tournament.objects.get(slug="mine-ab")
    assert (t.kind, t.submission, t.prompt_set, t.owner) == ("ab", ours, prompts, owner)
    assert sorted(t.systems.values_list("slug", flat=True)) == ["base", "mine"]


def test_submissions_of_one_minute_are_told_apart_in_the_ab_form(client, owner):
    from evalhub.models import Submission

    prompts = factories.prompt_set(2, slug="two")
    system = factories.system(owner, slug="mine", name="Mine")
    first = factories.submission(system, prompts)
    second = factories.submission(system, prompts)
    Submission.objects.filter(pk=first.pk).update(original_filename="run-a.txt")
    Submission.objects.filter(pk=second.pk).update(original_filename="run-b.txt")
    client.force_login(owner)

    page = client.get(reverse("tournaments:create-ab")).content.decode()

    assert f"run-a.txt #{first.pk}" in page and f"run-b.txt #{second.pk}" in page


def test_a_baseline_without_responses_is_named_next_to_the_field(client, owner):
    prompts = factories.prompt_set(2, slug="two")
    ours = factories.submission(factories.system(owner, slug="mine"), prompts)
    factories.system(None, slug="lazy", name="Lazy", is_baseline=True)
    client.force_login(owner)
    response = client.post(
        reverse("tournaments:create-ab"),
        {
            "name": "Mine",
            "slug": "mine-ab",
            "submission": str(ours.public_id),
            "baselines": ["lazy"],
            "judgments_per_prompt": "3",
            "prompts_per_batch": "10",
            "reward_per_judgment": "0",
        },
    )
    assert response.status_code == 400
    assert "No responses to Two from: Lazy." in response.content.decode()


# Conversation upload in the admin ---------------------------------------------------------

UPLOAD = "/admin/evalhub/conversation/upload/"


def test_staff_upload_conversations_in_the_admin(client, staff):
    client.force_login(staff)
    data = json.dumps(conversation("up-0", ["newbot", "human"])).encode()
    response = client.post(UPLOAD, {"file": SimpleUploadedFile("c.jsonl", data), "source": ""})
    assert response.status_code == 302
    assert Conversation.objects.get().external_id == "up-0"
    assert System.objects.get(slug="newbot").owner == staff
    assert "Upload conversations" in client.get("/admin/evalhub/conversation/").content.decode()


def test_admin_upload_lists_problems_and_stores_nothing(client, staff):
    client.force_login(staff)
    bad = b'{"id": "x"}\nnot json\n'
    page = client.post(UPLOAD, {"file": SimpleUploadedFile("c.jsonl", bad)}).content.decode()
    assert "line 1: missing" in page and "line 2: not valid JSON" in page
    assert not Conversation.objects.exists()


def test_researchers_cannot_reach_the_admin_upload(client, researcher):
    client.force_login(researcher)
    assert client.get(UPLOAD).status_code == 302
    assert not Judgment.objects.exists()


def test_detail_shows_the_latest_analysis_once_it_has_run(client, owner):
    from tests.analysis.builders import stored_run

    t = spot(owner)
    run = stored_run(t)
    client.force_login(owner)
    page = client.get(url("detail", t)).content.decode()
    assert "Results appear here once the analysis has run." not in page
    assert reverse("analysis:detail", args=[t.slug]) in page
    assert run.result["ranking"][0]["system"] in page


# Bounded work (issue 9) ------------------------------------------------------------------


def test_zero_prompts_per_batch_cannot_be_stored_so_the_public_page_never_breaks(client, owner):
    # Once accepted, 0 made the public page of the experiment answer 500 to everyone.
    t = ab(owner, published=True)
    with (
        pytest.raises(IntegrityError, match="tournament_prompts_per_batch_range"),
        transaction.atomic(),
    ):
        Tournament.objects.filter(pk=t.pk).update(prompts_per_batch=0)
    t.prompts_per_batch = 0
    with pytest.raises(ValidationError) as refused:
        t.full_clean()
    assert refused.value.message_dict["prompts_per_batch"] == [
        "prompts_per_batch must be from 1 to 100, got 0."
    ]
    t.refresh_from_db()
    assert t.prompts_per_batch == 2
    assert client.get(url("detail", t)).status_code == 200


def many_systems(owner, n, per_pair):
    t = spot(owner, slug="huge", n_conversations=0, schedule="all-play-all", published=True)
    t.conversations_per_pair = per_pair
    t.save()
    t.systems.set(System.objects.bulk_create(System(slug=f"s{i}", name=f"s{i}") for i in range(n)))
    return t


@override_settings(EVALHUB_MAX_PLANNED_CONVERSATIONS=10_000_000)
def test_a_huge_plan_is_counted_not_built(client, owner, django_assert_max_num_queries):
    t = many_systems(owner, 45, 1000)  # 45 × 44 pairings × 1000 = 1,980,000 conversations
    tracemalloc.start()
    started = time.monotonic()
    with django_assert_max_num_queries(25):
        page = client.get(url("detail", t)).content.decode()
    elapsed = time.monotonic() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert "1980000 conversations over 1980 pairings (1000 each)" in page
    assert peak < 20 * 1024 * 1024 and elapsed < 5
    assert not PlannedDialogue.objects.exists()


def test_a_plan_above_the_cap_is_refused_with_its_size(client, owner, monkeypatch):
    t = many_systems(owner, 20, 1000)  # 380,000 conversations > 100,000
    page = client.get(url("detail", t)).content.decode()
    assert "This plan has 380,000 conversations (380 pairings × 1,000" in page
    assert "at most 100,000 may be planned (EVALHUB_MAX_PLANNED_CONVERSATIONS)" in page
    from tournaments import tasks

    queued = []
    monkeypatch.setattr(tasks.collect_tournament, "delay", lambda pk: queued.append(pk))
    client.force_login(owner)
    page = client.post(url("collect", t), follow=True).content.decode()
    assert "EVALHUB_MAX_PLANNED_CONVERSATIONS" in page
    assert not PlannedDialogue.objects.exists() and not queued


@override_settings(EVALHUB_MAX_ASSIGNMENTS_PER_CAMPAIGN=8)
def test_an_ab_generate_opening_too_many_assignments_is_refused_before_writing(client, owner):
    t = ab(owner)  # 5 comparisons shown, 2 per batch: 3 batches × 3 judgments = 9 > 8
    client.force_login(owner)
    page = client.post(url("generate", t), follow=True).content.decode()
    assert "would open 9 assignments (3 batches × 3 judgments each); at most 8" in page
    assert not Campaign.objects.exists() and not Assignment.objects.exists()
    t.refresh_from_db()
    assert t.campaign is None


# Issue 23, finding 9: quotas ---------------------------------------------------------------


def test_the_page_refuses_a_tournament_past_the_quota(settings, client, researcher):
    settings.EVALHUB_QUOTA_TOURNAMENTS = 1
    for s in ("a", "b"):
        factories.system(None, slug=s)
    Tournament.objects.create(slug="first", name="First", kind="spot_the_bot", owner=researcher)
    client.force_login(researcher)
    response = client.post(reverse("tournaments:create-spot-the-bot"), spot_form())
    assert response.status_code == 400
    assert "(EVALHUB_QUOTA_TOURNAMENTS=1)" in response.content.decode()
    assert list(Tournament.objects.values_list("slug", flat=True)) == ["first"]


def test_generate_refuses_a_campaign_past_the_quota(settings, client, owner):
    settings.EVALHUB_QUOTA_CAMPAIGNS = 0
    t = spot(owner)
    client.force_login(owner)
    response = client.post(url("generate", t), follow=True)
    assert "(EVALHUB_QUOTA_CAMPAIGNS=0)" in response.content.decode()
    t.refresh_from_db()
    assert t.campaign is None and not Campaign.objects.exists()
