"""A researcher runs a bipartite-play Spot The Bot tournament from the pages alone: two of
her systems served by the local OpenAI-compatible fake, a partner set she makes, collection,
the campaign generated, its paid launch requested and approved by staff; workers judge it in
their browsers and the leaderboard ranks her targets and shows the partners apart (analysed
with the "as published" preset)."""

import hashlib
import re

import pytest
from playwright.sync_api import expect

from annotation.crowd import PROVIDERS
from annotation.crowd.prolific import ProlificProvider
from annotation.models import Campaign, Item, LaunchRequest
from endpoints.models import BotEndpoint
from evalhub.models import Conversation, Speaker, Turn
from tests import factories
from tests.annotation.crowd.fake_prolific import FakeProlific
from tests.endpoints import openai_fake
from tournaments.models import PartnerSet, Tournament

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "Analytical-Engine-1843"
FEATURES = ("sensibleness", "specificity", "fluency")
# How the workers see each speaker: the strong target passes for a person, the weak one is
# spotted, the partners leave them unsure.
LABEL = {"ada-13b": "human", "ada-7b": "bot", "p-one": "unsure", "p-two": "unsure"}


@pytest.fixture
def prolific(settings, monkeypatch):
    monkeypatch.setitem(PROVIDERS, "prolific", ProlificProvider(sleep=lambda s: None))
    with FakeProlific() as fake_prolific:
        settings.EVALHUB_PROLIFIC_API_URL = fake_prolific.url
        settings.EVALHUB_PROLIFIC_TOKEN = "sekrit"
        settings.EVALHUB_PUBLIC_URL = "https://evalhub.example.org"
        yield fake_prolific


@pytest.fixture
def fake():
    with openai_fake.FakePool() as pool:
        yield pool.start(openai_fake.counting)


def seed_conversations():
    for i in range(2):
        c = Conversation.objects.create(
            external_id=f"hh-{i}", domain="garden", source="human-human"
        )
        Speaker.objects.bulk_create([Speaker(conversation=c, index=n) for n in (0, 1)])
        Turn.objects.bulk_create(
            Turn(conversation=c, position=p, speaker=p % 2, text=f"human {i} line {p}")
            for p in range(4)
        )


def log_in(page, username):
    page.goto("/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.locator("main form button[type=submit]").click()


def judge_everything(browser, base_url, worker) -> int:
    """One Prolific participant takes batch after batch (a new submission each), labelling
    speakers by LABEL; the batches done."""
    context = browser.new_context(base_url=base_url)
    context.set_default_timeout(15_000)
    context.route(
        "https://app.prolific.com/**",
        lambda route: route.fulfill(status=200, body="<p>Prolific: thanks</p>"),
    )
    page = context.new_page()
    slug = Tournament.objects.get().campaign.slug

    def start():
        # Prolific's ids are 24 hexadecimal digits (annotation/crowd/prolific.py checks them).
        pid = hashlib.sha256(worker.encode()).hexdigest()[:24]
        session = hashlib.sha256(f"{worker}-{batches}".encode()).hexdigest()[:24]
        return f"/work/{slug}/?PROLIFIC_PID={pid}&STUDY_ID=study1&SESSION_ID={session}"

    batches = 0
    page.goto(start())
    while page.locator("form.task-form").count():
        while page.locator("form.task-form").count():
            action = page.locator("form.task-form").get_attribute("action")
            item = Item.objects.get(pk=int(re.search(r"/items/(\d+)/", action).group(1)))
            for index, system in enumerate(item.content["meta"]["speakers"]):
                page.locator(f'input[name="label_{index}"][value="{LABEL[system]}"]').check()
            for feature in FEATURES:
                page.locator(f'input[name="better_{feature}"][value="none"]').check()
            page.locator("form.task-form button[type=submit]").last.click()
            # The next item comes in place (no page load), or the page leaves for the end.
            expect(page.locator(f'form.task-form[action="{action}"]')).to_have_count(0)
        page.get_by_text("Prolific: thanks").wait_for()
        batches += 1
        page.goto(start())
    context.close()
    return batches


def test_a_researcher_runs_a_bipartite_play_tournament_without_the_admin(
    page, browser, live_server, fake, prolific, screenshot
):
    ada = factories.user("ada", password=PASSWORD)
    factories.user("boss", password=PASSWORD, staff=True)
    targets = [factories.system(ada, slug=s, name=s.title()) for s in ("ada-7b", "ada-13b")]
    partner_owner = factories.user("pat")
    for slug in ("p-one", "p-two"):
        partner = factories.system(partner_owner, slug=slug, name=slug.title())
        # Partners serve other owners' tournaments by consent.
        BotEndpoint.objects.create(
            system=partner,
            protocol="openai",
            url=fake.base_url,
            model_name=f"{slug}-chat",
            allow_other_owners=True,
        )
    seed_conversations()
    log_in(page, "ada")

    # Her two systems get OpenAI-compatible endpoints on their pages.
    for system in targets:
        page.goto(f"/systems/{system.slug}/")
        page.get_by_role("link", name="Register an endpoint").click()
        page.select_option("#id_protocol", "openai")
        page.fill("#id_url", fake.base_url)
        page.fill("#id_model_name", f"{system.slug}-chat")
        page.get_by_role("button", name="Register").click()
        page.get_by_text("Token:").first.wait_for()
    assert BotEndpoint.objects.count() == 4

    # A partner set of the two partners.
    page.goto("/tournaments/partner-sets/new/")
    page.fill("#id_name", "Garden partners")
    page.fill("#id_slug", "garden-partners")
    page.locator('input[name="systems"][value="p-one"]').check()
    page.locator('input[name="systems"][value="p-two"]').check()
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_text("Created the partner set Garden partners v1.")).to_be_visible()
    partner_set = PartnerSet.objects.get(slug="garden-partners")

    # The tournament: the domain comes from the list of domains with seed conversations.
    assert page.locator('#seed-domains option[value="garden"]').count() == 1
    page.fill("#id_name", "Ada garden cup")
    page.fill("#id_slug", "ada-cup")
    page.fill("#id_domain", "garden")
    for system in targets:
        page.locator(f'input[name="systems"][value="{system.slug}"]').check()
    page.select_option("#id_schedule", "bipartite-play")
    page.select_option("#id_partner_set", str(partner_set.pk))
    page.fill("#id_conversations_per_pair", "1")
    page.fill("#id_exchanges", "3")
    page.fill("#id_segment_lengths", "1, 2")
    page.fill("#id_human_share", "0")
    page.fill("#id_batch_size", "8")
    page.fill("#id_judgments_per_segment", "2")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_test_id("tournament-status")).to_be_visible()
    tournament = Tournament.objects.get(slug="ada-cup")
    assert tournament.owner == ada and tournament.schedule == "bipartite-play"

    # Collection: each target talks with each partner once, the target first.
    page.get_by_role("button", name="Start collection").click()
    page.get_by_test_id("collection").get_by_text("4 / 4").wait_for()
    assert {r["model"] for r in fake.requests} == {
        "ada-7b-chat",
        "ada-13b-chat",
        "p-one-chat",
        "p-two-chat",
    }

    page.get_by_role("button", name="Generate the campaign").click()
    expect(page.get_by_text("Campaign generated")).to_be_visible()
    # She pays Prolific participants. No page edits a generated campaign's platform yet, so
    # the test moves it to Prolific (with the tournament's reward) in the database.
    tournament.refresh_from_db()
    Campaign.objects.filter(pk=tournament.campaign_id).update(
        provider="prolific", reward_per_batch=2
    )
    page.get_by_role("button", name="Launch the campaign").click()
    expect(page.get_by_text("Launch requested")).to_be_visible()
    request = LaunchRequest.objects.get(campaign=tournament.campaign_id)
    assert (request.state, request.requested_by) == ("pending", ada)
    tournament.refresh_from_db()
    assert (tournament.status, tournament.campaign.status) == ("ready", "draft")
    assert not prolific.calls("POST", "studies/")

    # Staff approve the launch on the campaign's page; the study goes up on Prolific.
    page.get_by_role("button", name="Log out").click()
    log_in(page, "boss")
    page.goto(f"/manage/campaigns/{tournament.campaign.slug}/")
    page.get_by_label("Approving launches it now and pays workers").check()
    page.get_by_role("button", name="Approve and launch").click()
    page.get_by_text("Approved: the campaign is launched.").wait_for()
    tournament.refresh_from_db()
    assert (tournament.status, tournament.campaign.status) == ("annotating", "live")
    assert tournament.campaign.platform_ref == "study1"
    assert LaunchRequest.objects.get(pk=request.pk).decided_by.username == "boss"
    page.get_by_role("button", name="Log out").click()
    log_in(page, "ada")
    page.goto(f"/tournaments/{tournament.slug}/")
    expect(page.get_by_test_id("tournament-status")).to_have_text("Being annotated")
    screenshot("tournament-researcher")

    # Each participant's submission is one batch; the segments are judged twice.
    for worker in ("w1", "w2", "w3", "w4"):
        judge_everything(browser, live_server.url, worker)
    shown = tournament.campaign.items.filter(role="task", batch__isnull=False).count()
    assert shown >= 4 and tournament.campaign.judgments.count() == 2 * shown

    # Results with the paper's statistics, chosen on the leaderboard page.
    page.get_by_role("link", name="Results and analysis settings").click()
    page.locator('input[name="preset"][value="as-published"]').check()
    page.get_by_role("button", name=re.compile("Run")).click()
    ranking = page.locator("table.ranking tbody tr")
    expect(ranking.first).to_be_visible(timeout=60_000)
    order = [row.get_attribute("data-system") for row in ranking.all()]
    assert order.index("ada-13b") < order.index("ada-7b")
    # The partners are shown apart, under their own heading, and never ranked.
    assert not {"p-one", "p-two"} & set(order)
    expect(page.get_by_role("heading", name="Dialogue partners")).to_be_visible()
    partners = page.locator("#partners table.partners tbody tr")
    assert sorted(r.get_attribute("data-partner") for r in partners.all()) == ["p-one", "p-two"]
    expect(page.locator("details summary", has_text="Zhao & Sun")).to_have_count(1)
    # The campaign closed itself once judged, which ran the default analysis as well.
    run = tournament.analysis_runs.get(parameters__pair_test="chi-square-2x2")
    assert run.requested_by == ada
