"""A small catalog for the Alexa metrics tests: human-bot conversations with timestamps,
topics and user ratings, a bot-bot and a human-human one, and ABC-Eval judgments."""

from datetime import timedelta

from django.utils import timezone

from annotation.items import add_items
from annotation.kinds import abc_eval
from annotation.models import Assignment, Judgment, Study, Worker
from evalhub.models import Conversation
from tests import factories
from tests.annotation.builders import campaign
from tournaments.models import Tournament

START = timezone.now().replace(microsecond=0) - timedelta(days=1)
MUSIC = ["I love music", "What music do you like?", "Jazz and rap songs", "A great band!"]


def human_bot(external_id, system, *, rating=None, seconds=None, topics=None, domain="chitchat"):
    c = factories.conversation(external_id, [None, system], MUSIC, domain=domain)
    if rating is not None:
        Conversation.objects.filter(pk=c.pk).update(
            user_rating=rating, user_rating_min=1, user_rating_max=5
        )
    for turn in c.turns.all():
        if seconds is not None:
            turn.timestamp = START + timedelta(seconds=seconds[turn.position])
        if topics is not None:
            turn.topic = topics[turn.position]
        turn.save()
    return c


def judge_behaviours(c, labels_by_conversation, suffix=""):
    """One annotation per conversation: ``labels_by_conversation[external id]`` flags (a
    ``suffix`` makes its workers new ones, for another annotation)."""
    items = {i.conversation.external_id: i for i in c.items.select_related("conversation")}
    for n, (external_id, labels) in enumerate(labels_by_conversation.items()):
        item = items[external_id]
        worker = Worker.objects.create(provider="local", external_id=f"w{c.pk}-{n}{suffix}")
        assignment = Assignment.objects.create(
            campaign=c, batch=item.batch, worker=worker, status=Assignment.Status.SUBMITTED
        )
        Judgment.objects.create(
            assignment=assignment,
            item=item,
            worker=worker,
            campaign=c,
            payload={"labels": labels},
            started_at=START,
        )


def build_world():
    alpha = factories.system(slug="alpha", name="Alpha")
    beta = factories.system(slug="beta", name="Beta")
    secret = factories.system(slug="secret", name="Secret", visibility="private")
    # Alpha: 60 s, one topic throughout, rated 4. Beta: 30 s, two topics, rated 2.
    human_bot("h-alpha", alpha, rating=4, seconds=[0, 20, 40, 60], topics=["music"] * 4)
    human_bot(
        "h-beta", beta, rating=2, seconds=[0, 10, 20, 30],
        topics=["music", "music", "sports", "sports"],
    )  # fmt: skip
    human_bot("h-secret", secret, rating=5)
    factories.conversation("bb-1", [alpha, beta], MUSIC)
    factories.conversation("hh-1", [None, None], MUSIC)
    human_bot("other-domain", alpha, domain="elsewhere")
    study = Study.objects.create(slug="abc-study", name="ABC study", source="abc-eval")
    c = campaign(
        "abc_eval", task_config={"behaviour_task": "consistency"}, batch_size=10, study=study
    )
    conversations = factories.loaded_conversations().filter(external_id__in=["h-alpha", "h-beta"])
    add_items(c, abc_eval.build_items(conversations, {"behaviour_task": "consistency"})[0])
    no = [0, 0]
    judge_behaviours(
        c,
        {
            # Beta's first response contradicts itself; Alpha's second is redundant.
            "h-beta": {"self contradiction": [1, 0], "partner contradiction": no, "redundant": no},
            "h-alpha": {"self contradiction": no, "partner contradiction": no, "redundant": [0, 1]},
        },
    )
    tournament = Tournament.objects.create(
        slug="stb", name="STB", kind="spot_the_bot", domain="chitchat", published=True
    )
    tournament.systems.set([alpha, beta])
    # A tournament judges what it planned or explicitly includes (issue 10), never every
    # conversation of its domain.
    tournament.included_conversations.set(Conversation.objects.filter(external_id="bb-1"))
    return {"alpha": alpha, "beta": beta, "secret": secret, "campaign": c, "study": study}
