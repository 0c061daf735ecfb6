"""A worker judging a run's items: claim, concurrency, budget, progress, pause, death.

Claim. A worker holds the run's lease ("judge-run:<pk>", evalhub/leases.py) while it
judges: free, lapsed (its worker died) or held by a dead process of this host, it is taken;
otherwise the task does nothing. Holding it, the worker sets the run running and
increments `JudgeRun.lease`, the generation of the lease: every later write of this worker
(a judgment with its counters, a heartbeat, the final status) applies only while the run
still carries that generation, so a worker thought dead that wakes up writes nothing, and
two workers never judge one run.

Concurrency. Up to `run.concurrency` items are in flight, each on a thread that only talks
HTTP and parses (judging/answering.py); every database write happens on the worker's own
thread, including the endpoint budget charged before each request (the client's budget
hook hands the charge to this thread and waits), so one connection serves the whole run.
The endpoint's own `max_concurrency` still caps what all its users send at once.

Progress. Each answer is stored with the run's counters (done or failed, tokens) in one
transaction, the counters incremented in the database, so the page reads exact numbers
at any time. The unique (run, item) makes a judgment stored twice impossible.

Stopping. Between answers the worker rereads the run's status: paused (by the owner), or
a lost lease, stops taking new items; the ones in flight are finished and stored (while
the lease holds). A spent daily budget pauses the run with the reason; a transport error
the client gave up on fails it with the error's summary (never the upstream body: the run's
owner reads it); the unjudged items wait for a resume.
Arenas. A run over an arena judges its voted battles the same way (judging/battles.py
makes each one's question); a battle with nothing to judge is recorded as skipped, with the
reason, on the worker's thread and without a request.
After EVALHUB_JUDGE_SLICE_SECONDS the worker queues the run again and returns "continued";
the task (judging/tasks.py) then sends the next message, once the lease is released, which
keeps every task within Celery's time limits.
"""

import logging
import queue
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone

from annotation.models import Item
from arenas.models import Battle
from endpoints.client import (
    BotClient,
    BotError,
    BudgetExhausted,
    Endpoint,
    database_budget,
    database_record,
)
from endpoints.models import BotEndpoint
from evalhub import leases
from webhooks.events import emit
from webhooks.events import link as webhook_link
from webhooks.models import EventType

from . import battles
from .answering import Answer, OutputMode, Question, answer
from .items import judgeable, pending
from .models import AutomaticJudgment, JudgeRun

logger = logging.getLogger(__name__)
Status = JudgeRun.Status
HEARTBEAT_SECONDS = 5.0


class LostLease(Exception):
    """Another worker holds the run now (or it was deleted): stop, write nothing."""


# The lease a worker judging a run holds: "judge-run:<pk>".
LEASE_PREFIX = "judge-run"


def claim(run_id: int) -> int | None:
    """Set the run running for this worker, which holds its lease: the lease's new
    generation, or None when the run is not queued or running (paused, done)."""
    now = timezone.now()
    with transaction.atomic():
        changed = JudgeRun.objects.filter(
            pk=run_id, status__in=(Status.QUEUED, Status.RUNNING)
        ).update(
            status=Status.RUNNING,
            lease=F("lease") + 1,
            heartbeat=now,
            started_at=Coalesce("started_at", now),
            last_error="",
        )
        if not changed:
            return None
        return JudgeRun.objects.filter(pk=run_id).values_list("lease", flat=True).get()


def owners_account(run: JudgeRun, error: BotError) -> str:
    """What the run's page says of a failed request: the client's summary, which never
    quotes the upstream body; the full account goes to the log (and the call's outcome
    keeps it for staff, EndpointCall.detail)."""
    logger.warning("Judge run %s: %s", run.pk, error)
    return error.summary


def _fenced(run: JudgeRun, lease: int):
    return JudgeRun.objects.filter(pk=run.pk, lease=lease)


def _counter(run: JudgeRun, result: Answer, skipped: bool) -> str:
    if skipped:
        return "items_skipped"
    return "items_done" if result.ok else "items_failed"


def record(run: JudgeRun, lease: int, unit_id: int, result: Answer, *, skipped=False) -> bool:
    """Store one answer (of an item, or of a battle for an arena run; `skipped`: a battle
    not sent, `result.error` says why) and count it; False when it was judged already."""
    counter = _counter(run, result, skipped)
    if skipped:
        status = AutomaticJudgment.Status.SKIPPED
    else:
        status = AutomaticJudgment.Status.OK if result.ok else AutomaticJudgment.Status.FAILED
    unit = {"battle_id": unit_id} if run.arena_id else {"item_id": unit_id}
    counters = {
        counter: F(counter) + 1,
        "prompt_tokens": F("prompt_tokens") + (result.prompt_tokens or 0),
        "completion_tokens": F("completion_tokens") + (result.completion_tokens or 0),
        "heartbeat": timezone.now(),
    }
    try:
        with transaction.atomic():
            AutomaticJudgment.objects.create(
                run=run,
                **unit,
                status=status,
                payload=result.payload,
                raw_text=result.raw_text,
                error=result.error,
                attempts=result.attempts,
                output_path=result.path,
                parse_failures=result.parse_failures,
                prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens,
            )
            if not _fenced(run, lease).update(**counters):
                raise LostLease
    except IntegrityError:
        return False
    return True


def remember_refusal(endpoint_id: int | None) -> None:
    """The endpoint refused `response_format`: later runs ask with the prompt alone from
    their first request, until its owner sets structured output back to "auto"."""
    if endpoint_id is not None:
        BotEndpoint.objects.filter(pk=endpoint_id).update(
            structured_output=BotEndpoint.StructuredOutput.OFF
        )


def _finish(run: JudgeRun, lease: int, status: str, error: str = "") -> None:
    fields = {"status": status, "last_error": error[:2000], "heartbeat": timezone.now()}
    if status == Status.DONE:
        fields["finished_at"] = timezone.now()
    # A pause asked for meanwhile is kept, whatever this worker would have set.
    if _fenced(run, lease).exclude(status=Status.PAUSED).update(**fields):
        _emit_finished(run.pk, fields["heartbeat"])


def _emit_finished(run_id: int, at) -> None:
    """The judge's owner's webhooks hear that the run is done or failed; a run resumed
    and finished again is another event (`at` tells them apart)."""
    run = JudgeRun.objects.select_related("judge__owner", "rubric", "campaign", "arena").get(
        pk=run_id
    )

    def data() -> dict:
        target = run.target
        return {
            "judge_run": {
                "id": run.pk,
                "status": run.status,
                "judge": run.judge.slug,
                "rubric": f"{run.rubric.name} v{run.rubric.version}",
                "target_kind": "arena" if run.arena_id else "campaign",
                "target_slug": target.slug,
                "items_total": run.items_total,
                "items_done": run.items_done,
                "items_failed": run.items_failed,
                "items_skipped": run.items_skipped,
                "error": run.last_error,
                "finished_at": at,
                "url": webhook_link(run.get_absolute_url()),
            }
        }

    emit(
        run.judge.owner,
        EventType.JUDGE_RUN_FINISHED,
        data,
        key=f"judge_run.finished:{run.pk}:{at.isoformat()}",
    )


def _items(queryset, chunk: int = 200, *, arena: bool = False):
    """The pending items (battles, with their conversations, for an arena run) in order,
    loaded `chunk` at a time. Not `.iterator()`: on PostgreSQL that holds a server-side
    cursor open, and a run that stops early (paused, budget spent) would leave it to be
    closed by the garbage collector in the middle of another query on the same connection."""
    ids = list(queryset.values_list("pk", flat=True))
    for start in range(0, len(ids), chunk):
        if arena:
            batch = battles.with_conversations(
                Battle.objects.filter(pk__in=ids[start : start + chunk])
            )
            yield from batch.order_by("started_at", "pk")
            continue
        batch = Item.objects.filter(pk__in=ids[start : start + chunk]).select_related("campaign")
        yield from batch.order_by("position")


def _skipped(reason: str) -> Answer:
    return Answer(False, {}, "", reason, 0, None, None)


class _Inbox:
    """Where the item threads post finished answers, and the budget charges and call
    outcomes they need done on the worker's thread (which holds the database connection)."""

    def __init__(self):
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.owner = threading.get_ident()

    def on_worker_thread(self, function, *args):
        if threading.get_ident() == self.owner:
            return function(*args)
        future: Future = Future()
        self.queue.put(("call", (function, args, future)))
        return future.result()

    def finished(self, future: Future) -> None:
        self.queue.put(("done", future))


def make_client(run: JudgeRun, inbox: _Inbox) -> BotClient:
    return BotClient(
        Endpoint.from_model(run.judge.endpoint),
        max_reply_chars=settings.EVALHUB_JUDGE_MAX_REPLY_CHARS,
        budget=lambda endpoint, purpose: inbox.on_worker_thread(database_budget, endpoint, purpose),
        purpose="judge",
        record=lambda endpoint_id, **outcome: inbox.on_worker_thread(
            partial(database_record, endpoint_id, **outcome)
        ),
    )


def execute(run_id: int, *, client_factory=make_client) -> str:
    """Judge the run's pending items; "done", "paused", "failed", "continued" (queued again
    for a new task to take the rest), "lost" (another worker took over) or "skipped" (not
    claimable, or its lease is held by a live worker)."""
    with leases.holding(leases.key_for(LEASE_PREFIX, run_id)) as held:
        if held is None:
            return "skipped"
        lease = claim(run_id)
        if lease is None:
            return "skipped"
        return _judge(run_id, lease, held, client_factory)


def _judge(run_id: int, lease: int, held: leases.Held, client_factory) -> str:
    run = JudgeRun.objects.select_related("judge__endpoint", "rubric", "campaign", "arena").get(
        pk=run_id
    )
    _fenced(run, lease).update(items_total=judgeable(run).count())
    if run.arena_id:
        kind = config = None
    else:
        kind = run.campaign.kind
        config = kind.clean_config(run.campaign.task_config)
    inbox = _Inbox()
    try:
        client = client_factory(run, inbox)
    except BotError as error:
        _finish(run, lease, Status.FAILED, owners_account(run, error))
        return "failed"
    mode = OutputMode(structured=client.endpoint.structured_output)
    items = _items(pending(run), arena=bool(run.arena_id))
    deadline = time.monotonic() + settings.EVALHUB_JUDGE_SLICE_SECONDS
    outcome, error_text = None, ""
    in_flight: dict[Future, int] = {}
    last_beat = time.monotonic()

    def next_question():
        """The next unit's question; battles that cannot be judged are recorded skipped.
        An arena of imported battles may have many in a row: the lease is kept alive
        meanwhile, and the slice's deadline stops the skipping too (the rest is continued)."""
        nonlocal outcome, last_beat
        for unit in items:
            if not run.arena_id:
                task = kind.item_context(unit, config)
                return unit, Question(kind, unit, config, task, run.rubric.instructions)
            try:
                return unit, battles.question(run, unit)
            except battles.Unjudgeable as reason:
                try:
                    record(run, lease, unit.pk, _skipped(str(reason)), skipped=True)
                    if time.monotonic() - last_beat >= HEARTBEAT_SECONDS:
                        last_beat = time.monotonic()
                        held.beat()
                except (LostLease, leases.LeaseLost):
                    outcome = "lost"
                    return None, None
                if time.monotonic() > deadline:
                    return None, None
        return None, None

    def submit(pool) -> bool:
        item, question = next_question()
        if item is None:
            return False
        future = pool.submit(answer, client, question, run.max_attempts, mode)
        in_flight[future] = item.pk
        future.add_done_callback(inbox.finished)
        return True

    with ThreadPoolExecutor(max_workers=run.concurrency, thread_name_prefix="judge") as pool:
        taking = True
        while taking and len(in_flight) < run.concurrency:
            taking = submit(pool)
        while in_flight:
            try:
                message, body = inbox.queue.get(timeout=HEARTBEAT_SECONDS)
            except queue.Empty:
                message, body = None, None
            if message == "call":
                function, args, future = body
                try:
                    future.set_result(function(*args))
                except BaseException as error:  # handed back to the thread that asked
                    future.set_exception(error)
                continue
            if time.monotonic() - last_beat >= HEARTBEAT_SECONDS:
                last_beat = time.monotonic()
                try:
                    held.beat()
                except leases.LeaseLost:
                    outcome = "lost"
                # The run's own heartbeat is what its page shows.
                if not _fenced(run, lease).update(heartbeat=timezone.now()):
                    outcome = "lost"
            if message != "done":
                continue
            item_id = in_flight.pop(body)
            try:
                result = body.result()
            except BudgetExhausted as error:
                outcome, error_text = outcome or "paused", owners_account(run, error)
            except BotError as error:
                outcome, error_text = outcome or "failed", owners_account(run, error)
            else:
                try:
                    record(run, lease, item_id, result)
                except LostLease:
                    outcome = "lost"
            if outcome is None:
                status = JudgeRun.objects.filter(pk=run.pk).values_list("status", "lease").first()
                if status is None or status[1] != lease:
                    outcome = "lost"
                elif status[0] == Status.PAUSED:
                    outcome = "paused"
            if outcome is None and time.monotonic() > deadline:
                outcome = "continued"
            if outcome is None and taking:
                taking = submit(pool)
    if mode.refused:
        remember_refusal(client.endpoint.endpoint_id)
    if outcome == "lost":
        return "lost"
    if outcome == "paused":
        if error_text:
            _fenced(run, lease).update(status=Status.PAUSED, last_error=error_text[:2000])
        return "paused"
    if outcome == "failed":
        _finish(run, lease, Status.FAILED, error_text)
        return "failed"
    if outcome == "continued" or pending(run).exists():
        if _fenced(run, lease).exclude(status=Status.PAUSED).update(status=Status.QUEUED):
            return "continued"
        return "paused"
    _finish(run, lease, Status.DONE)
    return "done"
