"""Accessibility of the pages a crowdworker sees: every task kind is done from start to
completion code with the keyboard alone (shortcuts, Tab, Space, Enter; never a click),
its judgments are stored, and axe-core finds no serious or critical WCAG 2.x A/AA
violation on any page met on the way (tests/browser/accessibility.py)."""

import random
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotation.items import add_items
from annotation.kinds import get_kind
from annotation.kinds.abc_eval import with_gold
from annotation.models import Assignment, Judgment, Qualification, Worker
from arenas.crowd import launch
from tests import factories
from tests.annotation.builders import ab_campaign, campaign
from tests.annotation.chat_setup import bot_system, chat_campaign
from tests.annotation.kinds.test_abc_eval import (
    CONSISTENCY_GOLD,
    SELF_CONTRADICTION,
    conversation,
    loaded,
)
from tests.arenas.crowd_setup import crowd_arena, prolific_fake, setup
from tests.browser.accessibility import assert_accessible
from tests.browser.test_task_comparative import comparative_campaign
from tests.browser.test_task_ranking import conversation_ranking_campaign, ranking_campaign
from tests.browser.test_task_spot_the_bot import spot_the_bot_campaign
from tests.endpoints import sse_fake

pytestmark = pytest.mark.django_db(transaction=True)
PHONE = {"width": 390, "height": 844}
WIDE = {"width": 1200, "height": 900}  # the page fixture's


@pytest.fixture(autouse=True)
def _patient_expectations():
    """The audits and a busy machine's shared cores slow every page: wait longer than
    Playwright's 5 s default."""
    expect.set_options(timeout=20_000)
    yield
    expect.set_options(timeout=5_000)


def tab_to(page, selector: str, *, backwards: bool = False, limit: int = 60) -> None:
    """Press Tab (or Shift+Tab) until the focused element matches `selector`."""
    key = "Shift+Tab" if backwards else "Tab"
    for _ in range(limit):
        page.keyboard.press(key)
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"{selector} cannot be reached with {key}")


def assert_code_shown(page, worker: str) -> Assignment:
    code = page.get_by_test_id("completion-code")
    expect(code).to_be_visible()
    assignment = Assignment.objects.get(worker__external_id=f"link:{worker}")
    assert assignment.status == "submitted"
    assert code.inner_text().strip() == assignment.completion_code
    return assignment


def test_ab_by_keyboard_and_its_pages_pass_the_audit(page):
    ab_campaign(3, batch_size=3, redundancy=1, slug="ab-keys", instructions="Pick one.")
    page.goto("/work/ab-keys/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE")
    expect(page.locator(".preview-notice")).to_be_visible()
    assert_accessible(page, "the MTurk preview with the instructions")
    page.goto("/work/ab-keys/")
    expect(page.locator("#id_worker")).to_be_visible()
    assert_accessible(page, "the page asking for a participant id")
    tab_to(page, "#id_worker")
    page.keyboard.type("ab-keys-1")
    page.keyboard.press("Enter")

    expect(page.locator(".progress")).to_have_text("Item 1 of 3")
    assert_accessible(page, "the A/B item")
    page.keyboard.press("Enter")  # nothing chosen: refused in place
    expect(page.locator(".ab .error")).to_be_visible()
    assert_accessible(page, "the A/B item with its error")
    page.keyboard.press("1")
    page.keyboard.press("Enter")

    expect(page.locator(".progress")).to_have_text("Item 2 of 3")
    page.keyboard.press("3")
    page.keyboard.press("Enter")

    # The last one by Tab, Shift+Tab, the arrow keys and Space, as without the shortcuts.
    expect(page.locator(".progress")).to_have_text("Item 3 of 3")
    tab_to(page, "button.next")
    tab_to(page, "input[name=choice]", backwards=True)
    # The focused answer's whole card shows the focus.
    outline = page.locator("label.choice:has(input:focus)").evaluate(
        "label => getComputedStyle(label).outlineStyle"
    )
    assert outline == "solid"
    # The arrow keys move through the group's answers, choosing each: on to Response 2.
    for _ in range(3):
        if page.evaluate("document.activeElement.value") == "right":
            break
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Space")
    expect(page.locator("input[name=choice][value=right]")).to_be_checked()
    tab_to(page, "button.next")
    page.keyboard.press("Enter")

    assignment = assert_code_shown(page, "ab-keys-1")
    assert_accessible(page, "the completion page")
    # The side shown on the left, the tie, the side shown on the right.
    sides = [
        j.payload["choice"]
        if j.payload["choice"] == "tie"
        else ("left" if j.payload["choice"] == j.payload["left"] else "right")
        for j in Judgment.objects.order_by("item__order_in_batch")
    ]
    assert sides == ["left", "tie", "right"]
    assert assignment.judgments.count() == 3

    page.goto("/work/ab-keys/")
    expect(page.locator("section.done h1")).to_be_visible()
    assert_accessible(page, "the page saying there is no more work")


def test_the_blocked_and_expired_pages_pass_the_audit(page):
    ab_campaign(2, batch_size=2, redundancy=1, slug="ab-late", time_limit_minutes=10)
    page.goto("/work/ab-late/?worker=late-1")
    expect(page.locator(".progress")).to_have_text("Item 1 of 2")
    expect(page.locator(".time-left .countdown")).to_contain_text("left")
    assert_accessible(page, "an item with its countdown")
    Assignment.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    page.reload()
    expect(page.get_by_text("The time for this batch ran out.")).to_be_visible()
    assert_accessible(page, "the expired batch's page")

    Worker.objects.update(blocked=True, blocked_reason="Too fast.")
    page.goto("/work/ab-late/?worker=late-1")
    expect(page.get_by_text("cannot take new work")).to_be_visible()
    assert_accessible(page, "the blocked worker's page")


def abc_eval_campaign(slug, **fields):
    return campaign(
        "abc_eval",
        slug=slug,
        title="Consistency",
        task_config={"behaviour_task": "consistency", **fields.pop("task_config", {})},
        redundancy=1,
        **fields,
    )


def test_abc_eval_by_keyboard_and_its_pages_pass_the_audit(page):
    c = abc_eval_campaign("abc-a11y", batch_size=2)
    conversations = loaded([conversation("a11y-1"), conversation("a11y-2")])
    add_items(
        c,
        get_kind("abc_eval").build_from_conversations(
            conversations, c.task_config, random.Random(0)
        ),
    )
    page.goto("/work/abc-a11y/?worker=abc-keys")
    expect(page.locator(".progress")).to_have_text("Item 1 of 2")
    assert_accessible(page, "the ABC-Eval item")
    page.keyboard.press("Enter")
    expect(page.locator("#reviewed-error")).to_be_visible()
    assert_accessible(page, "the ABC-Eval item with its error")
    # Second bot turn, its second label; then "I checked every bot turn".
    for key in ("j", "j", "2", "r", "Enter"):
        page.keyboard.press(key)

    expect(page.locator(".progress")).to_have_text("Item 2 of 2")
    # By Tab and Space: the first label of the first bot turn, then the confirmation.
    tab_to(page, "fieldset.turn-flags input[type=checkbox]")
    page.keyboard.press("Space")
    tab_to(page, "input[name=reviewed]")
    page.keyboard.press("Space")
    tab_to(page, "button.next")
    page.keyboard.press("Enter")

    assert_code_shown(page, "abc-keys")
    ticked = sorted(
        sum(sum(flags) for flags in j.payload["labels"].values()) for j in Judgment.objects.all()
    )
    assert ticked == [1, 1]


def test_abc_eval_training_and_screening_by_keyboard_pass_the_audit(page):
    c = abc_eval_campaign(
        "abc-trained-keys",
        task_config={"training_conversations": 1},
        requires_training=True,
        batch_size=1,
    )
    kind = get_kind("abc_eval")
    rng = random.Random(0)
    tasks = kind.build_from_conversations(loaded([conversation("t-1")]), c.task_config, rng)
    training = kind.build_from_conversations(
        loaded([conversation(f"tr-{n}") for n in (1, 2)]), c.task_config, rng
    )
    gold = [with_gold(s, CONSISTENCY_GOLD, {5: SELF_CONTRADICTION}) for s in training]
    add_items(c, tasks + gold)

    page.goto("/work/abc-trained-keys/?worker=trainee-keys")
    expect(page.get_by_role("heading", name="Training before you start")).to_be_visible()
    assert_accessible(page, "the training's introduction")
    tab_to(page, "button[type=submit]")
    page.keyboard.press("Enter")

    # Nothing ticked: the contradiction is missed, which the screening refuses.
    expect(page.locator(".progress")).to_have_text("Training 1 of 1 · attempt 1")
    assert_accessible(page, "a training conversation")
    page.keyboard.press("r")
    page.keyboard.press("Enter")
    expect(page.locator(".feedback-row")).to_have_count(1)
    assert_accessible(page, "the training feedback")
    tab_to(page, "a.button")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="You did not qualify this time")).to_be_visible()
    expect(page.get_by_test_id("screening-problems")).to_be_visible()
    assert_accessible(page, "the failed training's result, with its screening")
    tab_to(page, "button[type=submit]")
    page.keyboard.press("Enter")

    # The third bot turn's first label is the contradiction.
    expect(page.locator(".progress")).to_have_text("Training 1 of 1 · attempt 2")
    for key in ("j", "j", "j", "1", "r", "Enter"):
        page.keyboard.press(key)
    expect(page.get_by_text("Your answers match ours everywhere")).to_be_visible()
    tab_to(page, "a.button")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="You qualified")).to_be_visible()
    assert_accessible(page, "the passed training's result")
    tab_to(page, "a.button")
    page.keyboard.press("Enter")

    expect(page.locator(".progress")).to_have_text("Item 1 of 1")
    page.keyboard.press("r")
    page.keyboard.press("Enter")
    assert_code_shown(page, "trainee-keys")
    assert Qualification.objects.get().passed
    assert Judgment.objects.filter(item__role="task").count() == 1


def test_likert_by_keyboard_and_its_pages_pass_the_audit(page):
    dimensions = ["engagingness", "relevance", "quality"]
    c = campaign(
        "likert",
        slug="likert-a11y",
        task_config={"level": "dialogue", "dimensions": dimensions},
        batch_size=2,
        redundancy=1,
    )
    conversations = loaded([conversation("l-1"), conversation("l-2")])
    add_items(
        c,
        get_kind("likert").build_from_conversations(conversations, c.task_config, random.Random(0)),
    )
    page.goto("/work/likert-a11y/?worker=likert-keys")
    expect(page.locator(".progress")).to_have_text("Item 1 of 2")
    assert_accessible(page, "the Likert item")
    page.keyboard.press("4")
    page.keyboard.press("Enter")
    expect(page.locator("fieldset.has-error")).to_have_count(2)
    assert_accessible(page, "the Likert item with its errors")
    for key in ("2", "5", "Enter"):
        page.keyboard.press(key)

    # Tab to each scale in turn; the right arrow chooses 2 on it.
    expect(page.locator(".progress")).to_have_text("Item 2 of 2")
    for _ in dimensions:
        tab_to(page, "fieldset.likert-scale:not(:has(:checked)) input[type=radio]")
        page.keyboard.press("ArrowRight")
    tab_to(page, "button.next")
    page.keyboard.press("Enter")

    assert_code_shown(page, "likert-keys")
    ratings = sorted(sorted(j.payload["ratings"].values()) for j in Judgment.objects.all())
    assert ratings == [[2, 2, 2], [2, 4, 5]]


def test_turn_level_likert_by_keyboard_and_its_page_pass_the_audit(page):
    c = campaign(
        "likert",
        slug="likert-turns-a11y",
        task_config={"level": "turn", "dimensions": ["engagingness", "quality"]},
        batch_size=1,
        redundancy=1,
    )
    add_items(
        c,
        get_kind("likert").build_from_conversations(
            loaded([conversation("lt-1")]), c.task_config, random.Random(0)
        ),
    )
    page.goto("/work/likert-turns-a11y/?worker=turn-keys")
    expect(page.locator(".progress")).to_have_text("Item 1 of 1")
    assert_accessible(page, "the turn-level Likert item")
    # Each key rates the first scale still unrated, turn by turn.
    for _ in range(page.locator("fieldset.likert-scale").count()):
        page.keyboard.press("3")
    page.keyboard.press("Enter")

    assert_code_shown(page, "turn-keys")
    [judgment] = Judgment.objects.all()
    assert judgment.payload["ratings"] == {"engagingness": [3, 3, 3], "quality": [3, 3, 3]}


def test_spot_the_bot_by_keyboard_and_its_pages_pass_the_audit(page):
    spot_the_bot_campaign()
    page.goto("/work/spot/?worker=spot-keys")
    expect(page.locator(".progress")).to_have_text("Item 1 of 3")
    assert_accessible(page, "the Spot The Bot item")
    page.keyboard.press("Enter")
    expect(page.locator("fieldset.has-error").first).to_be_visible()
    assert_accessible(page, "the Spot The Bot item with its errors")
    for position in (1, 2, 3):
        expect(page.locator(".progress")).to_have_text(f"Item {position} of 3")
        # Speaker 1 human, speaker 2 bot; then the first speaker did better thrice.
        for key in ("h", "b", "1", "1", "1", "Enter"):
            page.keyboard.press(key)

    assert_code_shown(page, "spot-keys")
    payloads = [j.payload for j in Judgment.objects.all()]
    assert len(payloads) == 3
    assert all(p["labels"] == ["human", "bot"] for p in payloads)
    assert all(set(p["better"].values()) == {0} for p in payloads)


def test_comparative_by_keyboard_and_its_pages_pass_the_audit(page):
    comparative_campaign()
    page.goto("/work/compare/?worker=compare-keys")
    expect(page.locator(".progress")).to_have_text("Item 1 of 3")
    assert_accessible(page, "the comparative item")
    # On a phone the conversations are tabs, chosen by switches that are labelled there.
    page.set_viewport_size(PHONE)
    expect(page.locator(".tab-strip")).to_be_visible()
    assert_accessible(page, "the comparative item on a phone")
    page.set_viewport_size(WIDE)
    page.keyboard.press("Enter")
    expect(page.locator("fieldset.has-error").first).to_be_visible()
    assert_accessible(page, "the comparative item with its errors")
    dimensions = page.locator("fieldset.question-group").count()
    for position in (1, 2, 3):
        expect(page.locator(".progress")).to_have_text(f"Item {position} of 3")
        for _ in range(dimensions):
            page.keyboard.press("3")  # neither
        page.keyboard.press("Enter")

    assert_code_shown(page, "compare-keys")
    judgments = list(Judgment.objects.all())
    assert len(judgments) == 3
    assert all(set(j.payload["choices"].values()) == {"neither"} for j in judgments)


def test_chat_by_keyboard_and_its_pages_pass_the_audit(page):
    dimensions = ["engagingness", "quality"]
    with sse_fake.StreamingPool() as fakes:
        server = fakes.start(sse_fake.words("Hello ", "there."))
        systems = [bot_system(server, slug=slug) for slug in ("gamma-bot", "delta-bot")]
        c = chat_campaign(
            systems,
            slug="chat-keys",
            config={"dimensions": dimensions, "min_turns": 1, "max_turns": 2},
        )
        page.goto(f"{c.start_url()}?worker=chat-keys")
        for position in (1, 2):
            expect(page.locator(".progress")).to_have_text(f"Conversation {position} of 2")
            tab_to(page, "#chat-text")
            page.keyboard.type("Hello, bot")
            page.keyboard.press("Enter")
            expect(page.locator(".chat-turn.bot .text")).to_have_text("Hello there.")
            expect(page.locator("#chat-typing")).to_be_hidden()
            assert_accessible(page, f"chat {position} with a reply")
            tab_to(page, "#chat-end button")
            page.keyboard.press("Enter")

            expect(page.locator(".progress")).to_have_text(f"Item {position} of 2")
            assert_accessible(page, f"the rating of chat {position}")
            for _ in dimensions:
                page.keyboard.press("4")
            if position == 2:
                expect(page.get_by_text("Compare your two conversations")).to_be_visible()
                for _ in dimensions:
                    page.keyboard.press("1")
            page.keyboard.press("Enter")

    assert_code_shown(page, "chat-keys")
    first, second = (j.payload for j in Judgment.objects.order_by("item__order_in_batch"))
    assert first["ratings"] == second["ratings"] == dict.fromkeys(dimensions, 4)
    comparison = second["comparison"]
    assert set(comparison["choices"].values()) == {comparison["left"]}


def test_arena_battles_of_a_paid_crowd_by_keyboard_pass_the_audit(page, settings, monkeypatch):
    with prolific_fake(settings, monkeypatch), sse_fake.StreamingPool() as pool:
        one = pool.start(sse_fake.words("Waves ", "are ", "wind."))
        two = pool.start(sse_fake.words("The ", "moon ", "pulls."))
        made = crowd_arena(urls=(one.base_url, two.base_url))
        boss = factories.user("boss", staff=True)
        result = launch(made, setup(participants=1, battles_per_participant=3), boss, confirm=True)
        c = result.campaign
        # The completion page sends the participant on to Prolific: answered here.
        page.route("https://app.prolific.com/**", lambda route: route.fulfill(body="Prolific"))
        page.goto(
            f"/work/{c.slug}/?PROLIFIC_PID=5f0c1a2b3c4d5e6f7a8b9c0d"
            f"&STUDY_ID={c.platform_ref}&SESSION_ID=60aa1a2b3c4d5e6f7a8b9c0d"
        )
        for n in (1, 2, 3):
            vote = page.locator("#vote-form")
            expect(page.locator("#battle")).to_be_visible()
            if not vote.is_visible():  # a live battle: write to both models first
                assert_accessible(page, f"battle {n} before the prompt")
                if n == 1:  # a crowd voter's page is the worker layout: no site menu
                    page.set_viewport_size(PHONE)
                    expect(page.locator("#prompt-text")).to_be_visible()
                    expect(page.locator(".menu-button")).to_have_count(0)
                    assert_accessible(page, "a battle on a phone")
                    page.set_viewport_size(WIDE)
                tab_to(page, "#prompt-text")
                page.keyboard.type(f"Why are there waves? Question {n}.")
                page.keyboard.press("Control+Enter")
            expect(vote).to_be_visible()
            assert_accessible(page, f"battle {n} ready for the vote")
            page.keyboard.press("1")
            expect(page.locator("#vote-said")).to_have_text("You voted: A is better.")
            assert_accessible(page, f"battle {n} after the vote")
            page.keyboard.press("n")
        expect(page.get_by_test_id("completion-code")).to_be_visible()

    assignment = Assignment.objects.get(campaign=c)
    assert assignment.status == "submitted"
    votes = [j.payload["vote"] for j in Judgment.objects.filter(assignment=assignment)]
    assert votes == ["a_better"] * 3


def test_the_ranking_item_passes_the_audit(page):
    # Ranked by keys in tests/browser/test_task_ranking.py; its page is audited here.
    ranking_campaign()
    page.goto("/work/rank/?worker=rank-a11y")
    expect(page.locator(".rank-item")).to_have_count(3)
    assert_accessible(page, "the ranking item")
    page.keyboard.press("Enter")
    expect(page.locator(".errors")).to_be_visible()
    assert_accessible(page, "the ranking item with its errors")


def test_the_conversation_ranking_item_passes_the_audit(page):
    # Ranked by keys in tests/browser/test_task_ranking.py; each conversation scrolls in
    # its card, which the audit requires to be reachable by keys.
    conversation_ranking_campaign()
    page.goto("/work/rank-talks/?worker=talks-a11y")
    expect(page.locator(".rank-item .ranked-dialogue")).to_have_count(3)
    assert_accessible(page, "the conversation ranking item")
