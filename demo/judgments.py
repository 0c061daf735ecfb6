"""Simulated judgments for the demo's ABC-Eval, Likert, comparative and ranking campaigns.

A newcomer who runs `make run` should see results for every task kind at once, not "No
results yet": simulated workers (``simulated-demo-<n>``; the results page counts their
judgments as simulated) take batches as real workers would (``annotation.allocation``), and answer from a
known model of each system's quality. Their answers go through the kind's own form parser,
so a simulated judgment is exactly what the task page would have stored.

The model: a system's ``quality`` q in [0, 1] (unknown systems 0.5). An ABC-Eval label that
is undesirable is ticked with probability 0.05 + 0.5 (1 - q), a desirable one with
0.05 + 0.5 q; a Likert rating is 1 + 4 q plus normal noise (sd 0.8), rounded into 1..5; of
two conversations the one of the better bot wins a dimension with probability
1 / (1 + exp(-4 (q_a - q_b))), after 15% "neither"; k responses or conversations are
ranked by Plackett-Luce with strengths 4 q (the order of 4 q plus Gumbel noise).
"""

import math
import random
from collections.abc import Callable

from django.http import QueryDict
from django.utils import timezone

from analysis.reports.data import UNDESIRABLE_LABELS
from annotation.allocation import NoWork, next_assignment
from annotation.kinds import abc_eval as abc_eval_kind
from annotation.kinds import get_kind
from annotation.kinds import likert as likert_kind
from annotation.models import SIMULATED_WORKER_PREFIX, Campaign, Item, Worker
from annotation.services import batch_items, record_judgment, submit_if_complete

# The demo's systems, as their names promise: persona-bot talks about its dog whatever is
# said, the seq2seq baseline answers generically; people (the human reference) best.
DEMO_QUALITY = {
    "human-reference": 0.9,
    "persona-bot": 0.7,
    "retrieval-baseline": 0.5,
    "seq2seq-baseline": 0.25,
}

Quality = Callable[[str], float]


def _abc_eval_answer(item, config, rng, quality: Quality) -> QueryDict:
    q = quality(item.content["meta"]["system"])
    form = QueryDict(mutable=True)
    form["reviewed"] = "1"
    for name in abc_eval_kind.TASKS[item.content["task"]].labels:
        label = abc_eval_kind.LABELS[name]
        chance = 0.05 + 0.5 * ((1 - q) if name in UNDESIRABLE_LABELS else q)
        for position in item.content["bot_turns"]:
            if rng.random() < chance:
                form[abc_eval_kind.field_name(label, position)] = "1"
    return form


def _likert_answer(item, config, rng, quality: Quality) -> QueryDict:
    q = quality(item.content["meta"]["system"])
    form = QueryDict(mutable=True)
    positions = [None] if config["level"] == "dialogue" else item.content["bot_turns"]
    for dimension in config["dimensions"]:
        for position in positions:
            score = min(5, max(1, round(1 + 4 * q + rng.gauss(0, 0.8))))
            form[likert_kind.field_name(dimension, position)] = str(score)
    return form


def _comparative_answer(item, config, rng, quality: Quality) -> QueryDict:
    meta = item.content["meta"]
    strength = {
        side: max((quality(s) for s in meta[f"systems_{side}"]), default=0.5) for side in "ab"
    }
    left = item.content["left_is"]
    form = QueryDict(mutable=True)
    for dimension in config["dimensions"]:
        if rng.random() < 0.15:
            answer = "neither"
        else:
            a_wins = rng.random() < 1 / (1 + math.exp(-4 * (strength["a"] - strength["b"])))
            answer = "left" if (left == "a") == a_wins else "right"
        form[f"choice_{dimension}"] = answer
    return form


def _ranking_answer(item, config, rng, quality: Quality) -> QueryDict:
    # A Plackett-Luce draw: the order of 4 q plus a standard Gumbel per shown response (or
    # conversation), q that of the best system behind it (identical texts merge systems).
    strengths = [
        max(quality(system) for system in systems) for systems in item.content["meta"]["systems"]
    ]
    noisy = [4 * q - math.log(-math.log(rng.random() or 1e-300)) for q in strengths]
    order = sorted(range(len(noisy)), key=lambda n: -noisy[n])
    form = QueryDict(mutable=True)
    for rank, n in enumerate(order, 1):
        form[f"rank_{n + 1}"] = str(rank)
    return form


ANSWERS = {
    "abc_eval": _abc_eval_answer,
    "likert": _likert_answer,
    "comparative": _comparative_answer,
    "ranking": _ranking_answer,
    "conversation_ranking": _ranking_answer,
}


def _quality(name: str) -> float:
    return DEMO_QUALITY.get(name, 0.5)


def simulate_judgments(
    campaign: Campaign,
    *,
    workers: int,
    quality: Quality = _quality,
    seed: int = 0,
) -> int:
    """Have ``workers`` simulated workers each take and finish one batch of ``campaign``
    (fewer when the campaign runs out of work); returns the number of judgments stored.
    Training items are skipped: simulated workers are qualified by construction."""
    answer = ANSWERS[campaign.task_kind]
    kind = get_kind(campaign.task_kind)
    rng = random.Random(seed)
    stored = 0
    for n in range(workers):
        worker, _ = Worker.objects.get_or_create(
            provider=Campaign.Provider.LOCAL, external_id=f"{SIMULATED_WORKER_PREFIX}demo-{n + 1}"
        )
        try:
            assignment = next_assignment(campaign, worker)
        except NoWork:
            break
        entries = batch_items(assignment)
        items = Item.objects.in_bulk([entry.pk for entry in entries])
        for entry in entries:
            item = items[entry.pk]
            if entry.judged or item.role == Item.Role.TRAINING:
                continue
            form = answer(item, campaign.task_config, rng, quality)
            payload = kind.parse_payload(item, campaign.task_config, form)
            _, created = record_judgment(
                assignment, item, payload, started_at=timezone.now(), client_duration_ms=40_000
            )
            stored += created
        submit_if_complete(assignment, len(entries))
    return stored


DEMO_SLUGS = (
    "demo-abc-eval",
    "demo-likert",
    "demo-comparative",
    "demo-ranking",
    "demo-conversation-ranking",
)


def load_judgments_demo(parameters: dict | None = None) -> dict:
    """Simulated judgments (once) in the demo's ABC-Eval, Likert, comparative and ranking
    campaigns, two of each batch's places taken so that a newcomer still finds work, and
    their analyses computed now. Returns {campaign slug: its AnalysisRun}."""
    from analysis.runs.tasks import analyze_campaign

    runs = {}
    for campaign in Campaign.objects.filter(slug__in=DEMO_SLUGS).order_by("slug"):
        simulated = campaign.judgments.filter(
            worker__external_id__startswith=SIMULATED_WORKER_PREFIX
        )
        if not simulated.exists():
            places = campaign.batches.count() * max(campaign.redundancy - 1, 1)
            simulate_judgments(campaign, workers=places, seed=campaign.pk)
        runs[campaign.slug] = analyze_campaign(campaign, parameters, synchronous=True)
    return runs
