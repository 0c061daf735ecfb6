"""A German crowd campaign's voter battles in Chromium: the words the battle page's script
writes (the models' headings, a stopped answer's note, the vote said back) are German, taken
from the page (data-text-*), as the server's are (tests/arenas/test_worker_language.py)."""

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from arenas.crowd import launch
from arenas.models import Battle
from tests import factories
from tests.arenas.crowd_setup import crowd_arena, prolific_fake, setup
from tests.endpoints import sse_fake

pytestmark = pytest.mark.django_db(transaction=True)
SHORT = ["Wellen ", "kommen ", "vom ", "Wind."]
LONG = [f"Flut{i} " for i in range(200)]  # long enough to be stopped half-way


@pytest.fixture(autouse=True)
def _patient_expectations():
    # Models write for seconds on a busy machine: wait longer than Playwright's 5 s default.
    expect.set_options(timeout=30_000)
    yield
    expect.set_options(timeout=5_000)


@pytest.fixture
def german_launch(settings, monkeypatch):
    with prolific_fake(settings, monkeypatch), sse_fake.StreamingPool() as pool:
        one = pool.start(sse_fake.words(*SHORT, pause=0.1))
        two = pool.start(sse_fake.words(*LONG, pause=0.1))
        made = crowd_arena(urls=(one.base_url, two.base_url), gold=[], name="Wellen-Arena")
        launched = launch(
            made,
            setup(
                participants=1,
                battles_per_participant=2,
                gold_per_batch=0,
                budget=Decimal("5.00"),
                language="de",
            ),
            factories.user("boss", staff=True),
            confirm=True,
        )
        yield made, launched.campaign


def test_a_german_voter_reads_the_scripts_words_in_german(page, german_launch):
    made, campaign = german_launch
    query = f"PROLIFIC_PID=5f0c1a2b3c4d5e6f7a8b9c0d&STUDY_ID={campaign.platform_ref}"
    page.goto(f"{campaign.start_url()}?{query}&SESSION_ID=60aa1a2b3c4d5e6f7a8b9c0d")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    expect(page.locator("#prompt-send")).to_have_text("Senden")
    page.locator("#prompt-text").fill("Warum gibt es Wellen?")
    page.locator("#prompt-send").click()

    expect(page.locator("#stop-a")).to_be_visible()
    battle = Battle.objects.get(arena=made)
    # Beta (crowd_setup's second system) is the model that writes on and on.
    long_side = "a" if battle.system_a.name == "Beta" else "b"
    page.locator(f"#stop-{long_side}").click()
    expect(page.locator(f"#turns-{long_side} .note")).to_have_text("Angehalten.")
    expect(page.locator("#vote-form")).to_be_visible()
    page.locator("body").click()
    page.keyboard.press("3")  # Gleichstand

    expect(page.locator("#vote-said")).to_have_text("Ihre Stimme: Gleichstand.")
    expect(page.locator("#side-a h2")).to_have_text(f"Modell A: {battle.system_a.name}")
    expect(page.locator("#side-b h2")).to_have_text(f"Modell B: {battle.system_b.name}")
    expect(page.locator("#new-round")).to_have_text("Neue Runde")
    battle.refresh_from_db()
    assert battle.vote == "tie"
