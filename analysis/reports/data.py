"""What a report analyses: plain arrays of one tournament's judgments (``analysis.inputs.judgments``
fills them from the database, ``demo.simulation`` from a known model).

The per-entry fields are read-only numpy arrays over the whole dataset, not one Python
object per judgment: ids and counts are int64, flags bool, strings (system slugs, labels,
conversation ids, choices, dimensions) fixed-width unicode (elements are ``np.str_``, a
``str`` subclass: ``==``, sets, dict keys and JSON work as with ``str``). The dataclasses
convert what they are given (tuples, lists or arrays) once, in ``__post_init__``; an array
of the right dtype is kept as it is (and made read-only), not copied. Two inputs do not
compare with ``==`` (an array's ``==`` is element-wise); their digests do.
``HumanVsAutomaticData`` keeps tuples of rows: a label's value is a string or a number
depending on the kind, and its readers take whole rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalhub.errors import UserInputError

# numpy is imported where arrays are made, not with this module: the signals, pages and
# commands that name these dataclasses load it at app start-up (numpy costs about 0.1 s).
if TYPE_CHECKING:
    import numpy as np

# ABC-Eval's Figure 4 (undesirable behaviours); every other label is one of Figure 5's. Here,
# with the data shapes, and not in ``abc_eval`` (which imports scipy.stats), because the
# dialogue inputs loaded at app start-up need it too.
UNDESIRABLE_LABELS = frozenset(
    {
        "uninterpretable",
        "antisocial",
        "lack of empathy",
        "commonsense contradiction",
        "fact contradiction",
        "self contradiction",
        "partner contradiction",
        "redundant",
        "ignore",
        "irrelevant",
    }
)

HUMAN = "human"


class NothingToAnalyse(UserInputError, ValueError):
    """The inputs hold no judgment that the analysis could use."""


# dtypes by name (the same dtypes as np.int64, np.bool_, np.str_ and np.object_).
INT = "int64"
BOOL = "bool"
STR = "str"
# Likert's turn is a bot turn's position or None (a dialogue-level rating): an object array
# of None and small ints, which CPython shares, so no object per entry either.
OBJECT = "object"


def column(values, dtype) -> np.ndarray:
    """``values`` as a read-only 1-D array of ``dtype`` (an array of that dtype is not copied)."""
    import numpy as np

    array = np.array(values, dtype=dtype, copy=None)
    if array.ndim != 1:
        raise ValueError(f"a column must be one-dimensional, not of shape {array.shape}")
    array.flags.writeable = False
    return array


def plain_rows(data, *names: str, where=None):
    """The named columns of ``data`` zipped row by row as plain Python values (``tolist``),
    as the statistics and the result expect; ``where`` keeps the rows of a boolean mask."""
    columns = (getattr(data, name) for name in names)
    if where is not None:
        columns = (column[where] for column in columns)
    return zip(*(column.tolist() for column in columns), strict=True)


def _set_columns(data, dtypes: dict) -> None:
    """Replace each named field of the frozen dataclass by its read-only array."""
    for name, dtype in dtypes.items():
        object.__setattr__(data, name, column(getattr(data, name), dtype))


@dataclass(frozen=True)
class SpotTheBotData:
    """Spot The Bot judgments, one entry per (judgment, speaker), ordered by judgment.

    ``system``/``opponent`` are system slugs or ``"human"``; ``label``/``opponent_label``
    are ``"human"``, ``"bot"`` or ``"unsure"``; ``preferences[i][f]`` is +1 if this speaker
    was better on ``features[f]``, 0 for no difference, -1 if the other speaker was.
    ``worker`` ids only tell judges apart (agreement); they never reach the result.

    Arrays: int64 ``judgment``, ``worker``, ``speaker``, ``exchanges``; unicode ``conversation``,
    ``system``, ``opponent``, ``label``, ``opponent_label``; ``preferences`` int8 of shape
    (entries, features).
    """

    subject: str
    features: tuple[str, ...]
    judgment: np.ndarray
    worker: np.ndarray
    conversation: np.ndarray
    speaker: np.ndarray
    system: np.ndarray
    opponent: np.ndarray
    exchanges: np.ndarray
    label: np.ndarray
    opponent_label: np.ndarray
    preferences: np.ndarray
    # Bipartite-play: the partner set's systems, reported apart and never ranked.
    partners: tuple[str, ...] = ()
    kind: str = "spot_the_bot"

    def __post_init__(self):
        _set_columns(
            self,
            {
                "judgment": INT,
                "worker": INT,
                "conversation": STR,
                "speaker": INT,
                "system": STR,
                "opponent": STR,
                "exchanges": INT,
                "label": STR,
                "opponent_label": STR,
            },
        )
        import numpy as np

        preferences = np.array(self.preferences, dtype=np.int8, copy=None)
        preferences = preferences.reshape(len(self.judgment), len(self.features))
        preferences.flags.writeable = False
        object.__setattr__(self, "preferences", preferences)


@dataclass(frozen=True)
class ABData:
    """A/B judgments, one entry per judgment (or automatic tie), ordered by item.

    ``choice`` is ``"a"``, ``"b"`` or ``"tie"``; ``worker`` is -1 for automatic ties, which
    ``automatic_weight`` repeats (the campaign's redundancy) so that an item with identical
    responses weighs like an item every judge called a tie.

    Arrays: int64 ``item``, ``worker``; unicode ``system_a``, ``system_b``, ``choice``; bool
    ``automatic``.
    """

    subject: str
    item: np.ndarray
    worker: np.ndarray
    system_a: np.ndarray
    system_b: np.ndarray
    choice: np.ndarray
    automatic: np.ndarray
    automatic_weight: int = 1
    kind: str = "ab"

    def __post_init__(self):
        _set_columns(
            self,
            {
                "item": INT,
                "worker": INT,
                "system_a": STR,
                "system_b": STR,
                "choice": STR,
                "automatic": BOOL,
            },
        )


@dataclass(frozen=True)
class RankingData:
    """K-way rankings, one entry per (ranking, system): ``rank`` is the rank the system's
    response was given (1 best; equal ranks are ties). ``ranking`` numbers the rankings
    (a judgment, or an automatic tie of identical responses: ``worker`` -1, repeated
    ``automatic_weight`` times, the campaign's redundancy, as A/B counts its ties).

    Arrays: int64 ``ranking``, ``item``, ``worker``, ``rank``; unicode ``system``; bool
    ``automatic``."""

    subject: str
    ranking: np.ndarray
    item: np.ndarray
    worker: np.ndarray
    system: np.ndarray
    rank: np.ndarray
    automatic: np.ndarray
    automatic_weight: int = 1
    kind: str = "ranking"

    def __post_init__(self):
        _set_columns(
            self,
            {
                "ranking": INT,
                "item": INT,
                "worker": INT,
                "system": STR,
                "rank": INT,
                "automatic": BOOL,
            },
        )

    def is_empty(self) -> bool:
        return len(self.ranking) == 0


# --- Dimensional inputs (ABC-Eval behaviours, Likert, comparative, imported studies) -----------
# ``annotation`` is the judgment's id: one annotation of a conversation (or pair), which the
# agreement statistics pair up; entries are ordered by judgment, i.e. by submission.


@dataclass(frozen=True)
class BehaviourData:
    """ABC-Eval behaviour labels, one entry per (judgment, bot turn, label) the judgment
    labelled; ``turn`` is the bot turn's position in the conversation.

    Arrays: unicode ``conversation``, ``system``, ``label``; int64 ``turn``, ``annotation``;
    bool ``present``."""

    subject: str
    conversation: np.ndarray
    system: np.ndarray
    turn: np.ndarray
    annotation: np.ndarray
    label: np.ndarray
    present: np.ndarray
    kind: str = "abc_eval"

    def __post_init__(self):
        _set_columns(
            self,
            {
                "conversation": STR,
                "system": STR,
                "turn": INT,
                "annotation": INT,
                "label": STR,
                "present": BOOL,
            },
        )

    def is_empty(self) -> bool:
        return len(self.annotation) == 0


@dataclass(frozen=True)
class LikertData:
    """Likert ratings (1-5), one entry per (judgment, dimension[, bot turn]); ``turn`` is
    None for a dialogue-level rating.

    Arrays: unicode ``conversation``, ``system``, ``dimension``; int64 ``annotation``,
    ``score``; ``turn`` an object array of ints and None."""

    subject: str
    conversation: np.ndarray
    system: np.ndarray
    annotation: np.ndarray
    dimension: np.ndarray
    score: np.ndarray
    turn: np.ndarray
    kind: str = "likert"

    def __post_init__(self):
        _set_columns(
            self,
            {
                "conversation": STR,
                "system": STR,
                "annotation": INT,
                "dimension": STR,
                "score": INT,
                "turn": OBJECT,
            },
        )

    def is_empty(self) -> bool:
        return len(self.annotation) == 0


@dataclass(frozen=True)
class ComparativeData:
    """Side-by-side verdicts, one entry per (judgment, dimension): ``choice`` is "a", "b" or
    "neither"; systems are the bot slugs of each conversation joined by "+".

    Arrays: int64 ``item``, ``annotation``; unicode the others."""

    subject: str
    item: np.ndarray
    annotation: np.ndarray
    conversation_a: np.ndarray
    conversation_b: np.ndarray
    system_a: np.ndarray
    system_b: np.ndarray
    dimension: np.ndarray
    choice: np.ndarray
    kind: str = "comparative"

    def __post_init__(self):
        _set_columns(
            self,
            {
                "item": INT,
                "annotation": INT,
                "conversation_a": STR,
                "conversation_b": STR,
                "system_a": STR,
                "system_b": STR,
                "dimension": STR,
                "choice": STR,
            },
        )

    def is_empty(self) -> bool:
        return len(self.annotation) == 0


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
    labels and scores (``analysis.inputs.comparable``).

    ``human_labels``: (dimension, unit, worker, value), one per human label;
    ``judge_labels``: (dimension, unit, value); ``human_scores``/``judge_scores``:
    (dimension, system, conversation, score), one per judgment and scored system.
    ``partners`` (bipartite-play) are never ranked. The human rows may be empty (no human
    has judged yet): the judge's ranking is then reported alone. ``task_kind`` is the campaign's kind,
    ``level`` the level of measurement of its labels.

    An arena's judge run (``task_kind`` "arena", ``analysis.inputs.arena_versus``): the units
    are its voted battles, the human label of each is its vote, and ``battles`` lists
    (unit, system a, system b) of each battle, from which the report fits Bradley-Terry
    ratings by the votes and by the judge.
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
    battles: tuple[tuple[str, str, str], ...] = ()
    kind: str = "human_vs_automatic"

    def is_empty(self) -> bool:
        # A judge alone still ranks the systems (a tournament scored only automatically).
        return not self.judge_labels
