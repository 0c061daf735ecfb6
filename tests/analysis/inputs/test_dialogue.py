"""Loading the Alexa metrics' conversations from the catalog and ABC-Eval judgments."""

import pytest

from analysis.inputs.dialogue import UnknownScope, load_dialogues
from annotation.items import add_items
from annotation.kinds import abc_eval
from tests import factories
from tests.analysis.dialogue_world import build_world, human_bot, judge_behaviours
from tests.annotation.builders import campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return build_world()


def by_id(inputs):
    return {d.id: d for d in inputs.dialogues}


def test_a_domain_gives_one_conversation_per_bot_and_skips_humans_only(world):
    inputs = load_dialogues("domain", "chitchat")
    dialogues = by_id(inputs)
    assert set(dialogues) == {"h-alpha", "h-beta", "h-secret", "bb-1#alpha", "bb-1#beta"}
    assert inputs.skipped == 1  # hh-1
    assert inputs.systems == ("alpha", "beta", "secret")


def test_a_bot_bot_conversation_counts_once_per_bot_with_its_own_turns_as_responses(world):
    dialogues = by_id(load_dialogues("domain", "chitchat"))
    alpha, beta = dialogues["bb-1#alpha"], dialogues["bb-1#beta"]
    # Alpha is speaker 0 (turns 0 and 2), Beta speaker 1.
    assert [t.speaker for t in alpha.turns] == ["bot", "user", "bot", "user"]
    assert [t.speaker for t in beta.turns] == ["user", "bot", "user", "bot"]
    assert alpha.rating is None  # nobody rated a bot-bot conversation


def test_timestamps_topics_and_ratings_are_carried(world):
    alpha = by_id(load_dialogues("domain", "chitchat"))["h-alpha"]
    stamps = [t.timestamp for t in alpha.turns]
    assert stamps[-1] - stamps[0] == 60
    assert [t.topic for t in alpha.turns] == ["music"] * 4
    assert alpha.rating == 4


def bot_errors(dialogue):
    return [t.error for t in dialogue.turns if t.speaker == "bot"]


def test_error_flags_come_from_abc_eval_error_labels(world):
    dialogues = by_id(load_dialogues("domain", "chitchat"))
    # One flag per annotation: each response here was annotated once.
    assert bot_errors(dialogues["h-beta"]) == [(True,), (False,)]
    # Alpha's second response was flagged redundant, an undesirable behaviour.
    assert bot_errors(dialogues["h-alpha"]) == [(False,), (True,)]
    assert bot_errors(dialogues["h-secret"]) == [None, None]


def test_each_annotation_of_a_response_is_one_flag(world):
    # Annotations of h-beta's transitions ("ignore", "irrelevant", another task) and a second
    # one of its consistency labels.
    second = campaign(
        "abc_eval",
        task_config={"behaviour_task": "transitions"},
        batch_size=10,
        study=world["study"],
    )
    conversations = factories.loaded_conversations().filter(external_id="h-beta")
    add_items(second, abc_eval.build_items(conversations, {"behaviour_task": "transitions"})[0])
    judge_behaviours(second, {"h-beta": {"ignore": [0, 0], "irrelevant": [0, 1]}})
    no = [0, 0]
    judge_behaviours(
        world["campaign"],
        {"h-beta": {"self contradiction": no, "partner contradiction": no, "redundant": no}},
        suffix="again",
    )
    beta = by_id(load_dialogues("domain", "chitchat"))["h-beta"]
    # The first annotation of a response is the first judgment of each label: response 1
    # self-contradicts, response 2 is irrelevant. "ignore" and "irrelevant" were judged once,
    # so there is no complete second annotation yet.
    assert bot_errors(beta) == [(True,), (True,)]
    judge_behaviours(second, {"h-beta": {"ignore": [0, 0], "irrelevant": [0, 0]}}, suffix="2")
    beta = by_id(load_dialogues("domain", "chitchat"))["h-beta"]
    # The second annotation (the second judgment of each label) flags nothing.
    assert bot_errors(beta) == [(True, False), (True, False)]


def test_the_error_labels_can_be_chosen(world):
    only = load_dialogues("domain", "chitchat", error_labels=("self contradiction",))
    alpha = by_id(only)["h-alpha"]
    assert bot_errors(alpha) == [(False,), (False,)]


@pytest.mark.parametrize(
    ("scope", "name", "expected"),
    [
        ("tournament", "stb", {"bb-1#alpha", "bb-1#beta"}),
        ("study", "abc-study", {"h-alpha", "h-beta"}),
        ("domain", "elsewhere", {"other-domain"}),
    ],
)
def test_each_scope_names_its_conversations(world, scope, name, expected):
    assert set(by_id(load_dialogues(scope, name))) == expected


def test_a_campaign_scope_reads_its_items(world):
    assert set(by_id(load_dialogues("campaign", world["campaign"].slug))) == {"h-alpha", "h-beta"}


@pytest.mark.parametrize(
    ("scope", "name", "message"),
    [
        ("domain", "nowhere", "No conversation has the domain 'nowhere'"),
        ("tournament", "nope", "No tournament with the slug 'nope'"),
        ("study", "nope", "No study with the slug 'nope'"),
        ("campaign", "nope", "No campaign with the slug 'nope'"),
        ("galaxy", "x", "The scope must be one of"),
    ],
)
def test_unknown_scopes_are_named(world, scope, name, message):
    with pytest.raises(UnknownScope, match=message):
        load_dialogues(scope, name)


def _chat(external_id, system, campaign_slug, *, incomplete):
    from evalhub.models import Conversation

    c = human_bot(external_id, system, domain=f"chat-{campaign_slug}")
    Conversation.objects.filter(pk=c.pk).update(
        source=Conversation.Source.CHAT,
        metadata={"incomplete": incomplete, "chat": {"campaign": campaign_slug}},
    )
    return c


@pytest.mark.django_db
def test_a_chat_campaign_scope_reads_the_chats_its_workers_held():
    alpha = factories.system(slug="alpha", name="Alpha")
    chats = campaign("chat", slug="talks")
    _chat("talk-1", alpha, chats.slug, incomplete=False)
    _chat("elsewhere", alpha, "other-campaign", incomplete=False)

    inputs = load_dialogues("campaign", "talks")

    assert [d.id for d in inputs.dialogues] == ["talk-1"]
    assert inputs.systems == ("alpha",)


@pytest.mark.django_db
def test_chats_that_ended_incomplete_are_left_out():
    alpha = factories.system(slug="alpha", name="Alpha")
    _chat("finished", alpha, "talks", incomplete=False)
    _chat("broke-off", alpha, "talks", incomplete=True)

    inputs = load_dialogues("domain", "chat-talks")

    assert [d.id for d in inputs.dialogues] == ["finished"]
