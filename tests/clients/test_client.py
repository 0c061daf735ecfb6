"""Each resource group of `EvalHub` (clients/python/src/evalhub_client/client.py) against
the live server: what it answers, and what the database holds afterwards."""

import io
import json
import zipfile
from pathlib import Path

import pytest

from analysis.models import AnalysisRun
from annotation.models import Campaign, Judgment
from arenas.models import Arena
from endpoints.models import BotEndpoint
from evalhub.models import ApiToken, PromptSet
from evalhub.models import Submission as SubmissionRow
from evalhub.models import System as SystemRow
from evalhub_client import EvalHub, EvalHubError
from evalhub_client.models import (
    CampaignDetail,
    JudgeRun,
    PromptSetDetail,
    Rubric,
    Submission,
    System,
)
from judging.models import JudgeRun as JudgeRunRow
from judging.models import Rubric as RubricRow
from tests import factories
from tests.analysis.builders import bare_tournament, stored_run
from tests.arenas.builders import NOWHERE, arena, bot_system
from tests.clients.builders import ab_campaign_through_the_api, judge_run, judged_campaign

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


# Tokens


def test_login_answers_a_token_that_works(hub_for, live_server):
    factories.user("ada", password="a-long-password-1")
    token = hub_for(None).tokens.login("ada", "a-long-password-1", name="notebook")

    assert token.name == "notebook"
    assert ApiToken.objects.get(user__username="ada").name == "notebook"
    with EvalHub(live_server.url, token=token.token) as signed_in:
        assert signed_in.tokens.current().name == "notebook"


def test_a_wrong_password_is_refused(hub_for):
    factories.user("ada", password="a-long-password-1")

    with pytest.raises(EvalHubError) as caught:
        hub_for(None).tokens.login("ada", "not-it")
    assert caught.value.status == 400
    assert not ApiToken.objects.exists()


def test_tokens_are_made_listed_and_revoked(hub_for):
    owner = factories.user()
    hub = hub_for(owner)

    made = hub.tokens.create("second")
    listed = {t.name: t for t in hub.tokens.list()}
    hub.tokens.revoke(listed["second"].starts_with)

    assert made["token"]
    assert set(listed) == {
        "second",
        *ApiToken.objects.exclude(name="second").values_list("name", flat=True),
    }
    assert not ApiToken.objects.filter(user=owner, name="second").exists()


# Systems, submissions, prompt sets


def test_a_system_is_registered_changed_and_read(hub_for):
    owner = factories.user()
    hub = hub_for(owner)

    created = hub.systems.create("my-bot", "My bot", visibility="public")
    hub.systems.update("my-bot", description="Answers politely.")
    read = hub.systems.get("my-bot")

    assert isinstance(created, System)
    assert read.description == "Answers politely."
    assert SystemRow.objects.get(slug="my-bot").owner == owner


def test_put_sets_the_fields_of_a_system(hub_for):
    owner = factories.user()
    factories.system(owner, slug="my-bot", description="old words")

    hub_for(owner).systems.replace("my-bot", name="Renamed", description="new words")

    row = SystemRow.objects.get(slug="my-bot")
    assert (row.name, row.description) == ("Renamed", "new words")


def test_put_without_a_name_is_refused(hub_for):
    owner = factories.user()
    factories.system(owner, slug="my-bot", name="Kept")

    with pytest.raises(EvalHubError) as caught:
        hub_for(owner).systems.replace("my-bot", description="new words")
    assert [e["field"] for e in caught.value.errors] == ["name"]
    assert SystemRow.objects.get(slug="my-bot").name == "Kept"


def test_a_file_is_submitted_and_scored(hub_for):
    owner = factories.user()
    system = factories.system(owner)
    prompts = factories.prompt_set(3)
    responses = factories.txt("one", "two", "three")

    submission = hub_for(owner).systems.submit(system.slug, prompts.slug, responses)

    assert isinstance(submission, Submission)
    assert submission.status == "scored"  # Celery is eager in the tests
    row = SubmissionRow.objects.get(system=system)
    assert str(row.public_id) == submission.id
    assert row.responses.count() == 3


def test_rows_are_submitted_as_json_lines(hub_for):
    owner = factories.user()
    system = factories.system(owner)
    prompts = factories.prompt_set(2)
    rows = [{"prompt": "1", "response": "hi"}, {"prompt": "2", "response": "hello"}]

    submission = hub_for(owner).systems.submit(system.slug, prompts.slug, rows=rows)

    assert submission.format == "jsonl"
    row = SubmissionRow.objects.get(system=system)
    assert sorted(row.responses.values_list("text", flat=True)) == ["hello", "hi"]


def test_a_file_with_a_wrong_line_answers_that_line(hub_for):
    owner = factories.user()
    system = factories.system(owner)
    prompts = factories.prompt_set(2)

    with pytest.raises(EvalHubError) as caught:
        hub_for(owner).systems.submit(
            system.slug, prompts.slug, rows=[{"prompt": "1", "response": "hi"}, {"nope": 1}]
        )
    assert caught.value.status == 400
    assert caught.value.errors[0]["line"] == 2
    assert not SubmissionRow.objects.exists()


def test_a_submission_is_read_and_waited_for_and_listed(hub_for):
    owner = factories.user()
    system = factories.system(owner)
    made = factories.submission(system, factories.prompt_set(2))
    hub = hub_for(owner)

    waited = hub.submissions.wait(str(made.public_id), timeout=5, interval=0.1)
    listed = hub.systems.submissions(system.slug).all()

    assert waited.status == "scored"
    assert [s.id for s in listed] == [str(made.public_id)]


def test_staff_create_a_prompt_set_from_dicts_and_read_its_prompts(hub_for):
    hub = hub_for(factories.user(staff=True))
    prompts = [{"id": "p1", "context": ["hello ?"]}, {"id": "p2", "context": ["bye ?"]}]

    created = hub.prompt_sets.create("greetings", "Greetings", prompts=prompts)
    detail = hub.prompt_sets.get("greetings")

    assert created.prompt_count == 2
    assert isinstance(detail, PromptSetDetail)
    assert len(detail.prompts) == 2
    assert PromptSet.objects.get(slug="greetings").prompts.count() == 2
    assert [p.slug for p in hub.prompt_sets.list(search="greet")] == ["greetings"]


def test_a_researcher_may_not_create_a_prompt_set(hub_for):
    with pytest.raises(EvalHubError) as caught:
        hub_for(factories.user()).prompt_sets.create(
            "greetings", "Greetings", EXAMPLES / "prompts.txt"
        )
    assert caught.value.status == 403
    assert not PromptSet.objects.filter(slug="greetings").exists()


# Endpoints


def test_an_endpoint_is_set_read_changed_probed_and_removed(hub_for):
    owner = factories.user()
    system = factories.system(owner)
    hub = hub_for(owner)

    hub.endpoints.put(system.slug, url="http://127.0.0.1:9/v1", model_name="m")
    hub.endpoints.update(system.slug, timeout_seconds=2)
    read = hub.endpoints.get(system.slug)
    probe = hub.endpoints.test(system.slug)  # nothing listens on the discard port
    calls = hub.endpoints.calls(system.slug).all()
    hub.endpoints.delete(system.slug)

    assert read["url"] == "http://127.0.0.1:9/v1"
    assert read["timeout_seconds"] == 2
    assert probe["ok"] is False
    assert len(calls) == 1
    assert not BotEndpoint.objects.filter(system=system).exists()


# Campaigns


def test_a_campaign_is_created_read_and_previewed(hub_for):
    owner = factories.user()
    hub = hub_for(owner)

    ab_campaign_through_the_api(hub, owner)
    detail = hub.campaigns.get("mine-ab")
    items = hub.campaigns.items("mine-ab").all()
    item = hub.campaigns.item("mine-ab", 0)
    preview = hub.campaigns.preview("mine-ab", 0, {"choice": "left"})

    assert isinstance(detail, CampaignDetail)
    assert detail.status == "draft"
    assert len(items) == Campaign.objects.get(slug="mine-ab").items.count() == 4
    assert item["position"] == 0
    assert "errors" not in preview
    assert [c.slug for c in hub.campaigns.list(status="draft")] == ["mine-ab"]


def test_a_campaign_is_created_from_conversation_and_gold_files(hub_for):
    hub = hub_for(factories.user(staff=True))

    setup = hub.campaigns.create(
        conversations=EXAMPLES / "conversations.jsonl",
        gold_items=EXAMPLES / "gold-and-training.jsonl",
        task_kind="abc_eval",
        title="Empathy",
        slug="example-empathy",
        task_config={"behaviour_task": "empathy"},
        requires_training=True,
    )

    assert setup["campaign"]["slug"] == "example-empathy"
    made = Campaign.objects.get(slug="example-empathy")
    assert made.requires_training
    assert made.items.filter(role="gold").exists()
    assert made.items.filter(role="task").exists()


def test_staff_launch_pause_and_finish_a_campaign(hub_for):
    staff = factories.user(staff=True)
    hub = hub_for(staff)
    ab_campaign_through_the_api(hub, staff)

    assert hub.campaigns.launch("mine-ab").status == "live"
    assert hub.campaigns.pause("mine-ab").status == "paused"
    assert hub.campaigns.finish("mine-ab").status == "finished"
    assert Campaign.objects.get(slug="mine-ab").status == "finished"


def test_a_campaigns_figures_are_read(hub_for):
    owner = factories.user()
    hub = hub_for(owner)
    ab_campaign_through_the_api(hub, owner)

    progress = hub.campaigns.progress("mine-ab")
    judgments = hub.campaigns.judgments("mine-ab")
    workers = hub.campaigns.workers("mine-ab").all()
    stopping = hub.campaigns.stopping("mine-ab")

    assert (progress.items_done, progress.items_needed) == (0, 4)
    assert judgments.count == 0
    assert workers == []
    assert stopping["adjacent_pairs"] == 0


def test_a_campaigns_judgments_are_listed_and_read(hub_for):
    owner = factories.user()
    made = judged_campaign(owner)
    hub = hub_for(owner)

    judgments = hub.campaigns.judgments(made.slug, ordering="submitted_at").all()
    one = hub.campaigns.judgment(judgments[0].id)

    assert sorted(j.id for j in judgments) == sorted(
        Judgment.objects.filter(campaign=made).values_list("id", flat=True)
    )
    assert one.campaign == made.slug


def test_a_campaign_is_exported_as_csv_and_json_lines(hub_for):
    owner = factories.user()
    made = judged_campaign(owner)
    hub = hub_for(owner)
    csv_file, jsonl_file = io.BytesIO(), io.BytesIO()

    written = hub.campaigns.export(made.slug, csv_file, format="csv")
    hub.campaigns.export(made.slug, jsonl_file, format="jsonl")

    assert written == len(csv_file.getvalue())
    assert len(csv_file.getvalue().decode().strip().splitlines()) == 1 + 2  # header, judgments
    lines = [json.loads(line) for line in jsonl_file.getvalue().decode().splitlines()]
    assert len(lines) == Judgment.objects.filter(campaign=made).count() == 2


def test_a_campaign_is_exported_as_a_hugging_face_dataset(hub_for):
    owner = factories.user()
    made = judged_campaign(owner)
    bundle = io.BytesIO()

    written = hub_for(owner).campaigns.dataset(made.slug, bundle, license="cc-by-4.0")

    assert written == len(bundle.getvalue())
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
        card = archive.read("README.md").decode()
    assert any(name.endswith(".parquet") for name in names)
    assert 'license: "cc-by-4.0"' in card


def test_an_export_of_a_campaign_one_may_not_see_is_an_error(hub_for):
    staff = factories.user(staff=True)
    ab_campaign_through_the_api(hub_for(staff), staff)

    with pytest.raises(EvalHubError) as caught:
        hub_for(factories.user()).campaigns.export("mine-ab", io.BytesIO())
    assert caught.value.status == 404


def test_a_launch_request_the_platform_cannot_take_is_refused_with_the_reason(hub_for):
    owner = factories.user()
    hub = hub_for(owner)
    ab_campaign_through_the_api(hub, owner)

    with pytest.raises(EvalHubError) as caught:
        hub.campaigns.request_launch("mine-ab", "prolific", sandbox=True)
    assert caught.value.status == 400
    assert caught.value.messages[0]
    assert Campaign.objects.get(slug="mine-ab").status == "draft"


def test_a_local_campaigns_crowd_figures_are_read(hub_for):
    staff = factories.user(staff=True)
    hub = hub_for(staff)
    ab_campaign_through_the_api(hub, staff)

    estimate = hub.crowd.estimate("mine-ab")
    synced = hub.crowd.sync("mine-ab")

    assert (estimate["provider"], estimate["pays_crowdworkers"]) == ("local", False)
    assert hub.crowd.review("mine-ab") == []
    assert synced["submitted"] == 0
    assert Campaign.objects.get(slug="mine-ab").provider == "local"


def test_the_planner_says_why_it_cannot_plan_a_pilot_yet(hub_for):
    owner = factories.user()
    hub = hub_for(owner)
    ab_campaign_through_the_api(hub, owner)

    with pytest.raises(EvalHubError) as caught:
        hub.campaigns.plan("mine-ab", pilot=True)
    assert caught.value.status == 400
    assert "at least 10 judgments" in caught.value.messages[0]


# Tournaments and analyses


def test_a_tournament_is_created_and_read(hub_for):
    owner = factories.user()
    systems = [bot_system(owner, visibility="public").slug for _ in range(2)]
    hub = hub_for(owner)

    created = hub.tournaments.create(
        "cup", "Cup", "spot_the_bot", systems=systems, domain="chitchat"
    )
    progress = hub.tournaments.progress("cup")

    assert created.status == "planning"
    assert hub.tournaments.get("cup").systems == systems
    assert progress["status"] == "planning"
    assert [t.slug for t in hub.tournaments.list()] == ["cup"]


def test_results_before_any_analysis_are_an_error(hub_for):
    owner = factories.user()
    systems = [bot_system(owner, visibility="public").slug for _ in range(2)]
    hub = hub_for(owner)
    hub.tournaments.create("cup", "Cup", "spot_the_bot", systems=systems, domain="chitchat")

    with pytest.raises(EvalHubError) as caught:
        hub.tournaments.results("cup")
    assert caught.value.status == 404
    assert hub.analyses.list(tournament="cup").count == 0


def test_an_analysed_tournaments_results_and_run_are_read(hub_for):
    owner = factories.user()
    tournament = bare_tournament(owner)
    run = stored_run(tournament)
    hub = hub_for(owner)

    results = hub.tournaments.results(tournament.slug)
    detail = hub.analyses.get(run.id)
    listed = hub.analyses.list(tournament=tournament.slug).all()

    assert results["ranking"] == run.result["ranking"]
    assert (detail.status, detail.result["ranking"]) == ("succeeded", run.result["ranking"])
    assert [r.id for r in listed] == [run.id]


def test_an_analysis_of_a_tournament_without_judgments_is_refused(hub_for):
    owner = factories.user()
    tournament = bare_tournament(owner)

    with pytest.raises(EvalHubError) as caught:
        hub_for(owner).analyses.request(tournament.slug)
    assert caught.value.status == 400
    assert not AnalysisRun.objects.filter(tournament=tournament).exists()


# Arenas


def test_an_arenas_leaderboard_moderation_and_battles_are_read(hub_for):
    owner = factories.user()
    made = arena(owner, systems=[bot_system(owner), bot_system(owner)], slug="lab")
    hub = hub_for(owner)
    battles = io.BytesIO()

    leaderboard = hub.arenas.leaderboard("lab")
    hub.arenas.update_moderation("lab", battles_per_day=7)
    moderation = hub.arenas.moderation("lab")
    hub.arenas.export_battles("lab", battles)

    assert leaderboard["battles"] == 0
    assert moderation["battles_per_day"] == 7
    assert Arena.objects.get(pk=made.pk).battles_per_day == 7
    assert hub.arenas.flags("lab").all() == []
    assert battles.getvalue() == b""


# Judges


def test_a_rubric_is_created_and_revised(hub_for):
    hub = hub_for(factories.user())
    instructions = "$context\n1: $response_1\n2: $response_2\n$answer_format"

    rubric = hub.rubrics.create("ab", "terse", instructions)
    revised = hub.rubrics.revise(rubric.id, instructions + "\nBe brief.")

    assert isinstance(rubric, Rubric)
    assert revised.id == rubric.id  # no run used it yet: changed in place
    assert RubricRow.objects.get(name="terse").instructions.endswith("Be brief.")
    assert hub.rubrics.get(rubric.id).instructions.endswith("Be brief.")
    assert [r.id for r in hub.rubrics.list()] == [rubric.id]


def test_a_judge_runs_over_a_campaign(hub_for):
    owner = factories.user(staff=True)
    hub = hub_for(owner)

    run = judge_run(hub, owner)
    progress = hub.judge_runs.progress(run.id)

    assert isinstance(run, JudgeRun)
    assert progress.items_total == 4
    assert JudgeRunRow.objects.get(pk=run.id).campaign.slug == "mine-ab"
    assert [j.slug for j in hub.judges.list()] == ["my-judge"]
    assert hub.judge_runs.get(run.id).judge == "my-judge"
    assert hub.judge_runs.judgments(run.id).count == progress.items_done + progress.items_failed
    assert progress.status == "failed"
    assert "cannot connect" in progress.last_error


def test_a_judges_own_endpoint_is_read_changed_and_tested_by_its_id(hub_for):
    from endpoints.models import BotEndpoint

    owner = factories.user()
    hub = hub_for(owner)
    made = hub.judges.create(
        "my-judge", "My judge", {"url": NOWHERE, "model_name": "judge-7b", "auth_token": "sk-1"}
    )
    endpoint_id = made.endpoint["id"]

    changed = hub.model_endpoints.update(endpoint_id, daily_budget=77)
    probe = hub.model_endpoints.test(endpoint_id)

    assert hub.model_endpoints.get(endpoint_id)["model_name"] == "judge-7b"
    assert changed["daily_budget"] == 77 and "auth_token" not in changed
    assert probe["ok"] is False
    assert hub.model_endpoints.calls(endpoint_id).count == 1
    stored = BotEndpoint.objects.get(pk=endpoint_id)
    assert (stored.system, stored.owner, stored.daily_budget) == (None, owner, 77)


def test_a_failed_judge_run_cannot_be_paused(hub_for):
    owner = factories.user(staff=True)
    hub = hub_for(owner)
    run = judge_run(hub, owner)

    with pytest.raises(EvalHubError) as caught:
        hub.judge_runs.pause(run.id)
    assert caught.value.status == 400
    assert JudgeRunRow.objects.get(pk=run.id).status == "failed"


# Conversations and partner sets


def test_staff_import_conversations_from_the_example_file(hub_for):
    hub = hub_for(factories.user(staff=True))

    report = hub.conversations.import_file(EXAMPLES / "conversations.jsonl")

    assert report["created"] >= 1


def test_a_partner_set_is_created_and_listed(hub_for):
    owner = factories.user()
    systems = [factories.system(owner, visibility="public").slug for _ in range(2)]
    hub = hub_for(owner)

    hub.partner_sets.create("partners", "Partners", systems)

    assert [p["slug"] for p in hub.partner_sets.list()] == ["partners"]
    assert json.dumps(hub.conversations.seed_domains())


def test_a_webhook_is_subscribed_tested_read_and_deleted(hub_for):
    from tests.webhooks.subscriber import Subscriber
    from webhooks.models import Subscription

    owner = factories.user()
    hub = hub_for(owner)
    with Subscriber() as server:
        made = hub.webhooks.create(server.url, ["analysis.ready"], "the lab's pipeline")
        hub.webhooks.test(made["id"])
        [message] = server.verified(made["secret"])

    assert message["type"] == "webhook.test"
    assert [s["id"] for s in hub.webhooks.list()] == [made["id"]]
    assert "secret" not in hub.webhooks.get(made["id"])
    assert [d["status"] for d in hub.webhooks.deliveries(made["id"])] == ["delivered"]
    hub.webhooks.delete(made["id"])
    assert not Subscription.objects.filter(owner=owner).exists()
