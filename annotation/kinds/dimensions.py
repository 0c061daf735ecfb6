"""The quality dimensions rated by Likert and compared by comparative tasks: one set of names
and definitions for both, and the per-item random order they are shown in.

Dimensions: the 8 of the ABC-Eval paper's Table 3 (from Finch and Choi, 2020). ABC-Eval
showed each item's dimensions in a random order; :func:`shown_order` gives an item its
order, the same every time the item is rendered or submitted (so the page and the recorded
judgment agree without storing anything before submission), and the kinds record it with
the judgment as ``payload["dimension_order"]``.
"""

import hashlib
import random
from collections.abc import Sequence

from django.utils.translation import gettext_noop as _

# Marked for translation but kept in English here (gettext_noop): campaign configs store
# them; the pages translate them when shown (kinds.base.shown).
# Paraphrased from Finch and Choi (2020), whose definitions ABC-Eval showed verbatim; our copy
# of the ABC-Eval paper does not reproduce them, so check the wording against the source.
DIMENSIONS = {
    "consistency": (
        _("Consistency"),
        _("The responses do not contradict information known about the bot or said earlier."),
    ),
    "emotion_understanding": (
        _("Emotional understanding"),
        _(
            "The responses show an understanding of the user's emotional state and react "
            "appropriately to it."
        ),
    ),
    "engagingness": (
        _("Engagingness"),
        _("The responses are engaging and meet the conversational goals the user implies."),
    ),
    "grammaticality": (
        _("Grammaticality"),
        _("The responses are free of grammatical and semantic errors."),
    ),
    "informativeness": (
        _("Informativeness"),
        _("The responses give unique, non-generic information specific to the conversation."),
    ),
    "quality": (_("Quality"), _("The overall quality of, and satisfaction with, the responses.")),
    "proactivity": (
        _("Proactivity"),
        _("The responses actively and appropriately move the conversation along different topics."),
    ),
    "relevance": (_("Relevance"), _("The responses are on-topic with what was just said.")),
}

DEFINITIONS = {name: definition for name, (_, definition) in DIMENSIONS.items()}

ORDER_KEY = "dimension_order"


def shown_order(item, dimensions: Sequence[str]) -> list[str]:
    """``dimensions`` shuffled with a seed drawn from the item (its campaign and position),
    so every worker sees one item's dimensions in the same order and items differ."""
    seed = hashlib.sha256(f"{item.campaign_id}:{item.position}".encode()).digest()
    order = list(dimensions)
    random.Random(seed).shuffle(order)
    return order


def known_once(dimensions: list[str]) -> list[str]:
    """A config's dimensions: each a known one, none twice (a pydantic field validator)."""
    unknown = [d for d in dimensions if d not in DIMENSIONS]
    if unknown:
        raise ValueError(
            f"Unknown dimension {', '.join(map(repr, unknown))}; known: {', '.join(DIMENSIONS)}."
        )
    if len(set(dimensions)) != len(dimensions):
        raise ValueError("dimensions lists a dimension twice.")
    return dimensions
