"""Chat campaigns for the tests: systems whose endpoints are OpenAI-compatible fake servers
on 127.0.0.1 (tests/endpoints/openai_fake.py answers whole, tests/endpoints/sse_fake.py
streams), and a worker's way through the pages: the form posts (which wait for the whole
reply) and the page script's way (a JSON post, then the reply's event stream)."""

import json
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


def events(response) -> list[tuple[str, dict]]:
    """(name, data) of each server-sent event of a streamed response, keep-alives left out."""
    body = b"".join(response.streaming_content).decode()
    found = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        if lines:
            found.append((lines["event"], json.loads(lines["data"])))
    return found


def stream(client, assignment, item) -> list[tuple[str, dict]]:
    """The events of the bot's reply due in the conversation, read to their end."""
    response = client.get(reverse("annotation:chat-stream", args=[assignment.public_id, item.pk]))
    assert response.status_code == 200, response
    assert response["Content-Type"] == "text/event-stream"
    return events(response)


def say_and_stream(client, assignment, item, text, position) -> dict:
    """As the page's script: post the message as JSON, then read the reply's stream; the
    `end` event's data (status, text, error, and the conversation's state)."""
    sent = say(client, assignment, item, text, position, json=True)
    assert sent.status_code == 200, sent.content
    return stream(client, assignment, item)[-1][1]
