"""Judges, rubrics and campaigns of every judgeable kind for the judging tests."""

import itertools
import random

from annotation.items import add_items
from annotation.kinds import get_kind
from endpoints.models import BotEndpoint
from judging import judges
from judging.defaults import DEFAULT_NAME, install_default_rubrics
from judging.models import Judge, Rubric
from tests import factories
from tests.annotation.builders import MIDDLE, ab_campaign, campaign

_counter = itertools.count(1)


def endpoint(server, *, owner=None, protocol="openai", **fields) -> BotEndpoint:
    """A system's endpoint (a chatbot's), which a judge may not use."""
    system = factories.system(owner=owner)
    fields.setdefault("model_name", "judge-model")
    fields.setdefault("timeout_seconds", 5.0)
    return BotEndpoint.objects.create(
        system=system,
        protocol=protocol,
        url=server.base_url if server else "http://127.0.0.1:9/v1",
        **fields,
    )


def judge(server, owner=None, **endpoint_fields) -> Judge:
    """A judge with its own endpoint (of no system), as registering one makes it."""
    owner = owner or factories.user()
    n = next(_counter)
    endpoint_fields.setdefault("model_name", "judge-model")
    endpoint_fields.setdefault("timeout_seconds", 5.0)
    return judges.register(
        owner=owner,
        slug=f"judge-{n}",
        name=f"Judge {n}",
        endpoint={
            "url": server.base_url if server else "http://127.0.0.1:9/v1",
            **endpoint_fields,
        },
    )


def default_rubric(kind: str) -> Rubric:
    # The data migration installs them; a transactional test before this one flushed them.
    install_default_rubrics()
    return Rubric.objects.filter(task_kind=kind, name=DEFAULT_NAME).latest("version")


def ab(n_items=3, **fields):
    return ab_campaign(n_items, **fields)


def _human_bot(n: int, turns: int = 4):
    bot = factories.system()
    texts = [f"{'user' if p % 2 == 0 else 'bot'} turn {p} of {n}" for p in range(turns)]
    return factories.conversation(f"hb-{next(_counter)}", [None, bot], texts)


def _built(kind_key: str, conversations, config: dict, **fields):
    c = campaign(kind_key, task_config=config, **fields)
    kind = get_kind(kind_key)
    ids = [conv.pk for conv in conversations]
    loaded = factories.loaded_conversations().filter(pk__in=ids)
    specs = kind.build_from_conversations(loaded, kind.clean_config(config), random.Random(1))
    add_items(c, specs, rng=MIDDLE)
    return c


def likert(n_items=2, level="dialogue", dimensions=("relevance", "quality"), **fields):
    config = {"level": level, "dimensions": list(dimensions)}
    return _built("likert", [_human_bot(i) for i in range(n_items)], config, **fields)


def abc_eval(n_items=2, task="empathy", **fields):
    config = {"behaviour_task": task}
    return _built("abc_eval", [_human_bot(i) for i in range(n_items)], config, **fields)


def spot_the_bot(n_items=2, **fields):
    conversations = []
    for i in range(n_items):
        a, b = factories.system(), factories.system()
        texts = [f"segment turn {p} of {i}" for p in range(4)]
        conversations.append(factories.conversation(f"bb-{next(_counter)}", [a, b], texts))
    config = {"segment_lengths": [2], "features": ["sensibleness", "fluency"]}
    return _built("spot_the_bot", conversations, config, **fields)


def comparative(**fields):
    first = _human_bot(1)
    second = _human_bot(2)
    config = {"dimensions": ["relevance", "quality"]}
    return _built("comparative", [first, second], config, **fields)


def campaign_without_items(**fields):
    return campaign("ab", **fields)
