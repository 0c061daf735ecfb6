"""Quality control: how each worker of a campaign did, blocking, and the analysis switch.

`worker_figures(campaign)` computes, per worker who took a batch of the campaign:

- `judgments`: items judged; `batches_submitted`: batches submitted (or reviewed).
- `gold`: judgments of gold items scored correct, over gold judgments that were scored
  (`Judgment.gold_correct` is not null).
- `controls` (Spot The Bot): on items whose speakers are all people
  (`content["meta"]["speakers"]` all "human", the paper's human-human conversations),
  speaker labels "human", over all the worker's speaker labels there. A careful worker
  who cannot tell is "unsure", which counts against them: on a control, every speaker
  is a person.
- `agreement`: on task items, each part of the worker's answer (see `answer_parts`: for
  Spot The Bot each speaker's label and each feature choice, for A/B the choice) that
  equals the majority value of that part among the item's other annotators, over the
  parts for which the others have a majority: a part is not counted when it has no other
  annotator, or when the others' most frequent values are tied. Comparing whole answers
  made every Spot The Bot worker score near zero (two speakers and three features must all
  match), so careless workers could not be told from careful ones.
- `median_seconds`: median time per item (`Judgment.seconds`: the browser's measure, else
  the server's).

Everything comes from two queries (the campaign's judgments as values() rows, and its
workers with their submitted batches), whatever the size of the campaign. Blocking keeps
every judgment; `judgments_for_analysis` leaves blocked workers out when asked.
"""

import json
from collections import Counter, defaultdict
from dataclasses import dataclass

from django.contrib.admin.models import CHANGE, LogEntry
from django.db import transaction
from django.db.models import Count, Q, QuerySet

from .models import Assignment, Campaign, Item, Judgment, Qualification, Worker

# Payload keys that say how the item was shown, not what the worker answered: `left` is
# the side on which the randomised first response or dialogue appeared (ab, comparative);
# a chat's `conversation` and `comparison` name each worker's own conversations, which
# nobody else saw (chat workers agree or not on their ratings of the same system).
VOLATILE_KEYS = frozenset({"left", "conversation", "comparison"})
HUMAN = "human"


def canonical_answer(payload: dict) -> str:
    """The answer of a payload, comparable across workers: its JSON with sorted keys and
    without `VOLATILE_KEYS`. Two workers agree on an item when these strings are equal,
    e.g. for Spot The Bot when every speaker label and every feature preference match."""
    answer = {k: v for k, v in payload.items() if k not in VOLATILE_KEYS}
    return json.dumps(answer, sort_keys=True, separators=(",", ":"))


def answer_parts(payload: dict) -> list[tuple[str, str]]:
    """The parts of an answer, each compared on its own: (path, value as JSON) for every
    leaf of the payload without `VOLATILE_KEYS`, e.g. Spot The Bot's
    `{"labels": ["human", "bot"], "better": {"fluency": 0}}` gives `labels[0]`, `labels[1]`
    and `better.fluency`; an A/B answer has the one part `choice`."""
    parts: list[tuple[str, str]] = []

    def walk(value, path: str) -> None:
        if isinstance(value, dict):
            for key in sorted(value):
                walk(value[key], f"{path}.{key}" if path else str(key))
        elif isinstance(value, list):
            for index, element in enumerate(value):
                walk(element, f"{path}[{index}]")
        else:
            parts.append((path, json.dumps(value)))

    walk({k: v for k, v in payload.items() if k not in VOLATILE_KEYS}, "")
    return parts


@dataclass(frozen=True)
class Rate:
    """`hits` out of `total`; `value` is None when there was nothing to count."""

    hits: int = 0
    total: int = 0

    @property
    def value(self) -> float | None:
        return self.hits / self.total if self.total else None


@dataclass(frozen=True)
class WorkerFigures:
    worker: Worker
    judgments: int
    batches_submitted: int
    gold: Rate
    controls: Rate
    agreement: Rate
    median_seconds: float | None
    # Training on the campaign's task ("" when its kind has none): attempts begun, outcome.
    training_attempts: int = 0
    training: str = ""


def _is_control(speakers) -> bool:
    return isinstance(speakers, list) and bool(speakers) and all(s == HUMAN for s in speakers)


def agreement_rates(rows) -> dict[int, Rate]:
    """Agreement with the other annotators' majority, per worker.

    `rows` are (worker id, unit, answer), one per judgment of a unit: a unit is an item, or
    one part of an item's answer ((item id, part path) in `worker_figures`).
    """
    by_item: dict[int, list[tuple[int, str]]] = defaultdict(list)
    for worker_id, item_id, answer in rows:
        by_item[item_id].append((worker_id, answer))
    hits: Counter = Counter()
    totals: Counter = Counter()
    for answers in by_item.values():
        if len(answers) < 2:
            continue
        counts = Counter(answer for _, answer in answers)
        for worker_id, answer in answers:
            others = counts.copy()
            others[answer] -= 1
            top = max(others.values())
            majority = [a for a, n in others.items() if n == top and n > 0]
            if len(majority) != 1:
                continue
            totals[worker_id] += 1
            hits[worker_id] += majority[0] == answer
    return {w: Rate(hits[w], totals[w]) for w in totals}


def _seconds(client_ms, started_at, submitted_at) -> float:
    # The same rule as Judgment.seconds, on values() rows.
    if client_ms is not None:
        return client_ms / 1000
    return (submitted_at - started_at).total_seconds()


def worker_figures(campaign: Campaign) -> list[WorkerFigures]:
    """The figures of every worker who took a batch of `campaign`, in no particular order."""
    rows = Judgment.objects.filter(campaign=campaign).values_list(
        "worker_id",
        "item_id",
        "item__role",
        "payload",
        "gold_correct",
        "client_duration_ms",
        "started_at",
        "submitted_at",
        "item__content__meta__speakers",
    )
    judgments: Counter = Counter()
    gold_hits: Counter = Counter()
    gold_totals: Counter = Counter()
    control_hits: Counter = Counter()
    control_totals: Counter = Counter()
    seconds: dict[int, list[float]] = defaultdict(list)
    answers = []
    for worker_id, item_id, role, payload, gold_correct, ms, started, submitted, speakers in rows:
        judgments[worker_id] += 1
        seconds[worker_id].append(_seconds(ms, started, submitted))
        if gold_correct is not None:
            gold_totals[worker_id] += 1
            gold_hits[worker_id] += gold_correct
        if _is_control(speakers):
            labels = payload.get("labels") or []
            control_totals[worker_id] += len(labels)
            control_hits[worker_id] += sum(label == HUMAN for label in labels)
        if role == Item.Role.TASK:
            answers.extend(
                (worker_id, (item_id, part), value) for part, value in answer_parts(payload)
            )
    agreement = agreement_rates(answers)
    workers = (
        Worker.objects.filter(assignments__campaign=campaign)
        .annotate(
            batches_submitted=Count(
                "assignments", filter=Q(assignments__status__in=Assignment.DONE)
            )
        )
        .order_by("pk")
    )
    import numpy as np  # here, not at app start-up (the campaign pages import this module)

    training = _training(campaign, [w.pk for w in workers])
    return [
        WorkerFigures(
            worker=w,
            judgments=judgments[w.pk],
            batches_submitted=w.batches_submitted,
            gold=Rate(gold_hits[w.pk], gold_totals[w.pk]),
            controls=Rate(control_hits[w.pk], control_totals[w.pk]),
            agreement=agreement.get(w.pk, Rate()),
            median_seconds=float(np.median(seconds[w.pk])) if seconds[w.pk] else None,
            **training.get(w.pk, {}),
        )
        for w in workers
    ]


def _training(campaign: Campaign, worker_ids: list[int]) -> dict[int, dict]:
    """Per worker, the attempts and outcome of the training on the campaign's task, in one
    query: "passed", "failed" (graded, not passed), "in training" (an attempt not yet
    graded) or "not trained". Empty when the task kind has no training."""
    kind = campaign.kind
    key = kind.training_key(kind.clean_config(campaign.task_config))
    if key is None:
        return {}
    # Joined on the campaign rather than a list of ids: one short query for any number.
    found = {
        q.worker_id: q
        for q in Qualification.objects.filter(key=key, worker__assignments__campaign=campaign)
        .distinct()
        .only("worker_id", "attempts", "passed", "last_mistakes")
    }
    training = {}
    for worker_id in worker_ids:
        q = found.get(worker_id)
        if q is None or (q.attempts == 0 and not q.passed):
            outcome = "not trained"
        elif q.passed:
            outcome = "passed"
        elif q.last_mistakes is not None:
            outcome = "failed"
        else:
            outcome = "in training"
        attempts = q.attempts if q else 0
        training[worker_id] = {"training_attempts": attempts, "training": outcome}
    return training


SORT_KEYS = {
    "worker": lambda f: f.worker.external_id,
    "judgments": lambda f: f.judgments,
    "batches": lambda f: f.batches_submitted,
    "gold": lambda f: f.gold.value,
    "controls": lambda f: f.controls.value,
    "agreement": lambda f: f.agreement.value,
    "seconds": lambda f: f.median_seconds,
    "blocked": lambda f: f.worker.blocked,
}
DEFAULT_SORT = "-judgments"


def sort_figures(figures: list[WorkerFigures], sort: str | None) -> tuple[list, str]:
    """Figures ordered by `sort` (a `SORT_KEYS` name, "-" first for descending); workers
    without a value for it come last either way. Returns (figures, the sort applied): an
    unknown key falls back to `DEFAULT_SORT`."""
    sort = sort or DEFAULT_SORT
    name = sort.removeprefix("-")
    if name not in SORT_KEYS:
        sort, name = DEFAULT_SORT, DEFAULT_SORT.removeprefix("-")
    key = SORT_KEYS[name]
    with_value = [f for f in figures if key(f) is not None]
    without = [f for f in figures if key(f) is None]
    # Ties keep a stable, readable order: by external id.
    with_value.sort(key=lambda f: f.worker.external_id)
    with_value.sort(key=key, reverse=sort.startswith("-"))
    without.sort(key=lambda f: f.worker.external_id)
    return with_value + without, sort


@transaction.atomic
def set_blocked(worker: Worker, *, blocked: bool, reason: str, by=None) -> Worker:
    """Block or unblock a worker everywhere; their judgments stay. A blocked worker gets no
    new batch (allocation refuses them). `by` (a staff user) is recorded with the reason in
    the admin log, which keeps the history that `blocked_reason` alone would overwrite."""
    reason = reason.strip()
    worker.blocked = blocked
    worker.blocked_reason = reason if blocked else ""
    worker.save(update_fields=["blocked", "blocked_reason"])
    if by is not None:
        verb = "Blocked" if blocked else "Unblocked"
        LogEntry.objects.log_actions(
            by.pk,
            [worker],
            CHANGE,
            change_message=f"{verb}: {reason}" if reason else verb,
        )
    return worker


def judgments_for_analysis(campaign: Campaign, *, exclude_blocked: bool) -> QuerySet:
    """The campaign's judgments, with those of blocked workers left out when asked (never
    deleted: unblocking a worker brings them back). Items are loaded with them, as every
    analysis reads them."""
    judgments = Judgment.objects.filter(campaign=campaign).select_related("item")
    if exclude_blocked:
        judgments = judgments.filter(worker__blocked=False)
    return judgments
