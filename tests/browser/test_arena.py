"""The arena in Chromium, with two fake OpenAI-compatible models streaming on 127.0.0.1:
a voter sees the tokens arrive on both sides, stops one, goes on for a second turn, votes
with a key, sees who was who, and the arena's leaderboard shows the vote; another voter
battles on a phone (an invitation link, no account); without JavaScript the same battle is
one form post per turn with whole answers."""

import pytest
from playwright.sync_api import expect

from arenas.models import Arena, Battle, BattleAnswer, Leaderboard
from tests import factories
from tests.arenas.builders import arena, bot_system
from tests.browser.test_phone_layout import login_cookie
from tests.endpoints import sse_fake

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _patient_expectations():
    """Models write for seconds, and a busy machine's cores are shared: wait longer than
    Playwright's 5 s default for what depends on them."""
    expect.set_options(timeout=30_000)
    yield
    expect.set_options(timeout=5_000)


SLOW = [f"wave{i} " for i in range(12)]  # 12 pieces, 0.25 s apart: 3 s of writing
LONG = [f"tide{i} " for i in range(200)]  # long enough to be stopped half-way


@pytest.fixture
def models(settings):
    settings.EVALHUB_ARENA_BOOTSTRAP_ROUNDS = 20
    with sse_fake.StreamingPool() as pool:
        one = pool.start(sse_fake.words(*SLOW, pause=0.25))
        two = pool.start(sse_fake.words(*LONG, pause=0.1))
        owner = factories.user()
        systems = [
            bot_system(owner, url=one.base_url, slug="surf-model", name="Surf Model"),
            bot_system(owner, url=two.base_url, slug="tide-model", name="Tide Model"),
        ]
        yield owner, systems


def side_of(battle, slug):
    return "a" if battle.system_a.slug == slug else "b"


def test_a_voter_sees_both_sides_stream_stops_one_votes_and_sees_who_was_who(
    page, live_server, models, screenshot
):
    owner, systems = models
    # Ranked from the first vote, so that the leaderboard's table shows it.
    made = arena(
        owner,
        systems=systems,
        slug="sea-arena",
        name="Sea arena",
        provisional_battles=0,
        provisional_width=2000,
    )
    page.context.add_cookies([login_cookie(owner, live_server.url)])
    page.goto(f"/arenas/{made.slug}/battle/")
    page.locator("#prompt-text").fill("Why does the sea have waves?")
    page.locator("#prompt-send").click()

    # Tokens arrive on both sides while the models are still writing.
    for side in "ab":
        expect(page.locator(f"#turns-{side} .answer")).not_to_be_empty()
        expect(page.locator(f"#stop-{side}")).to_be_visible()
        # Read by a screen reader once the answer is whole, not piece by piece.
        expect(page.locator(f"#side-{side}")).to_have_attribute("aria-busy", "true")
    battle = Battle.objects.get()
    surf, tide = side_of(battle, "surf-model"), side_of(battle, "tide-model")
    partial = page.locator(f"#turns-{surf} .answer").inner_text()
    assert partial.startswith("wave0") and "wave11" not in partial
    expect(page.locator("#side-a h2")).to_have_text("Model A")  # nobody is named yet
    screenshot("arena-streaming")

    # The endless side is stopped; the other finishes on its own.
    page.locator(f"#stop-{tide}").click()
    expect(page.locator(f"#turns-{tide} .note")).to_have_text("Stopped.")
    expect(page.locator(f"#turns-{surf} .answer")).to_have_text(" ".join(w.strip() for w in SLOW))
    expect(page.locator("#vote-form")).to_be_visible()
    for side in "ab":
        expect(page.locator(f"#side-{side}")).to_have_attribute("aria-busy", "false")

    # A second turn, sent with Ctrl+Enter, goes to both.
    page.locator("#prompt-text").fill("And why are some waves bigger?")
    page.locator("#prompt-text").press("Control+Enter")
    expect(page.locator("#turns-a .exchange")).to_have_count(2)
    expect(page.locator("#turns-b .exchange")).to_have_count(2)
    page.keyboard.press("Escape")  # stops both
    expect(page.locator("#vote-form")).to_be_visible()
    page.locator("body").click()
    page.keyboard.press("1")  # A is better

    expect(page.locator("#vote-said")).to_have_text("You voted: A is better.")
    expect(page.locator(".reveal")).to_have_count(2)
    battle.refresh_from_db()
    expect(page.locator("#side-a .reveal")).to_have_text(battle.system_a.name)
    expect(page.locator("#side-b .reveal")).to_have_text(battle.system_b.name)
    screenshot("arena-reveal")
    assert (battle.vote, battle.turns) == ("a_better", 2)
    first = BattleAnswer.objects.get(turn__battle=battle, turn__number=1, side=tide)
    assert first.status == "stopped" and first.text.startswith("tide0")
    assert BattleAnswer.objects.get(turn__battle=battle, turn__number=1, side=surf).status == "done"

    # The vote made the leaderboard (eager Celery here: computed after the vote's commit).
    page.goto(made.get_absolute_url())
    expect(page.locator("#leaderboard-table tbody tr")).to_have_count(2)
    winner = battle.system_a.name
    expect(page.locator("#leaderboard-table tbody tr").first).to_contain_text(winner)
    screenshot("arena-leaderboard")
    assert Leaderboard.objects.get(arena=made).battles == 1


def test_a_visitor_battles_on_a_phone_through_an_invitation_link(browser, live_server, models):
    owner, systems = models
    made = arena(
        owner,
        systems=systems,
        slug="phone-arena",
        visibility=Arena.Visibility.PRIVATE,
        voters=Arena.Voters.LINK,
    )
    context = browser.new_context(
        base_url=live_server.url,
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
    )
    context.set_default_timeout(15_000)
    phone = context.new_page()
    try:
        phone.goto(made.invitation_url())
        phone.locator("#prompt-text").fill("Hello from a phone")
        phone.locator("#prompt-send").click()
        expect(phone.locator("#turns-a .answer")).not_to_be_empty()
        expect(phone.locator("#turns-b .answer")).not_to_be_empty()
        # One above the other, each as wide as the screen.
        a = phone.locator("#side-a").bounding_box()
        b = phone.locator("#side-b").bounding_box()
        assert b["y"] >= a["y"] + a["height"] and a["width"] > 300
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        for side in "ab":
            if phone.locator(f"#stop-{side}").is_visible():
                phone.locator(f"#stop-{side}").click()
        phone.get_by_role("button", name="Both are bad").click()
        expect(phone.locator(".reveal")).to_have_count(2)
        phone.screenshot(path=None)
    finally:
        context.close()
    battle = Battle.objects.get()
    assert (battle.vote, battle.voter, battle.voter_platform) == ("both_bad", None, "link")


def test_without_javascript_each_turn_is_one_post_with_whole_answers(browser, live_server, models):
    owner, systems = models
    made = arena(owner, systems=systems, slug="plain-arena", max_turns=1)
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    context.add_cookies([login_cookie(owner, live_server.url)])
    context.set_default_timeout(30_000)
    page = context.new_page()
    try:
        with sse_fake.StreamingPool() as pool:
            quick = [pool.start(sse_fake.words("Calm ", "sea.")) for _ in range(2)]
            for system, server in zip(systems, quick, strict=True):
                system.endpoint.url = server.base_url
                system.endpoint.save()
            page.goto(f"/arenas/{made.slug}/battle/")
            page.locator("#prompt-text").fill("Describe the sea")
            page.get_by_role("button", name="Send").click()
            expect(page.locator("#turns-a .answer")).to_have_text("Calm sea.")
            expect(page.locator("#turns-b .answer")).to_have_text("Calm sea.")
            expect(page.locator("#prompt-form")).to_be_hidden()  # one turn allowed: vote
            page.get_by_role("button", name="Tie").click()
            expect(page.locator("#vote-said")).to_have_text("You voted: Tie.")
            expect(page.locator(".reveal")).to_have_count(2)
    finally:
        context.close()
    assert Battle.objects.get().vote == "tie"
