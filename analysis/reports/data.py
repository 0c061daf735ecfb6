"""What a report analyses: plain arrays of one tournament's judgments (``analysis.inputs``
fills them from the database, ``analysis.simulation`` from a known model)."""

from __future__ import annotations

from dataclasses import dataclass

from evalhub.errors import UserInputError

HUMAN = "human"


class NothingToAnalyse(UserInputError, ValueError):
    """The inputs hold no judgment that the analysis could use."""


@dataclass(frozen=True)
class SpotTheBotData:
    """Spot The Bot judgments, one entry per (judgment, speaker), ordered by judgment.

    ``system``/``opponent`` are system slugs or ``"human"``; ``label``/``opponent_label``
    are ``"human"``, ``"bot"`` or ``"unsure"``; ``preferences[i][f]`` is +1 if this speaker
    was better on ``features[f]``, 0 for no difference, -1 if the other speaker was.
    ``worker`` ids only tell judges apart (agreement); they never reach the result.
    """

    subject: str
    features: tuple[str, ...]
    judgment: tuple[int, ...]
    worker: tuple[int, ...]
    conversation: tuple[str, ...]
    speaker: tuple[int, ...]
    system: tuple[str, ...]
    opponent: tuple[str, ...]
    exchanges: tuple[int, ...]
    label: tuple[str, ...]
    opponent_label: tuple[str, ...]
    preferences: tuple[tuple[int, ...], ...]
    # Bipartite-play: the partner set's systems, reported apart and never ranked.
    partners: tuple[str, ...] = ()
    kind: str = "spot_the_bot"


@dataclass(frozen=True)
class ABData:
    """A/B judgments, one entry per judgment (or automatic tie), ordered by item.

    ``choice`` is ``"a"``, ``"b"`` or ``"tie"``; ``worker`` is -1 for automatic ties, which
    ``automatic_weight`` repeats (the campaign's redundancy) so that an item with identical
    responses weighs like an item every judge called a tie.
    """

    subject: str
    item: tuple[int, ...]
    worker: tuple[int, ...]
    system_a: tuple[str, ...]
    system_b: tuple[str, ...]
    choice: tuple[str, ...]
    automatic: tuple[bool, ...]
    automatic_weight: int = 1
    kind: str = "ab"


# --- Dimensional inputs (ABC-Eval behaviours, Likert, comparative, imported studies) -----------
# ``annotation`` is the judgment's id: one annotation of a conversation (or pair), which the
# agreement statistics pair up; entries are ordered by judgment, i.e. by submission.


@dataclass(frozen=True)
class BehaviourData:
    """ABC-Eval behaviour labels, one entry per (judgment, bot turn, label) the judgment
    labelled; ``turn`` is the bot turn's position in the conversation."""

    subject: str
    conversation: tuple[str, ...]
    system: tuple[str, ...]
    turn: tuple[int, ...]
    annotation: tuple[int, ...]
    label: tuple[str, ...]
    present: tuple[bool, ...]
    kind: str = "abc_eval"

    def is_empty(self) -> bool:
        return not self.annotation


@dataclass(frozen=True)
class LikertData:
    """Likert ratings (1-5), one entry per (judgment, dimension[, bot turn]); ``turn`` is
    None for a dialogue-level rating."""

    subject: str
    conversation: tuple[str, ...]
    system: tuple[str, ...]
    annotation: tuple[int, ...]
    dimension: tuple[str, ...]
    score: tuple[int, ...]
    turn: tuple[int | None, ...]
    kind: str = "likert"

    def is_empty(self) -> bool:
        return not self.annotation


@dataclass(frozen=True)
class ComparativeData:
    """Side-by-side verdicts, one entry per (judgment, dimension): ``choice`` is "a", "b" or
    "neither"; systems are the bot slugs of each conversation joined by "+"."""

    subject: str
    item: tuple[int, ...]
    annotation: tuple[int, ...]
    conversation_a: tuple[str, ...]
    conversation_b: tuple[str, ...]
    system_a: tuple[str, ...]
    system_b: tuple[str, ...]
    dimension: tuple[str, ...]
    choice: tuple[str, ...]
    kind: str = "comparative"

    def is_empty(self) -> bool:
        return not self.annotation


@dataclass(frozen=True)
class StudyData:
    """An imported study's campaigns analysed together; a part is None when the study has
    no campaign of that kind. ``campaigns`` lists (slug, kind, judgments)."""

    subject: str
    campaigns: tuple[tuple[str, str, int], ...]
    behaviours: BehaviourData | None
    likert: LikertData | None
    comparative: ComparativeData | None
    kind: str = "study"

    def is_empty(self) -> bool:
        parts = (self.behaviours, self.likert, self.comparative)
        return all(part is None or part.is_empty() for part in parts)


@dataclass(frozen=True)
class HumanVsAutomaticData:
    """One campaign's human judgments beside one automatic judge run's, as comparable
    labels and scores (``analysis.comparable``).

    ``human_labels``: (dimension, unit, worker, value), one per human label;
    ``judge_labels``: (dimension, unit, value); ``human_scores``/``judge_scores``:
    (dimension, system, conversation, score), one per judgment and scored system.
    ``partners`` (bipartite-play) are never ranked. The human rows may be empty (no human
    has judged yet): the judge's ranking is then reported alone. ``task_kind`` is the campaign's kind,
    ``level`` the level of measurement of its labels.
    """

    subject: str
    task_kind: str
    level: str
    judge_run: int
    judge: str
    human_judgments: int
    automatic_judgments: int
    human_labels: tuple[tuple[str, str, int, object], ...]
    judge_labels: tuple[tuple[str, str, object], ...]
    human_scores: tuple[tuple[str, str, str, float], ...]
    judge_scores: tuple[tuple[str, str, str, float], ...]
    partners: tuple[str, ...] = ()
    kind: str = "human_vs_automatic"

    def is_empty(self) -> bool:
        # A judge alone still ranks the systems (a tournament scored only automatically).
        return not self.judge_labels
