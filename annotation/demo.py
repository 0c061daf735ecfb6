"""Demo campaigns: one live campaign of each task kind, open through the local provider,
so that a newcomer who ran `make run` can annotate at once (the home page links them).

The ABC-Eval campaign requires training, as in the paper: a newcomer first annotates the
three training conversations below, sees each disagreement with the gold labels explained,
and is screened on the last one before any real work."""

import json
import random

from django.db import transaction

from evalhub.comparison import latest_submission
from evalhub.demo_conversations import ALL as DEMO_CONVERSATIONS
from evalhub.demo_conversations import BOT_BOT, HUMAN_BOT, HUMAN_HUMAN
from evalhub.models import Conversation, PromptSet, System
from evalhub.services import import_conversations

from .items import add_items
from .kinds import get_kind
from .kinds.abc_eval import with_gold
from .models import Campaign

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
        "requires_training": True,
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
    {
        "slug": "demo-ranking",
        "title": "Rank the responses",
        "task_kind": "ranking",
        "instructions": (
            "Read the conversation and the possible next turns. Rank them from the best "
            "continuation (1) to the worst."
        ),
        "task_config": {},
        "system": "persona-bot",
        "baselines": ["seq2seq-baseline", "retrieval-baseline", "human-reference"],
    },
    {
        "slug": "demo-conversation-ranking",
        "title": "Rank the conversations",
        "task_kind": "conversation_ranking",
        "instructions": (
            "Read the conversations, each between a user and a chatbot. Rank them from the "
            "one whose chatbot did best (1) to the worst."
        ),
        "task_config": {},
        "conversations": [c["id"] for c in HUMAN_BOT],
    },
]


def _training_conversation(cid: str, bot: str, turns: list[tuple[str, dict, str]]) -> dict:
    """A human-bot training conversation; `turns` holds (bot text, its gold labels, why)
    after each human line, written as (human text, None, "")."""
    lines, gold, explanations = [], [], {}
    for text, labels, why in turns:
        if labels is not None:
            gold.append(labels)
            explanations[len(lines)] = why
        lines.append(text)
    conversation = {
        "id": cid,
        "domain": "demo-training",
        "speakers": ["human", bot],
        "turns": [{"speaker": i % 2, "text": text} for i, text in enumerate(lines)],
    }
    names = ("empathetic", "lack of empathy")
    labels = {name: [int(name in turn) for turn in gold] for name in names}
    return {"conversation": conversation, "labels": labels, "explanations": explanations}


EMPATHETIC, LACKING, NEITHER = {"empathetic"}, {"lack of empathy"}, set()
HUMAN = None
# Empathy training (ABC-Eval's behaviour task), in the order a worker meets them; the
# screening is on the last one.
EMPATHY_TRAINING = [
    _training_conversation(
        "demo-train-grandmother",
        "persona-bot",
        [
            ("my grandmother passed away last week", HUMAN, ""),
            (
                "i am so sorry for your loss . were you close to her ?",
                EMPATHETIC,
                "The bot recognises the grief and invites the user to talk: empathetic.",
            ),
            ("very close , she basically raised me", HUMAN, ""),
            (
                "cool . my dog is four years old .",
                LACKING,
                "Answering grief with 'cool' and a fact about its dog dismisses the user's "
                "feelings: lack of empathy.",
            ),
            ("ok ... i was talking about my grandmother", HUMAN, ""),
            (
                "do you live near where she lived ?",
                NEITHER,
                "A plain follow-up question that neither reacts to nor ignores an emotion: "
                "no label.",
            ),
        ],
    ),
    _training_conversation(
        "demo-train-new-job",
        "seq2seq-baseline",
        [
            ("i finally got the job i wanted !!", HUMAN, ""),
            (
                "i don ' t know .",
                LACKING,
                "The user is delighted and the bot does not react to it at all: lack of empathy.",
            ),
            ("i ' m so excited , i start on monday", HUMAN, ""),
            (
                "that is great news , congratulations ! you must be thrilled .",
                EMPATHETIC,
                "The bot shares the user's joy: empathetic.",
            ),
            ("thanks ! a bit nervous too", HUMAN, ""),
            (
                "what is the weather like there ?",
                LACKING,
                "The user says they are nervous and the bot changes the subject: lack of empathy.",
            ),
        ],
    ),
    _training_conversation(
        "demo-train-sick-cat",
        "persona-bot",
        [
            ("my cat is sick and i can ' t afford the vet", HUMAN, ""),
            (
                "that sounds really stressful . i hope your cat feels better soon .",
                EMPATHETIC,
                "The bot names the user's worry and responds kindly: empathetic.",
            ),
            ("thanks , i ' m trying to find a cheaper clinic", HUMAN, ""),
            (
                "some cities have charity clinics for pets ; a local shelter will know .",
                NEITHER,
                "Useful advice, but about the problem rather than the user's feelings: no label.",
            ),
            ("good idea , i ' ll call them tomorrow", HUMAN, ""),
            (
                "ha , cats are boring anyway , dogs are better .",
                LACKING,
                "Belittling the pet the user is worried about is an inappropriate reaction: "
                "lack of empathy.",
            ),
        ],
    ),
]


def _training_specs(kind, config: dict) -> list:
    """The training items with their gold, in the order of EMPATHY_TRAINING."""
    ids = [t["conversation"]["id"] for t in EMPATHY_TRAINING]
    conversations = Conversation.objects.filter(external_id__in=ids).prefetch_related(
        "speakers__system", "turns"
    )
    by_id = {c.external_id: c for c in conversations}
    specs = kind.build_from_conversations([by_id[i] for i in ids], config, random.Random(7))
    return [
        with_gold(spec, training["labels"], training["explanations"])
        for spec, training in zip(specs, EMPATHY_TRAINING, strict=True)
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


def _ranking_pairs(spec: dict):
    from .campaigns import ResponsePairs, response_pairs

    systems = System.objects.in_bulk([spec["system"], *spec["baselines"]], field_name="slug")
    source = ResponsePairs(
        PromptSet.objects.get(slug="demo-daily"),
        systems[spec["system"]],
        [systems[slug] for slug in spec["baselines"]],
    )
    return response_pairs(source)


def _specs(spec: dict, kind, config: dict, rng: random.Random):
    if spec["task_kind"] == "ab":
        return kind.build_from_responses(_ab_pairs(), rng)
    if spec["task_kind"] == "ranking":
        return kind.build_from_responses(_ranking_pairs(spec), rng)
    conversations = Conversation.objects.filter(external_id__in=spec["conversations"])
    conversations = conversations.prefetch_related("speakers__system", "turns").order_by(
        "external_id"
    )
    return kind.build_from_conversations(list(conversations), config, rng)


@transaction.atomic
def load_annotation_demo(owner) -> list[Campaign]:
    """Import the demo conversations and open the demo campaigns; idempotent."""
    conversations = DEMO_CONVERSATIONS + [t["conversation"] for t in EMPATHY_TRAINING]
    data = "\n".join(json.dumps(c) for c in conversations).encode()
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
            # The demo is tried out with `?worker=<any name>` on its start links.
            allow_worker_param=True,
            owner=owner,
            requires_training=spec.get("requires_training", False),
        )
        specs = _specs(spec, kind, config, random.Random(7))
        if campaign.requires_training:
            specs += _training_specs(kind, config)
        add_items(campaign, specs)
        campaigns.append(campaign)
    return campaigns
