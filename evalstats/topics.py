"""Topic classification of utterances, pluggable, for the Alexa Prize conversation metrics.

The Alexa Prize metrics (Venkatesh et al., 2018, sections 4.5-4.7) classify every utterance
into a topical domain (music, sports, politics, ...). :mod:`evalstats.dialogue_metrics`
needs only a :class:`TopicClassifier`: anything with ``classify(text) -> topic or None``
(a trained model, an LLM judge, a lookup of stored labels). :class:`KeywordTopicClassifier`
is the simple default: the topic whose keywords occur most often in the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

__all__ = ["DEFAULT_KEYWORDS", "KeywordTopicClassifier", "TopicClassifier"]


@runtime_checkable
class TopicClassifier(Protocol):
    """Maps an utterance to a topic name, or None when it has no identifiable topic."""

    def classify(self, text: str) -> str | None: ...


# Coarse domains as in the Alexa Prize (its five competition domains, plus common others).
DEFAULT_KEYWORDS: Mapping[str, Sequence[str]] = {
    "sports": ("sport", "sports", "football", "soccer", "basketball", "baseball", "tennis",
               "game", "team", "match", "player", "olympics", "nba", "nfl"),
    "politics": ("politics", "political", "election", "president", "government", "vote",
                 "senate", "congress", "minister", "policy", "democrat", "republican"),
    "entertainment": ("movie", "movies", "film", "films", "actor", "actress", "tv", "show",
                      "series", "netflix", "celebrity", "book", "books", "novel"),
    "music": ("music", "song", "songs", "singer", "band", "album", "concert", "musician",
              "guitar", "rap", "jazz"),
    "technology": ("technology", "tech", "computer", "phone", "smartphone", "ai", "robot",
                   "internet", "software", "app", "apple", "google", "space", "mars"),
    "fashion": ("fashion", "clothes", "dress", "shoes", "style", "outfit", "designer", "wear"),
    "food": ("food", "eat", "eating", "cook", "cooking", "recipe", "restaurant", "pizza",
             "dinner", "lunch", "breakfast"),
    "travel": ("travel", "trip", "vacation", "holiday", "country", "city", "beach", "flight"),
    "pets": ("pet", "pets", "dog", "dogs", "cat", "cats", "puppy", "kitten"),
}  # fmt: skip

_WORD = re.compile(r"[a-z0-9']+")


@dataclass(frozen=True)
class KeywordTopicClassifier:
    """The topic with the most keyword occurrences (whole words, case-insensitive).

    Ties go to the topic listed first in ``keywords``; no keyword at all gives None.
    """

    keywords: Mapping[str, Sequence[str]] = field(default_factory=lambda: DEFAULT_KEYWORDS)

    def __post_init__(self) -> None:
        for topic, words in self.keywords.items():
            if isinstance(words, str) or not words:
                raise ValueError(f"topic {topic!r} needs a non-empty sequence of keywords")

    def classify(self, text: str) -> str | None:
        words = _WORD.findall(text.lower())
        best, best_hits = None, 0
        for topic, keywords in self.keywords.items():
            vocabulary = {k.lower() for k in keywords}
            hits = sum(word in vocabulary for word in words)
            if hits > best_hits:
                best, best_hits = topic, hits
        return best
