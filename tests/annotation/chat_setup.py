"""Chat campaigns for the tests: systems whose endpoints are OpenAI-compatible fake servers
on 127.0.0.1 (tests/endpoints/openai_fake.py), and a worker's way through the pages."""

import random

from django.urls import reverse

from annotation.campaigns import ChatSystems, create_campaign
from annotation.models import Assignment, Campaign
from endpoints.models import BotEndpoint
from tests import factories


def bot_system(server, *, slug=None, owner=None, timeout=5.0, shared=True):
    """A system whose endpoint is `server`; `shared`: open to any owner's campaigns."""
    system = factories.system(owner, **({"slug": slug} if slug else {}))
    BotEndpoint.objects.create(
        system=system,
        protocol="openai",
        url=server.base_url,
        model_name=system.slug,
        timeout_seconds=timeout,
        allow_other_owners=shared,
    )
    return system


def chat_campaign(systems, *, config=None, owner=None, **fields) -> Campaign:
    fields.setdefault("slug", f"chat-{random.randrange(10**9)}")
    fields.setdefault("title", "Talk with a bot")
    fields.setdefault("batch_size", 2)
    fields.setdefault("redundancy", 1)
    fields.setdefault("allow_worker_param", True)
    config = {"min_turns": 2, "max_turns": 3, "conversations_per_system": 1, **(config or {})}
    campaign = Campaign(task_kind="chat", task_config=config, owner=owner, **fields)
    create_campaign(campaign, ChatSystems(list(systems)))
    campaign.status = Campaign.Status.LIVE
    campaign.save(update_fields=["status"])
    return campaign


def start(client, campaign, worker="w1") -> Assignment:
    response = client.get(f"{campaign.start_url()}?worker={worker}")
    assert response.status_code == 302, response
    return Assignment.objects.select_related("batch", "campaign", "worker").get(
        campaign=campaign, worker__external_id__endswith=f":{worker}"
    )


def items(assignment):
    return list(assignment.batch.items.order_by("order_in_batch"))


def url(action, assignment, item, json=False):
    name = f"annotation:chat-{action}{'-json' if json else ''}"
    return reverse(name, args=[assignment.public_id, item.pk])


def say(client, assignment, item, text, position, json=False):
    return client.post(url("send", assignment, item, json), {"text": text, "position": position})
