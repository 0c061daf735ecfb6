"""A study's day end to end in the browser, on a fresh database, one test per role (issue 24).

The researcher registers an endpoint this deployment refuses, then one answering HTTP 400,
reads why on the page, fixes it; runs a Spot The Bot tournament of her two systems (paid on
Prolific) and an ABC-Eval campaign of her own conversations (paid on MTurk's production
site), sets their pay on their pages and requests both launches. Staff approve them against
the local Prolific stand-in and MTurk's API answered by botocore's Stubber. Prolific
participants and MTurk workers finish them; the researcher reads her notices and the
results.

Each role's part is a chapter below; the test of a role walks the chapters before it (as
the other people would, through the pages) and then its own. Only the pages are used to act;
the database is read to check, never written while a page is open.
"""

import hashlib
import html
import json
import re
from decimal import Decimal

import boto3
import pytest
from botocore.stub import Stubber
from playwright.sync_api import expect

from annotation.crowd import PROVIDERS
from annotation.crowd.mturk import MTurkProvider
from annotation.crowd.prolific import ProlificProvider
from annotation.models import Assignment, Campaign, Item, Judgment, LaunchRequest
from endpoints.models import BotEndpoint, EndpointCall
from evalhub.models import Conversation, Notice, Speaker, Turn
from tests import factories
from tests.annotation.crowd.fake_prolific import FakeProlific
from tests.browser.test_crowd_platforms import FakeExternalSubmit
from tests.endpoints import openai_fake
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "Analytical-Engine-1843"
STAFF_PASSWORD = "Staff-Approves-1"
REFUSED_URL = "http://10.9.8.7:8111/v1"  # a private address this deployment does not allow
TOURNAMENT = "ada-cup"
ABC = "ada-abc"
# How Prolific participants label each speaker: the 13b passes for a person, the 7b not.
LABEL = {"ada-7b": "bot", "ada-13b": "human"}
FEATURES = ("sensibleness", "specificity", "fluency")


class StubbedMTurk:
    """MTurk's API client: every call but the balance goes to a boto3 client under botocore's
    Stubber, which answers in the order queued and fails on anything unexpected. The balance
    (each view of an MTurk campaign's page asks for it) is always 100.00 USD."""

    def __init__(self):
        self.client = boto3.client(
            "mturk", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t"
        )
        self.stub = Stubber(self.client)
        self.calls: list[tuple[str, dict]] = []

    def get_account_balance(self, **params):
        return {"AvailableBalance": "100.00"}

    def __getattr__(self, operation):
        method = getattr(self.client, operation)

        def call(**params):
            self.calls.append((operation, params))
            return method(**params)

        return call

    def question_urls(self) -> list[str]:
        """The task URLs the HITs point workers to (their ExternalQuestion)."""
        return [
            html.unescape(re.search(r"<ExternalURL>(.*)</ExternalURL>", p["Question"]).group(1))
            for operation, p in self.calls
            if operation == "create_hit_with_hit_type"
        ]


@pytest.fixture
def bots():
    """The working bot (OpenAI-compatible, counting what it heard) and one answering 400."""
    with openai_fake.FakePool() as pool:
        working = pool.start(openai_fake.counting)
        bad_request = pool.start(
            lambda payload: openai_fake.Reply(
                400, b'{"error": {"message": "unknown model", "type": "invalid_request_error"}}'
            )
        )
        yield working, bad_request


@pytest.fixture
def platforms(settings, monkeypatch):
    """Prolific's stand-in, MTurk's stubbed API and MTurk's externalSubmit on 127.0.0.1."""
    mturk = StubbedMTurk()
    submit = FakeExternalSubmit()
    monkeypatch.setitem(PROVIDERS, "prolific", ProlificProvider(sleep=lambda s: None))
    monkeypatch.setitem(
        PROVIDERS, "mturk", MTurkProvider(client_factory=lambda sandbox: mturk, sleep=lambda s: 0)
    )
    settings.EVALHUB_PUBLIC_URL = "https://evalhub.example.org"
    settings.EVALHUB_MTURK_SUBMIT_ORIGINS = [submit.origin]
    settings.EVALHUB_PROLIFIC_TOKEN = "sekrit"
    try:
        with FakeProlific() as prolific, mturk.stub:
            settings.EVALHUB_PROLIFIC_API_URL = prolific.url
            yield prolific, mturk, submit
    finally:
        submit.close()


@pytest.fixture
def people():
    """Who exists before the day: the researcher with her two systems, staff, and the
    human-human conversations of the domain that seed the tournament's dialogues."""
    ada = factories.user("ada", password=PASSWORD)
    factories.user("boss", password=STAFF_PASSWORD, staff=True)
    for slug in ("ada-7b", "ada-13b"):
        factories.system(ada, slug=slug, name=slug.title())
    for i in range(2):
        c = Conversation.objects.create(
            external_id=f"hh-{i}", domain="garden", source="human-human"
        )
        Speaker.objects.bulk_create([Speaker(conversation=c, index=n) for n in (0, 1)])
        Turn.objects.bulk_create(
            Turn(conversation=c, position=p, speaker=p % 2, text=f"human {i} line {p}")
            for p in range(4)
        )
    return ada


def log_in(page, username, password):
    page.goto("/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.locator("main form button[type=submit]").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def log_out(page):
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("link", name="Log in")).to_be_visible()


def conversations_file(tmp_path) -> str:
    """Her own log of people talking with her 13b: the ABC-Eval campaign's conversations."""
    lines = []
    for n in range(2):
        turns = [
            {"speaker": i % 2, "text": f"talk {n}, turn {i}: about the tomatoes in my garden"}
            for i in range(10)
        ]
        speakers = ["human", "ada-13b"]
        lines.append(
            {"id": f"ada-talk-{n}", "domain": "garden", "speakers": speakers, "turns": turns}
        )
    path = tmp_path / "ada-talks.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


# -- The researcher's morning ----------------------------------------------------------------


def register_endpoint(page, system: str, url: str, model: str):
    page.get_by_role("navigation").get_by_role("link", name="Systems").click()
    page.get_by_role("link", name=system.title(), exact=True).click()
    page.get_by_role("link", name="Register an endpoint").click()
    page.select_option("#id_protocol", "openai")
    page.fill("#id_url", url)
    page.fill("#id_model_name", model)
    page.get_by_role("button", name="Register").click()
    expect(page.get_by_text(f"Saved the endpoint of {system.title()}.")).to_be_visible()


def change_url(page, url: str):
    page.fill("#id_url", url)
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Saved the endpoint")).to_be_visible()


def try_connection(page):
    page.get_by_role("button", name="Test connection").click()
    flash = page.locator(".message").filter(has_text=re.compile("connection test|Connected in"))
    expect(flash).to_be_visible()
    return flash.inner_text()


def fix_the_failing_endpoint(page, bots):
    working, bad_request = bots
    # A local model on a private address: saved, with the reason it will fail, at once.
    register_endpoint(page, "ada-13b", REFUSED_URL, "ada-13b-chat")
    expect(page.locator("#url-warning")).to_contain_text("This EvalHub will refuse to call")
    told = try_connection(page)
    assert "The connection test failed" in told and "may not reach" in told, told
    # Another address, where the server answers 400: the page says so.
    change_url(page, bad_request.base_url)
    expect(page.locator("#url-warning")).to_have_count(0)
    told = try_connection(page)
    assert "The connection test failed" in told and "400" in told, told
    # The right server: the bot's answer.
    change_url(page, working.base_url)
    told = try_connection(page)
    assert "Connected in" in told and "ada-13b-chat: heard 1, 0 mine" in told, told
    expect(page.locator("table.calls tbody tr")).to_have_count(3)
    endpoint = BotEndpoint.objects.get(system__slug="ada-13b")
    assert endpoint.url == working.base_url
    statuses = list(endpoint.calls.order_by("at").values_list("purpose", "status", "http_status"))
    assert [s[0] for s in statuses] == [EndpointCall.Purpose.TEST] * 3
    assert statuses[1][2] == 400 and statuses[2][1] == EndpointCall.Status.OK
    assert bad_request.requests and len(working.requests) == 1


def run_the_tournament(page):
    page.get_by_role("navigation").get_by_role("link", name="Tournaments").click()
    page.get_by_role("link", name="New Spot The Bot tournament").click()
    page.fill("#id_name", "Ada garden cup")
    page.fill("#id_slug", TOURNAMENT)
    page.fill("#id_domain", "garden")
    for system in LABEL:
        page.locator(f'input[name="systems"][value="{system}"]').check()
    page.select_option("#id_schedule", "all-play-all")
    page.fill("#id_conversations_per_pair", "1")
    page.fill("#id_exchanges", "3")
    page.fill("#id_segment_lengths", "2")
    page.fill("#id_human_share", "0")
    page.fill("#id_batch_size", "2")
    page.fill("#id_judgments_per_segment", "2")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_test_id("tournament-status")).to_be_visible()

    page.get_by_role("button", name="Start collection").click()
    collection = page.get_by_test_id("collection")
    expect(collection).to_contain_text("2 / 2")
    expect(collection.locator("li", has_text="failed")).to_have_text("0 failed")
    page.get_by_role("button", name="Generate the campaign").click()
    expect(page.get_by_text("Campaign generated")).to_be_visible()
    tournament = Tournament.objects.get(slug=TOURNAMENT)
    assert tournament.status == "ready" and tournament.campaign.provider == "local"

    # Its campaign pays Prolific participants: chosen, with the reward, on its page.
    page.get_by_test_id("campaign-page").click()
    set_pay(page, provider="prolific", reward="1.20")
    expect(page.get_by_test_id("launch-problems")).to_have_count(0)
    page.get_by_role("navigation").get_by_role("link", name="Tournaments").click()
    page.get_by_role("link", name="Ada garden cup").click()
    page.get_by_role("button", name="Launch the campaign").click()
    expect(page.get_by_text("Launch requested")).to_be_visible()
    campaign = Campaign.objects.get(pk=tournament.campaign_id)
    assert (campaign.provider, campaign.reward_per_batch, campaign.status) == (
        "prolific",
        Decimal("1.20"),
        "draft",
    )


def set_pay(page, *, provider: str, reward: str, site: str | None = None):
    settings_form = page.get_by_test_id("crowd-settings")
    settings_form.locator("#id_provider").select_option(provider)
    if site:
        settings_form.locator("#id_mturk_site").select_option(site)
    settings_form.locator("#id_reward_per_batch").fill(reward)
    settings_form.get_by_role("button", name="Save pay and limits").click()
    expect(page.get_by_text("Saved the campaign's pay and limits.")).to_be_visible()


def create_the_abc_eval_campaign(page, tmp_path):
    page.get_by_role("link", name="My campaigns").click()
    page.get_by_role("link", name="New campaign").click()
    page.select_option("#id_task_kind", "abc_eval")
    page.fill("#id_title", "Ada 13b: behaviours")
    page.fill("#id_slug", ABC)
    page.fill("#id_instructions", "Read the whole conversation, then label each bot turn.")
    page.fill("#id_task_config", '{"behaviour_task": "consistency"}')
    page.fill("#id_redundancy", "2")
    page.fill("#id_batch_size", "2")
    page.fill("#id_reward_per_batch", "0.80")
    page.select_option("#id_provider", "mturk")
    page.set_input_files("#id_conversations", conversations_file(tmp_path))
    page.get_by_role("button", name="Create draft campaign").click()
    page.wait_for_url(f"**/manage/campaigns/{ABC}/")
    expect(page.locator(".message.success")).to_contain_text("2 items in 1 batch")
    # MTurk's sandbox pays nobody; she wants real workers.
    set_pay(page, provider="mturk", site="production", reward="0.80")
    page.get_by_role("button", name="Request launch").click()
    expect(page.get_by_text("Launch requested: staff will approve or decline it.")).to_be_visible()
    expect(page.get_by_test_id("launch-request")).to_contain_text("Waiting for staff")
    campaign = Campaign.objects.get(slug=ABC)
    assert (campaign.owner.username, campaign.provider, campaign.platform_sandbox) == (
        "ada",
        "mturk",
        False,
    )


def researcher_morning(page, bots, tmp_path):
    log_in(page, "ada", PASSWORD)
    fix_the_failing_endpoint(page, bots)
    register_endpoint(page, "ada-7b", bots[0].base_url, "ada-7b-chat")
    run_the_tournament(page)
    create_the_abc_eval_campaign(page, tmp_path)
    requests = LaunchRequest.objects.order_by("campaign__slug")
    assert [(r.campaign.slug, r.provider, r.state, r.requested_by.username) for r in requests] == [
        (ABC, "mturk", "pending", "ada"),
        (Tournament.objects.get().campaign.slug, "prolific", "pending", "ada"),
    ]
    log_out(page)


# -- Staff ------------------------------------------------------------------------------------


def staff_approve(page, platforms):
    prolific, mturk, _ = platforms
    hits = Campaign.objects.get(slug=ABC).batches.count()
    mturk.stub.add_response(
        "create_qualification_type", {"QualificationType": {"QualificationTypeId": "BLOCK"}}
    )
    mturk.stub.add_response("create_hit_type", {"HITTypeId": "HT1"})
    for n in range(hits):
        mturk.stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": f"HIT{n}"}})

    log_in(page, "boss", STAFF_PASSWORD)
    page.get_by_role("link", name="Notices (2)").click()
    asks = page.locator(".notices li")
    expect(asks).to_have_count(2)
    for title in ("Ada 13b: behaviours", "Ada garden cup: human or bot?"):
        page.locator("header .user").get_by_role("link", name=re.compile("^Notices")).click()
        page.locator(".notices li a", has_text=title).click()
        expect(page.get_by_test_id("launch-request")).to_contain_text("requested by ada")
        expect(page.get_by_test_id("launch-problems")).to_have_count(0)
        page.get_by_label("Approving launches it now and pays workers").check()
        page.get_by_role("button", name="Approve and launch").click()
        expect(page.get_by_text("Approved: the campaign is launched.")).to_be_visible()
        expect(page.get_by_test_id("status")).to_have_text("Live")
    log_out(page)

    tournament = Tournament.objects.select_related("campaign").get()
    assert (tournament.status, tournament.campaign.status) == ("annotating", "live")
    assert tournament.campaign.platform_ref == "study1"
    assert len(prolific.calls("POST", "studies/")) == 1
    abc = Campaign.objects.get(slug=ABC)
    assert (abc.status, abc.platform_ref) == ("live", "HT1")
    assert sorted(abc.batches.values_list("platform_ref", flat=True)) == [
        f"HIT{n}" for n in range(hits)
    ]
    assert set(LaunchRequest.objects.values_list("state", "decided_by__username")) == {
        ("approved", "boss")
    }


# -- Workers ----------------------------------------------------------------------------------


def prolific_participant(browser, base_url, worker: str) -> int:
    """One Prolific participant takes batch after batch of the tournament (a new submission
    each), labelling speakers by LABEL; the batches done."""
    context = browser.new_context(base_url=base_url)
    context.set_default_timeout(15_000)
    context.route(
        "https://app.prolific.com/**",
        lambda route: route.fulfill(status=200, body="<p>Prolific: thanks</p>"),
    )
    page = context.new_page()
    slug = Tournament.objects.get().campaign.slug
    pid = hashlib.sha256(worker.encode()).hexdigest()[:24]
    batches = 0

    def start():
        session = hashlib.sha256(f"{worker}-{batches}".encode()).hexdigest()[:24]
        page.goto(f"/work/{slug}/?PROLIFIC_PID={pid}&STUDY_ID=study1&SESSION_ID={session}")

    start()
    while page.locator("form.task-form").count():
        while page.locator("form.task-form").count():
            action = page.locator("form.task-form").get_attribute("action")
            item = Item.objects.get(pk=int(re.search(r"/items/(\d+)/", action).group(1)))
            for index, system in enumerate(item.content["meta"]["speakers"]):
                page.locator(f'input[name="label_{index}"][value="{LABEL[system]}"]').check()
            for feature in FEATURES:
                page.locator(f'input[name="better_{feature}"][value="none"]').check()
            page.locator("form.task-form button[type=submit]").last.click()
            expect(page.locator(f'form.task-form[action="{action}"]')).to_have_count(0)
        page.get_by_text("Prolific: thanks").wait_for()
        batches += 1
        start()
    context.close()
    return batches


def mturk_worker(browser, base_url, task_url: str, n: int, submit):
    """An MTurk worker who accepted the HIT: MTurk opens its task URL with their ids, and the
    finished batch posts back to MTurk's externalSubmit."""
    context = browser.new_context(base_url=base_url)
    context.set_default_timeout(15_000)
    page = context.new_page()
    path = re.sub(r"^https://[^/]+", "", task_url)
    hit = Campaign.objects.get(slug=ABC).batches.get().platform_ref
    page.goto(f"{path}&assignmentId=ASG{n}&hitId={hit}&workerId=AW{n}&turkSubmitTo={submit.origin}")
    for position in (1, 2):
        expect(page.locator(".progress")).to_have_text(f"Item {position} of 2")
        if n == 1 and position == 1:
            page.locator("fieldset.turn-flags input[type=checkbox]").first.check()
        page.get_by_label("I checked every bot turn").check()
        page.get_by_role("button", name="Finish" if position == 2 else "Next").click()
    page.get_by_text("HIT submitted").wait_for()
    context.close()


def workers_finish(browser, base_url, platforms):
    prolific, mturk, submit = platforms
    # Once every HIT has its judgments the campaign finishes, which expires them on MTurk.
    for _hit in range(Campaign.objects.get(slug=ABC).batches.count()):
        mturk.stub.add_response("update_expiration_for_hit", {})
    [task_url] = mturk.question_urls()
    assert task_url.startswith("https://evalhub.example.org/work/ada-abc/?provider=mturk")
    for n in (1, 2):
        mturk_worker(browser, base_url, task_url, n, submit)
    assert sorted(form["assignmentId"][0] for _, form in submit.posts) == ["ASG1", "ASG2"]

    done = sum(prolific_participant(browser, base_url, w) for w in ("p1", "p2", "p3", "p4"))
    tournament = Tournament.objects.select_related("campaign").get()
    shown = tournament.campaign.items.filter(role="task", batch__isnull=False).count()
    assert done >= 2 and tournament.campaign.judgments.count() == 2 * shown

    abc = Campaign.objects.get(slug=ABC)
    assert Judgment.objects.filter(item__campaign=abc).count() == 4
    assert set(
        Assignment.objects.filter(campaign=abc, provider_ref__startswith="ASG").values_list(
            "status", flat=True
        )
    ) == {"submitted"}
    assert (abc.status, tournament.campaign.status) == ("finished", "finished")
    assert prolific.calls("POST", "studies/study1/transition/")
    mturk.stub.assert_no_pending_responses()


# -- The researcher's evening -----------------------------------------------------------------


def researcher_evening(page):
    log_in(page, "ada", PASSWORD)
    page.get_by_role("link", name=re.compile(r"Notices \(\d+\)")).click()
    notices = page.locator(".notices")
    for told in (
        'Your campaign "Ada 13b: behaviours" was approved and launched on Amazon',
        'Your campaign "Ada garden cup: human or bot?" was approved and launched on Prolific',
        "The campaign Ada 13b: behaviours has all its judgments and is finished.",
        "The campaign Ada garden cup: human or bot? has all its judgments and is finished.",
    ):
        expect(notices).to_contain_text(told)
    kinds = set(Notice.objects.filter(user__username="ada").values_list("kind", flat=True))
    assert {"launch_decided", "campaign_complete", "tournament_results"} <= kinds

    # The tournament's leaderboard: the 13b passed for a person, the 7b did not.
    page.get_by_role("link", name="The results of the tournament Ada garden cup are ready.").click()
    page.wait_for_url(f"**/tournaments/{TOURNAMENT}/")
    expect(page.get_by_test_id("tournament-status")).to_have_text("Finished")
    page.get_by_role("link", name="Results and analysis settings").click()
    ranking = page.locator("table.ranking tbody tr")
    expect(ranking.first).to_be_visible(timeout=60_000)
    order = [row.get_attribute("data-system") for row in ranking.all()]
    assert order.index("ada-13b") < order.index("ada-7b")

    # The ABC-Eval results, from her campaigns.
    page.get_by_role("link", name="My campaigns").click()
    page.get_by_role("link", name="Ada 13b: behaviours").click()
    expect(page.get_by_test_id("status")).to_have_text("Finished")
    page.locator("#campaign-results-link").click()
    page.wait_for_url(f"**/results/campaigns/{ABC}/")
    expect(page.locator("table.behaviour-rates tbody tr").first).to_be_visible(timeout=60_000)
    expect(page.locator("table.behaviour-rates")).to_contain_text("ada-13b")
    expect(page.get_by_text("The latest analysis failed")).to_have_count(0)
    # And back to the campaign, to export what the workers said.
    page.locator("#campaign-link").click()
    page.wait_for_url(f"**/manage/campaigns/{ABC}/")
    expect(page.get_by_role("link", name="Export CSV")).to_be_visible()


# -- One test per role -----------------------------------------------------------------------


def test_staff_approve_the_researchers_paid_launches(page, people, bots, platforms, tmp_path):
    researcher_morning(page, bots, tmp_path)
    staff_approve(page, platforms)


def test_workers_finish_the_launched_campaigns(
    page, browser, live_server, people, bots, platforms, tmp_path
):
    researcher_morning(page, bots, tmp_path)
    staff_approve(page, platforms)
    workers_finish(browser, live_server.url, platforms)


def test_the_researcher_walks_the_day_and_reads_the_results(
    page, browser, live_server, people, bots, platforms, tmp_path, screenshot
):
    researcher_morning(page, bots, tmp_path)
    staff_approve(page, platforms)
    workers_finish(browser, live_server.url, platforms)
    researcher_evening(page)
    screenshot("day-researcher-results")
