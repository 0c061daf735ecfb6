"""The demo's chatbot (demo/responder.py): EvalHub's bot protocol on 127.0.0.1, canned and
deterministic; and the demo chat campaign that talks to it through the endpoint client."""

import threading

import pytest

from demo.responder import OPENERS, reply, serve
from endpoints.client import BotClient, Endpoint


@pytest.fixture
def responder():
    server = serve(0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/reply"
    server.shutdown()
    server.server_close()


def test_the_first_turn_is_an_opener_that_says_it_is_simulated():
    assert reply("c1", []) in OPENERS
    assert all("no model" in opener or "simulated" in opener for opener in OPENERS)


def test_the_same_conversation_gets_the_same_answer():
    turns = [{"speaker": 0, "text": "I love hiking in the mountains."}]

    assert reply("c1", turns) == reply("c1", turns)


def test_an_answer_picks_up_a_word_of_the_user_or_changes_the_subject():
    turns = [{"speaker": 0, "text": "I love hiking in the mountains."}]

    answers = {reply(f"c{n}", turns) for n in range(20)}

    assert any("hiking" in a or "mountains" in a for a in answers)
    assert all(a.strip() for a in answers)


@pytest.mark.django_db
def test_the_endpoint_client_gets_its_reply_over_evalhubs_protocol(responder):
    client = BotClient(Endpoint(key="demo", url=responder), budget=None, record=None)

    text = client.reply("c1", [{"speaker": 0, "text": "Do you like music?"}], speaker=1)

    assert text == reply("c1", [{"speaker": 0, "text": "Do you like music?"}])


@pytest.mark.django_db
def test_the_demo_chat_campaign_is_live_with_the_demo_bot():
    from annotation.demo import load_annotation_demo
    from demo.chat import BOT, SLUG, load_chat_demo
    from evalhub.demo import load_catalog_demo

    accounts = load_catalog_demo()
    load_annotation_demo(accounts["admin"])

    campaign = load_chat_demo(accounts["admin"])

    assert (campaign.slug, campaign.task_kind) == (SLUG, "chat")
    campaign.refresh_from_db()
    assert campaign.status == "live" and campaign.items.exists()
    assert {i.content["meta"]["system"] for i in campaign.items.all()} == {BOT}
    assert load_chat_demo(accounts["admin"]).pk == campaign.pk
