"""Without a registered bridge, a chat says no bot can be reached and offers no systems."""

import pytest

from annotation import chat_replies
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def nothing_registered():
    saved = (chat_replies._REGISTRY.reply, chat_replies._REGISTRY.systems)
    chat_replies._REGISTRY.reply = chat_replies._REGISTRY.systems = None
    yield
    chat_replies._REGISTRY.reply, chat_replies._REGISTRY.systems = saved


def test_without_a_bridge_no_bot_can_be_reached(nothing_registered):
    with pytest.raises(chat_replies.ReplyFailed) as failed:
        chat_replies.reply(None, factories.system(), "chat-1", [])
    assert failed.value.transient is False
    assert "No chatbot can be reached" in failed.value.message


def test_without_a_bridge_no_system_is_offered(nothing_registered):
    factories.system()
    assert not chat_replies.chat_systems(factories.user(staff=True)).exists()


def test_a_registered_bridge_answers():
    saved = (chat_replies._REGISTRY.reply, chat_replies._REGISTRY.systems)
    chat_replies.register(
        reply=lambda campaign, system, cid, turns: f"{system.slug} heard {len(turns)}",
        systems=lambda user: chat_replies.System.objects.all(),
    )
    try:
        system = factories.system(slug="x-bot")
        assert chat_replies.reply(None, system, "c", [{"speaker": 0, "text": "hi"}]) == (
            "x-bot heard 1"
        )
        assert list(chat_replies.chat_systems(None)) == [system]
    finally:
        chat_replies._REGISTRY.reply, chat_replies._REGISTRY.systems = saved
