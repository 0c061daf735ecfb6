"""Training and screening before work (ABC-Eval, Finch et al. 2023, section 5 and appendix D).

A campaign with `requires_training` whose task kind has a `training_key` lets a worker
take work only once they hold `Qualification(worker, key, passed=True)`. The key is per
task (e.g. `abc_eval:empathy`), so a worker qualified once is qualified in every campaign
of that task.

The training session is the campaign's items with role "training", in position order:
hand-made gold conversations with an explanation per turn. The worker annotates each in
the task's own interface; right after submitting one they see every disagreement with the
gold labels and its explanation (the gold reaches the browser only then). After the last
one the attempt is graded on that last conversation alone, as the paper screens on the
third: the worker qualifies with fewer mistakes than `campaign.training_threshold`, or the
kind's default. Otherwise they see why and may begin a new attempt.

Retries. Attempt n goes through the same training items starting at the n-th (wrapping
round), so it is graded on another conversation than every earlier attempt as long as the
campaign has one (`retry_order`); with as many failed attempts as items, the order repeats.

Attempts. `Qualification.attempts` counts the attempts begun; answers are stored per
attempt (`TrainingAnswer`). An attempt is one session on one campaign's training items: if
the worker's latest attempt was answered in another campaign of the same key, this
campaign's session has not begun yet.

Every function here runs a fixed number of queries, whatever the campaign's size.
"""

from dataclasses import dataclass, field

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F

from evalhub.errors import UserInputError

from .kinds.base import GoldResult
from .models import Campaign, Item, Qualification, TrainingAnswer, Worker
from .services import safe_score
from .tasks import training_passed


class TrainingStatus:
    NOT_REQUIRED = "not_required"
    QUALIFIED = "qualified"
    UNAVAILABLE = "unavailable"  # training required, but the campaign has no training items
    NOT_STARTED = "not_started"
    IN_PROGRESS = "in_progress"
    FAILED = "failed"


class TrainingClosed(UserInputError):
    """An answer for an item that is not the next one of an open attempt."""


def training_key(campaign: Campaign) -> str | None:
    kind = campaign.kind
    return kind.training_key(kind.clean_config(campaign.task_config))


def training_threshold(campaign: Campaign) -> int:
    """Qualify with fewer mistakes than this. A kind without a default asks for none."""
    kind = campaign.kind
    default = kind.default_training_threshold(kind.clean_config(campaign.task_config))
    return campaign.training_threshold or default or 1


def needs_training(campaign: Campaign, worker: Worker) -> bool:
    """Whether the worker must pass this campaign's training before any allocation."""
    if not campaign.requires_training:
        return False
    key = training_key(campaign)
    if key is None:
        return False
    return not Qualification.objects.filter(worker=worker, key=key, passed=True).exists()


@dataclass
class TrainingState:
    """Where a worker stands in a campaign's training. `attempt` is the attempt of this
    campaign's session (0: none begun here); `answers` maps item pk to its answer in it."""

    campaign: Campaign
    worker: Worker
    key: str | None
    threshold: int
    qualification: Qualification | None
    items: list[Item]
    attempt: int = 0
    answers: dict[int, TrainingAnswer] = field(default_factory=dict)

    @property
    def status(self) -> str:
        if not self.campaign.requires_training or self.key is None:
            return TrainingStatus.NOT_REQUIRED
        if self.qualification is not None and self.qualification.passed:
            return TrainingStatus.QUALIFIED
        if not self.items:
            return TrainingStatus.UNAVAILABLE
        if self.attempt == 0:
            return TrainingStatus.NOT_STARTED
        if self.next_item is None:
            return TrainingStatus.FAILED
        return TrainingStatus.IN_PROGRESS

    @property
    def attempts_left(self) -> int:
        """Attempts this worker may still begin (settings.EVALHUB_TRAINING_MAX_ATTEMPTS)."""
        used = self.qualification.attempts if self.qualification else 0
        return max(settings.EVALHUB_TRAINING_MAX_ATTEMPTS - used, 0)

    @property
    def next_item(self) -> Item | None:
        if self.attempt == 0:
            return None
        return next((item for item in self.items if item.pk not in self.answers), None)

    def position_of(self, item: Item) -> int:
        return next(n for n, i in enumerate(self.items, 1) if i.pk == item.pk)

    @property
    def graded_answer(self) -> TrainingAnswer | None:
        """The answer the attempt is graded on: the last training conversation's."""
        return self.answers.get(self.items[-1].pk) if self.items else None


def training_state(campaign: Campaign, worker: Worker) -> TrainingState:
    key = training_key(campaign)
    state = TrainingState(
        campaign=campaign,
        worker=worker,
        key=key,
        threshold=training_threshold(campaign),
        qualification=None,
        items=[],
    )
    if not campaign.requires_training or key is None:
        return state
    state.qualification = Qualification.objects.filter(worker=worker, key=key).first()
    state.items = list(campaign.items.filter(role=Item.Role.TRAINING).order_by("position"))
    attempt = state.qualification.attempts if state.qualification else 0
    if attempt:
        answers = TrainingAnswer.objects.filter(worker=worker, attempt=attempt)
        here = {a.item_id: a for a in answers.filter(item__in=[i.pk for i in state.items])}
        if here or not answers.exists():
            state.attempt, state.answers = attempt, here
            state.items = retry_order(state.items, attempt)
    return state


def retry_order(items: list[Item], attempt: int) -> list[Item]:
    """The session of attempt n starts at training item n (then wraps round), so that each
    retry is graded on a conversation no earlier attempt was graded on, while the campaign
    has one; after the last, the first order comes back."""
    if not items:
        return items
    shift = (attempt - 1) % len(items)
    return items[shift:] + items[:shift]


@transaction.atomic
def begin_attempt(campaign: Campaign, worker: Worker) -> TrainingState:
    """Open a new attempt when none is open here (first visit, or after failing)."""
    state = training_state(campaign, worker)
    if state.status not in (TrainingStatus.NOT_STARTED, TrainingStatus.FAILED):
        return state
    if state.attempts_left == 0:  # the page says that no attempt is left
        return state
    qualification = state.qualification
    if qualification is None:
        try:
            with transaction.atomic():
                qualification = Qualification.objects.create(worker=worker, key=state.key)
        except IntegrityError:  # a second request of the same worker created it
            return training_state(campaign, worker)
    # Conditional, so that a double-clicked button opens one attempt, not two.
    Qualification.objects.filter(pk=qualification.pk, attempts=qualification.attempts).update(
        attempts=F("attempts") + 1
    )
    return training_state(campaign, worker)


def grade_attempt(campaign: Campaign, worker: Worker, attempt: int) -> Qualification:
    """Grade a finished attempt on its last conversation and record the outcome."""
    state = training_state(campaign, worker)
    if state.attempt != attempt or state.next_item is not None or state.graded_answer is None:
        raise TrainingClosed(f"Attempt {attempt} is not finished in this campaign.")
    mistakes = state.graded_answer.mistakes
    passed = mistakes < state.threshold
    changes = {"last_mistakes": mistakes}
    if passed:  # failing later never takes a passed qualification away
        changes["passed"] = True
    Qualification.objects.filter(pk=state.qualification.pk).update(**changes)
    if passed:
        training_passed(campaign, worker)
    state.qualification.refresh_from_db()
    return state.qualification


@transaction.atomic
def record_training_answer(
    campaign: Campaign, worker: Worker, item: Item, payload: dict
) -> TrainingAnswer:
    """Score and store the answer on the next training item; grade the attempt after the last.

    A replayed submit returns the stored answer. Raises TrainingClosed for an item that is
    not the next one of an open attempt.
    """
    state = training_state(campaign, worker)
    if item.pk in state.answers:
        return state.answers[item.pk]
    if state.status != TrainingStatus.IN_PROGRESS or state.next_item != item:
        raise TrainingClosed("This training conversation is not the next one.")
    result = safe_score(campaign, item, payload) or GoldResult(True, 0, [])
    try:
        with transaction.atomic():
            answer = TrainingAnswer.objects.create(
                worker=worker,
                item=item,
                attempt=state.attempt,
                payload=payload,
                mistakes=result.mistakes,
                feedback=result.feedback,
            )
    except IntegrityError:  # the same submit twice at once: the other one stored it
        return TrainingAnswer.objects.get(worker=worker, item=item, attempt=state.attempt)
    if item == state.items[-1]:
        grade_attempt(campaign, worker, state.attempt)
    return answer


def shown_feedback(feedback: list[dict]) -> list[dict]:
    """Feedback rows with answers as text: label lists joined, an empty list as "no label"."""

    def text(value) -> str:
        if isinstance(value, list):
            return ", ".join(map(str, value)) or "no label"
        return "—" if value is None else str(value)

    return [
        {**row, "yours": text(row.get("yours")), "gold": text(row.get("gold"))} for row in feedback
    ]
