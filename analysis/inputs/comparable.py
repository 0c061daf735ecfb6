"""What a human and an automatic judge can be compared on, read from one payload of any kind.

Pure: a payload (a human ``Judgment.payload`` or an automatic judge's, which has exactly the
same shape) and the item's ``content`` in, plain tuples out. Two things come out of each:

* **labels**, for agreement per item: ``(dimension, unit, value)``; a unit is the smallest
  thing a label is given to (an item, an item's speaker, an item's bot turn), keyed
  ``"<item id>"`` or ``"<item id>:<part>"`` so that units of different items never meet;
* **scores**, for rankings: ``(dimension, system, conversation, score)``, a number where
  higher means "more of the dimension", so that a system's mean over its conversations
  ranks it the same way for humans and for the judge.

Per kind (dimension names are the kind's own):

=============  ===================================  =========================================
kind           labels                               scores (per system and conversation)
=============  ===================================  =========================================
ab             ``choice``: a / b / tie per item     1 for the chosen response's system, 0 for
                                                    the other, 0.5 each for a tie; the
                                                    "conversation" is the item (prompt and
                                                    baseline)
likert         each dimension: 1-5 per item (per    the rating (the mean over the bot turns
               bot turn at turn level), ordinal     at turn level)
abc_eval       each behaviour: 0 / 1 per bot turn   the share of bot turns showing it
spot_the_bot   ``label``: human / bot / unsure per  ``label``: 1 when the speaker was not
               speaker; each feature: the better    spotted (not labelled "bot", as Spot The
               speaker ("0", "1") or "none"         Bot's survival counts it), else 0; each
                                                    feature: +1 preferred, 0 no difference,
                                                    -1 the other speaker preferred
comparative    each dimension: a / b / neither      1 for the chosen conversation's bots, 0
               per item                             for the other, 0.5 each for neither
=============  ===================================  =========================================

Speakers who are people (``"human"`` in Spot The Bot) get labels but no scores: only
systems are ranked. Items with an automatic payload of the platform's own (identical A/B
responses) are never shown to anyone and are not read here.
"""

from __future__ import annotations

from collections.abc import Mapping
from statistics import fmean

__all__ = [
    "COMPARABLE_KINDS",
    "LEVELS",
    "LIKERT_SCALE",
    "Label",
    "Score",
    "compare_payload",
]

HUMAN = "human"
SPOTTED = "bot"
# The kinds whose payloads can be compared and the level of measurement of their labels:
# Likert ratings are ordinal; sides, Spot The Bot's labels and behaviour flags nominal.
LEVELS = {
    "ab": "nominal",
    "likert": "ordinal",
    "abc_eval": "nominal",
    "spot_the_bot": "nominal",
    "comparative": "nominal",
}
COMPARABLE_KINDS = tuple(LEVELS)
# Ordered label sets (weighted kappa reads the order; nominal ones keep it for the tables).
LIKERT_SCALE = (1, 2, 3, 4, 5)
_SIDE_SCORE = {"a": (1.0, 0.0), "b": (0.0, 1.0), "tie": (0.5, 0.5), "neither": (0.5, 0.5)}

Label = tuple[str, str, object]
Score = tuple[str, str, str, float]


def _unit(item, part=None) -> str:
    return str(item) if part is None else f"{item}:{part}"


def _ab(item, payload: Mapping, content: Mapping):
    meta = content["meta"]
    choice = payload["choice"]
    a, b = _SIDE_SCORE[choice]
    conversation = _unit(item)
    return (
        [("choice", _unit(item), choice)],
        [
            ("choice", meta["system_a"], conversation, a),
            ("choice", meta["system_b"], conversation, b),
        ],
    )


def _likert(item, payload: Mapping, content: Mapping):
    meta = content["meta"]
    labels, scores = [], []
    for dimension, rating in sorted((payload.get("ratings") or {}).items()):
        if isinstance(rating, list):
            turns = content.get("bot_turns") or range(len(rating))
            labels += [
                (dimension, _unit(item, turn), int(r))
                for turn, r in zip(turns, rating, strict=False)
            ]
            if rating:
                scores.append((dimension, meta["system"], meta["conversation"], fmean(rating)))
        else:
            labels.append((dimension, _unit(item), int(rating)))
            scores.append((dimension, meta["system"], meta["conversation"], float(rating)))
    return labels, scores


def _abc_eval(item, payload: Mapping, content: Mapping):
    meta = content["meta"]
    turns = content.get("bot_turns") or []
    labels, scores = [], []
    for behaviour, flags in sorted((payload.get("labels") or {}).items()):
        labels += [
            (behaviour, _unit(item, turn), int(flag))
            for turn, flag in zip(turns, flags, strict=False)
        ]
        if flags:
            scores.append((behaviour, meta["system"], meta["conversation"], fmean(flags)))
    return labels, scores


def _preference(better, speaker: int) -> int:
    if better is None:
        return 0
    return 1 if int(better) == speaker else -1


def _spot_the_bot(item, payload: Mapping, content: Mapping):
    meta = content["meta"]
    speakers, given = meta["speakers"], payload["labels"]
    better = payload.get("better") or {}
    labels = [("label", _unit(item, s), label) for s, label in enumerate(given)]
    labels += [
        (feature, _unit(item), "none" if side is None else str(int(side)))
        for feature, side in sorted(better.items())
    ]
    scores = []
    for speaker, (system, label) in enumerate(zip(speakers, given, strict=True)):
        if system == HUMAN:
            continue
        scores.append(("label", system, meta["conversation"], float(label != SPOTTED)))
        scores += [
            (feature, system, meta["conversation"], float(_preference(side, speaker)))
            for feature, side in sorted(better.items())
        ]
    return labels, scores


def _comparative(item, payload: Mapping, content: Mapping):
    meta = content["meta"]
    system_a, system_b = "+".join(meta["systems_a"]), "+".join(meta["systems_b"])
    labels, scores = [], []
    for dimension, choice in sorted((payload.get("choices") or {}).items()):
        a, b = _SIDE_SCORE[choice]
        labels.append((dimension, _unit(item), choice))
        scores += [(dimension, system_a, meta["a"], a), (dimension, system_b, meta["b"], b)]
    return labels, scores


_READERS = {
    "ab": _ab,
    "likert": _likert,
    "abc_eval": _abc_eval,
    "spot_the_bot": _spot_the_bot,
    "comparative": _comparative,
}


def compare_payload(
    kind: str, item, payload: Mapping, content: Mapping
) -> tuple[list[Label], list[Score]]:
    """The labels and scores of one payload of a ``kind`` item (module docstring).

    ``content`` needs the item's ``meta`` (and ``bot_turns`` for likert and abc_eval).
    Raises ValueError for a kind that cannot be compared.
    """
    reader = _READERS.get(kind)
    if reader is None:
        raise ValueError(
            f"No human-versus-automatic comparison for {kind!r} items; "
            f"kinds: {', '.join(COMPARABLE_KINDS)}."
        )
    return reader(item, payload, content)
