"""The worker pages in another language, in Chromium: a German campaign's batch from the first
item to the completion code, its script's words (the in-place refusal) German too; an Arabic
campaign laid out right to left."""

import pytest
from playwright.sync_api import expect

from annotation.items import add_items
from annotation.kinds.base import ItemSpec
from tests.annotation.builders import campaign

pytestmark = pytest.mark.django_db(transaction=True)


def two_turn_campaign(language: str):
    c = campaign("ab", language=language, batch_size=1, redundancy=1, title="Gespräch")
    content = {
        "context": ["Hallo, wie geht es dir?", "Gut, danke. Und dir?"],
        "left": "Auch gut.",
        "right": "Sehr gut, danke der Nachfrage.",
        "left_is": "a",
        "meta": {"prompt": "p", "system_a": "a", "system_b": "b"},
    }
    add_items(c, [ItemSpec(content=content)])
    return c


def test_a_german_batch_from_start_to_completion_code(page):
    c = two_turn_campaign("de")
    page.goto(f"{c.start_url()}?worker=de-1")
    page.get_by_text("Aufgabe 1 von 1").wait_for()
    page.get_by_role("button", name="Abschließen").click()
    expect(page.locator(".ab")).to_contain_text(
        "Wählen Sie eine Antwort für die Frage, welche Antwort besser ist."
    )
    page.keyboard.press("1")
    page.get_by_role("button", name="Abschließen").click()
    expect(page.get_by_role("heading", name="Vielen Dank!")).to_be_visible()
    expect(page.get_by_test_id("completion-code")).to_be_visible()


def test_an_arabic_page_is_laid_out_right_to_left(page):
    c = two_turn_campaign("ar")
    page.goto(f"{c.start_url()}?worker=ar-1")
    page.locator(".dialogue .turn").first.wait_for()
    assert page.evaluate("getComputedStyle(document.body).direction") == "rtl"
    first, second = page.locator(".dialogue .turn").all()
    # margin-inline-start: auto pushes the second speaker's turns to the line's end: the left.
    assert second.bounding_box()["x"] < first.bounding_box()["x"]
