"""Demo campaigns: one live campaign of each task kind, open through the local provider,
so that a newcomer who ran `make run` can annotate at once (the home page links them)."""

import json
import random

from django.db import transaction

from evalhub.comparison import latest_submission
from evalhub.demo_conversations import ALL as DEMO_CONVERSATIONS
from evalhub.demo_conversations import BOT_BOT, HUMAN_BOT, HUMAN_HUMAN
from evalhub.models import Conversation, PromptSet, System
from evalhub.services import import_conversations

from .models import Campaign
from .services import add_items
from .tasks import get_kind

DEMO_CAMPAIGNS = [
    {
        "slug": "demo-ab",
        "title": "Which response is better?",
        "task_kind": "ab",
        "instructions": (
            "Read the conversation and the two possible next turns. Pick the response that "
            'is the better continuation, or "it\'s a tie" if neither is better.'
        ),
        "task_config": {},
    },
    {
        "slug": "demo-spot-the-bot",
        "title": "Spot the bot",
        "task_kind": "spot_the_bot",
        "instructions": (
            "Each conversation may be between people or between chatbots. Decide for each "
            "speaker whether it is a human or a bot (or say you are unsure), then say which "
            "speaker did better on each quality."
        ),
        "task_config": {"segment_lengths": [2, 3, 5]},
        "conversations": [c["id"] for c in BOT_BOT + HUMAN_HUMAN],
    },
    {
        "slug": "demo-abc-eval",
        "title": "Label the chatbot's empathy",
        "task_kind": "abc_eval",
        "instructions": (
            "Read the whole conversation between a user and a chatbot. For every chatbot "
            "turn, tick each behaviour it shows. Definitions and examples are below."
        ),
        "task_config": {"behaviour_task": "empathy"},
        "conversations": [c["id"] for c in HUMAN_BOT],
    },
    {
        "slug": "demo-likert",
        "title": "Rate the conversation",
        "task_kind": "likert",
        "instructions": "Read the conversation, then rate the chatbot from 1 (worst) to 5 (best).",
        "task_config": {"level": "dialogue"},
        "conversations": [c["id"] for c in HUMAN_BOT],
    },
    {
        "slug": "demo-comparative",
        "title": "Which conversation is better?",
        "task_kind": "comparative",
        "instructions": (
            "Read both conversations. For each quality, choose the conversation whose "
            'chatbot did better, or "neither".'
        ),
        "task_config": {},
        "conversations": [c["id"] for c in HUMAN_BOT],
    },
]


def _ab_pairs():
    prompt_set = PromptSet.objects.get(slug="demo-daily")
    ours = latest_submission(System.objects.get(slug="persona-bot"), prompt_set)
    theirs = latest_submission(System.objects.get(slug="seq2seq-baseline"), prompt_set)
    by_prompt = {r.prompt_id: r for r in theirs.responses.select_related("submission__system")}
    return [
        (r.prompt, r, by_prompt[r.prompt_id])
        for r in ours.responses.select_related("prompt", "submission__system")
        if r.prompt_id in by_prompt
    ]


def _specs(spec: dict, kind, config: dict, rng: random.Random):
    if spec["task_kind"] == "ab":
        return kind.build_from_responses(_ab_pairs(), rng)
    conversations = Conversation.objects.filter(external_id__in=spec["conversations"])
    conversations = conversations.prefetch_related("speakers__system", "turns").order_by(
        "external_id"
    )
    return kind.build_from_conversations(list(conversations), config, rng)


@transaction.atomic
def load_annotation_demo(owner) -> list[Campaign]:
    """Import the demo conversations and open the demo campaigns; idempotent."""
    data = "\n".join(json.dumps(c) for c in DEMO_CONVERSATIONS).encode()
    import_conversations(data=data, filename="demo-conversations.jsonl", user=owner)
    campaigns = []
    for spec in DEMO_CAMPAIGNS:
        existing = Campaign.objects.filter(slug=spec["slug"]).first()
        if existing:
            campaigns.append(existing)
            continue
        kind = get_kind(spec["task_kind"])
        config = kind.clean_config(spec["task_config"])
        campaign = Campaign.objects.create(
            slug=spec["slug"],
            title=spec["title"],
            task_kind=spec["task_kind"],
            task_config=config,
            instructions=spec["instructions"],
            redundancy=3,
            batch_size=3,
            max_batches_per_worker=3,
            status=Campaign.Status.LIVE,
            provider=Campaign.Provider.LOCAL,
            owner=owner,
        )
        add_items(campaign, _specs(spec, kind, config, random.Random(7)))
        campaigns.append(campaign)
    return campaigns
