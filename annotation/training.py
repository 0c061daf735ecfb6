"""Training and screening before work (ABC-Eval, Finch et al. 2023, section 5 and appendix D).

A campaign with `requires_training` whose task kind has a `training_key` lets a worker
take work only once they hold `Qualification(worker, key, passed=True)`. The key is per
task (e.g. `abc_eval:empathy`), so a worker qualified once is qualified in every campaign
of that task.

The training session is a few of the campaign's items with role "training" (the kind's
`training_session_size`, all of them when it has none), in position order: hand-made gold
conversations with an explanation per turn. The worker annotates each in the task's own
interface; right after submitting one they see every disagreement with the gold labels and
its explanation (the gold reaches the browser only then). After the last one the attempt is
graded on that last conversation alone, as the paper screens on the third: the worker
qualifies with fewer mistakes than `campaign.training_threshold`, or the kind's default, and
passing the kind's own screen (`screening_problems`: ABC-Eval's per-label recall and
precision against gold, thresholds in the config), so that ticking nothing does not pass.
Otherwise they see why and may begin a new attempt.

Retries. Attempt n takes the first training items this worker has answered in no earlier
attempt: a retry is never graded on a conversation whose answers an earlier attempt's
feedback showed. When none is left, no attempt is left either.

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
from django.utils.translation import gettext

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
    # The campaign's training items, and those this worker has answered in no attempt yet.
    available: int = 0
    unseen: int = 0

    @property
    def status(self) -> str:
        if not self.campaign.requires_training or self.key is None:
            return TrainingStatus.NOT_REQUIRED
        if self.qualification is not None and self.qualification.passed:
            return TrainingStatus.QUALIFIED
        if not self.available:
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
        if self.unseen == 0:  # a retry would show conversations whose answers were shown
            return 0
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
    training = list(campaign.items.filter(role=Item.Role.TRAINING).order_by("position"))
    size = campaign.kind.training_session_size(campaign.kind.clean_config(campaign.task_config))
    size = size or len(training)
    attempt = state.qualification.attempts if state.qualification else 0
    # Which training item each earlier attempt answered (one query, whatever the size).
    answered = TrainingAnswer.objects.filter(worker=worker, item__in=[i.pk for i in training])
    attempts_of = {}
    for item_id, n in answered.values_list("item_id", "attempt"):
        attempts_of.setdefault(item_id, set()).add(n)
    state.available = len(training)
    state.unseen = sum(1 for i in training if i.pk not in attempts_of)
    state.items = session_items(training, attempts_of, attempt + 1, size)
    if attempt:
        answers = TrainingAnswer.objects.filter(worker=worker, attempt=attempt)
        here = {a.item_id: a for a in answers.filter(item__in=[i.pk for i in training])}
        if here or not answers.exists():
            state.attempt, state.answers = attempt, here
            state.items = session_items(training, attempts_of, attempt, size)
    return state


def session_items(training: list[Item], attempts_of: dict, attempt: int, size: int) -> list[Item]:
    """The items of attempt `attempt`: the first `size` training items answered in no
    earlier attempt, so that a retry never meets a conversation whose gold answers an
    earlier attempt's feedback showed. Empty when every one was answered before."""
    fresh = [i for i in training if not any(n < attempt for n in attempts_of.get(i.pk, ()))]
    return fresh[:size]


@transaction.atomic
def begin_attempt(campaign: Campaign, worker: Worker) -> TrainingState:
    """Open a new attempt when none is open here (first visit, or after failing)."""
    state = training_state(campaign, worker)
    if state.status not in (TrainingStatus.NOT_STARTED, TrainingStatus.FAILED):
        return state
    if state.attempts_left == 0 or not state.items:  # the page says no attempt is left
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


def screening_problems(campaign: Campaign, answer: TrainingAnswer) -> list[str]:
    """Why the graded answer fails the kind's screen besides its mistake count ([]: it
    does not); the result page shows them."""
    kind = campaign.kind
    config = kind.clean_config(campaign.task_config)
    return kind.screening_problems(answer.item, answer.payload, config)


def grade_attempt(campaign: Campaign, worker: Worker, attempt: int) -> Qualification:
    """Grade a finished attempt on its last conversation and record the outcome."""
    state = training_state(campaign, worker)
    if state.attempt != attempt or state.next_item is not None or state.graded_answer is None:
        raise TrainingClosed(f"Attempt {attempt} is not finished in this campaign.")
    mistakes = state.graded_answer.mistakes
    passed = mistakes < state.threshold and not screening_problems(campaign, state.graded_answer)
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


def shown_feedback(feedback: list[dict], kind) -> list[dict]:
    """Feedback rows as the worker reads them, in the page's language: answers as the kind
    words them (label lists joined, an empty list as "no label"), the place by its number."""

    def where(row) -> str:
        if "bot_turn" in row:
            return gettext("Bot turn %(number)s") % {"number": row["bot_turn"]}
        return row.get("where", "")

    return [
        {
            **row,
            "where": where(row),
            "yours": kind.answer_text(row.get("yours")),
            "gold": kind.answer_text(row.get("gold")),
        }
        for row in feedback
    ]
