"""The demo's chat campaign: a worker chats with the demo bot (demo/responder.py, a
rule-based responder `make run` starts on 127.0.0.1), then rates the conversation."""

from annotation.campaigns import ChatSystems, create_campaign
from annotation.models import Campaign
from endpoints.models import BotEndpoint
from evalhub.models import System

from .responder import DEFAULT_PORT

SLUG = "demo-chat"
BOT = "demo-bot"


def load_chat_demo(owner) -> Campaign:
    """The demo bot (a system with its endpoint) and a live chat campaign with it; once."""
    existing = Campaign.objects.filter(slug=SLUG).first()
    if existing is not None:
        return existing
    bot, _ = System.objects.get_or_create(
        slug=BOT,
        defaults={
            "name": "Demo bot (simulated)",
            "description": "A few canned rules, no language model: the demo's chatbot, "
            "started by `make run` on 127.0.0.1 (demo/responder.py).",
            "owner": owner,
        },
    )
    BotEndpoint.objects.get_or_create(
        system=bot,
        defaults={"protocol": "evalhub", "url": f"http://127.0.0.1:{DEFAULT_PORT}/reply"},
    )
    campaign = Campaign(
        slug=SLUG,
        title="Chat with a bot, then rate it",
        task_kind="chat",
        task_config={"min_turns": 2, "max_turns": 4, "conversations_per_system": 6},
        instructions=(
            "Chat with the bot for a few turns about anything you like, then rate the "
            "conversation. The demo's bot is simulated: a few rules, no model."
        ),
        redundancy=1,
        batch_size=1,
        max_batches_per_worker=3,
        provider=Campaign.Provider.LOCAL,
        allow_worker_param=True,
        owner=owner,
    )
    create_campaign(campaign, ChatSystems([bot]), gold_per_batch=0, user=owner)
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.LIVE)
    return campaign
