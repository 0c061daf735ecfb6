"""A researcher registers OpenAI-compatible endpoints for two systems from their profiles
(served by the local fake) and collects a tournament among them from its page."""

import pytest

from endpoints.models import BotEndpoint
from evalhub.models import Conversation, Speaker, Turn
from tests import factories
from tests.endpoints import openai_fake
from tournaments.models import Tournament

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "sk-browser-secret-789"


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


def test_researcher_registers_model_endpoints_and_collects(page, fake, screenshot):
    ada = factories.user("ada", password="Analytical-Engine-1843")
    systems = [factories.system(ada, slug=s, name=s.title()) for s in ("ada-7b", "ada-13b")]
    seed_conversations()

    page.goto("/accounts/login/")
    page.fill("#id_username", "ada")
    page.fill("#id_password", "Analytical-Engine-1843")
    page.locator("main form button[type=submit]").click()

    for system in systems:
        page.goto(f"/systems/{system.slug}/")
        page.get_by_role("link", name="Register an endpoint").click()
        page.select_option("#id_protocol", "openai")
        page.fill("#id_url", fake.base_url)
        page.fill("#id_model_name", f"{system.slug}-chat")
        page.fill("#id_auth_token", KEY)
        page.fill("#id_temperature", "0.7")
        page.get_by_role("button", name="Register").click()
        page.get_by_text("Token: stored (hidden)").wait_for()
        assert page.input_value("#id_auth_token") == ""
        assert KEY not in page.content()
    screenshot("bot-endpoint-form")
    assert sorted(BotEndpoint.objects.values_list("model_name", "auth_token")) == [
        ("ada-13b-chat", KEY),
        ("ada-7b-chat", KEY),
    ]

    t = Tournament.objects.create(
        slug="ada-cup",
        name="Ada cup",
        kind="spot_the_bot",
        schedule="all-play-all",
        domain="garden",
        owner=ada,
        conversations_per_pair=1,
        exchanges=2,
    )
    t.systems.set(systems)
    page.goto("/tournaments/ada-cup/")
    page.get_by_role("button", name="Start collection").click()
    collection = page.get_by_test_id("collection")
    collection.get_by_text("2 / 2").wait_for()
    assert page.get_by_test_id("tournament-status").inner_text() == "Ready for annotation"
    assert len(fake.requests) == 2 * 2 * 2
    assert {r["model"] for r in fake.requests} == {"ada-7b-chat", "ada-13b-chat"}
    assert {h["Authorization"] for h in fake.headers} == {f"Bearer {KEY}"}
