"""Phones: every worker page fits 360 pixels, the menu folds, key hints leave touch screens.

A phone here is Chromium with a 360-pixel-wide touch viewport (`is_mobile`, `has_touch`), so
the `(hover: none)` and `(pointer: coarse)` media queries match as on a real phone.
"""

import random

import pytest
from playwright.sync_api import expect

from annotation.items import add_items
from annotation.kinds import get_kind
from tests import factories
from tests.annotation.builders import ab_campaign, campaign
from tests.annotation.kinds.test_abc_eval import conversation, loaded
from tests.browser.conftest import ARTIFACTS
from tests.browser.test_task_comparative import comparative_campaign
from tests.browser.test_task_spot_the_bot import spot_the_bot_campaign

pytestmark = pytest.mark.django_db(transaction=True)
WIDTH = 360


@pytest.fixture
def phone(browser, live_server):
    context = browser.new_context(
        base_url=live_server.url,
        viewport={"width": WIDTH, "height": 740},
        is_mobile=True,
        has_touch=True,
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


def conversation_campaign(kind, slug, task_config):
    c = campaign(kind, slug=slug, title="Read and judge", batch_size=2, task_config=task_config)
    c.instructions = "Read the whole conversation, then answer every question."
    c.save(update_fields=["instructions"])
    conversations = loaded([conversation(f"{slug}-1"), conversation(f"{slug}-2")])
    add_items(
        c, get_kind(kind).build_from_conversations(conversations, c.task_config, random.Random(0))
    )
    return c


BUILDERS = {
    "ab": lambda: ab_campaign(2, batch_size=1, redundancy=2, instructions="Pick the better one."),
    "spot_the_bot": spot_the_bot_campaign,
    "abc_eval": lambda: conversation_campaign(
        "abc_eval", "abc-phone", {"behaviour_task": "consistency"}
    ),
    "likert": lambda: conversation_campaign(
        "likert", "likert-phone", {"level": "turn", "dimensions": ["relevance", "engagingness"]}
    ),
    "comparative": comparative_campaign,
}


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_every_task_page_fits_a_360_pixel_phone(phone, kind):
    c = BUILDERS[kind]()
    phone.goto(f"/work/{c.slug}/?worker=phone-{kind}")
    expect(phone.locator(".progress")).to_contain_text("Item 1 of ")
    assert page_width(phone) <= WIDTH, f"{kind} scrolls sideways on a phone"

    # The page with every error message on it is the widest a worker meets.
    phone.locator("button.next").click()
    expect(phone.locator(".errors")).to_be_visible()
    assert page_width(phone) <= WIDTH, f"{kind} with errors scrolls sideways on a phone"
    ARTIFACTS.mkdir(exist_ok=True)
    phone.screenshot(path=str(ARTIFACTS / f"phone-{kind}.png"), full_page=True)


@pytest.mark.parametrize("kind", ["ab", "comparative", "spot_the_bot"])
def test_keyboard_hints_are_hidden_on_touch_screens(phone, page, kind):
    c = BUILDERS[kind]()
    url = f"/work/{c.slug}/?worker=touch-{kind}"
    page.goto(url)  # a desktop with a mouse and a keyboard
    expect(page.locator(".shortcuts")).to_be_visible()
    phone.goto(url.replace("touch", "thumb"))
    expect(phone.locator(".progress")).to_be_visible()
    expect(phone.locator(".shortcuts")).to_be_hidden()
    for hint in phone.locator(".key-hint").all():
        expect(hint).to_be_hidden()


def test_the_comparative_task_shows_one_conversation_at_a_time_on_a_phone(phone, page):
    c = comparative_campaign()
    phone.goto(f"/work/{c.slug}/?worker=tabs-1")
    first, second = (
        phone.locator(".dialogue-panel.panel-1"),
        phone.locator(".dialogue-panel.panel-2"),
    )
    expect(first).to_be_visible()
    expect(second).to_be_hidden()
    # The questions follow the conversation being read, not both of them.
    question = phone.locator("fieldset.question-group").first
    gap = question.bounding_box()["y"] - (
        first.bounding_box()["y"] + first.bounding_box()["height"]
    )
    assert 0 <= gap < 120
    phone.locator('label[for="panel-tab-2"]').click()
    expect(second).to_be_visible()
    expect(first).to_be_hidden()
    assert page_width(phone) <= WIDTH
    # On a wide screen both are side by side and there are no tabs.
    page.goto(f"/work/{c.slug}/?worker=tabs-2")
    expect(page.locator(".dialogue-panel")).to_have_count(2)
    expect(page.locator(".dialogue-panel.panel-2")).to_be_visible()
    expect(page.locator(".tab-strip")).to_be_hidden()


def test_the_site_menu_folds_into_a_button_on_a_phone(phone, page, live_server):
    staff = factories.user("boss", staff=True)
    for browser_page in (phone, page):
        browser_page.context.add_cookies([login_cookie(staff, live_server.url)])
    phone.goto("/")
    systems = phone.get_by_role("link", name="Systems", exact=True)
    expect(systems).to_be_hidden()
    phone.get_by_text("Menu", exact=True).click()
    expect(systems).to_be_visible()
    assert page_width(phone) <= WIDTH
    # One link to the admin, wherever the menu is drawn.
    assert phone.locator('a[href="/admin/"]').count() == 1
    page.goto("/")
    expect(page.get_by_role("link", name="Systems", exact=True)).to_be_visible()
    expect(page.get_by_text("Menu", exact=True)).to_be_hidden()
    assert page.locator('a[href="/admin/"]').count() == 1


def test_wide_tables_scroll_inside_their_box(phone):
    system = factories.system(None, slug="wide-bot")
    factories.submission(system, factories.prompt_set(2, slug="wide"))
    phone.goto("/systems/wide-bot/")
    table = phone.locator("table.metrics")
    expect(table).to_be_visible()
    assert table.evaluate("t => t.scrollWidth > t.clientWidth")  # it does scroll, inside
    assert page_width(phone) <= WIDTH


def login_cookie(user, url):
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    return {
        "name": settings.SESSION_COOKIE_NAME,
        "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
        "url": url,
    }


def test_the_training_pages_fit_a_phone(phone):
    from tests.annotation.test_training import abc_campaign

    c = abc_campaign("empathy", training=2, slug="train-phone", title="Empathy")
    phone.goto(f"/work/{c.slug}/?worker=trainee")
    phone.get_by_role("button", name="Begin the training").click()
    expect(phone.locator("button.next")).to_be_visible()
    assert page_width(phone) <= WIDTH, "the training item scrolls sideways"
    phone.locator("input[name=reviewed]").check()
    phone.locator("button.next").click()
    expect(phone.get_by_role("link", name="Next training conversation")).to_be_visible()
    assert page_width(phone) <= WIDTH, "the training feedback scrolls sideways"


def test_a_system_profile_fits_a_390_pixel_phone(browser, live_server):
    owner = factories.user("owner")
    system = factories.system(owner, slug="wide-bot", name="A system with a long name indeed")
    factories.submission(system, factories.prompt_set(3, slug="greetings"))
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 390, "height": 844}, is_mobile=True
    )
    page = context.new_page()

    page.goto(system.get_absolute_url())

    overflow = page.evaluate(
        """() => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > 390.5)
            .map(e => e.tagName + '.' + e.className).slice(0, 5)"""
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, overflow
    context.close()
