"""Model-free metrics of one conversation's text: length, lexical diversity, repetition.

For the turns of a conversation, or of one speaker of it (say, the bot):

* length: the number of turns, of tokens, and the mean tokens per turn;
* lexical diversity: the type-token ratio (distinct tokens / tokens) and ChatEval's
  distinct-1 and distinct-2 over the turns (:func:`evalstats.text_metrics.distinct_n`:
  distinct n-grams / tokens, n-grams never spanning two turns);
* repetition: the turns that repeat an earlier turn of the same speaker word for word
  (case and spacing ignored), and the self-repetition rate, the share of a speaker's
  trigrams that the same speaker already said in an earlier turn (the "repeating itself
  across utterances" that See et al., 2019, "What makes a good conversation?", control;
  trigrams inside one turn are not compared with each other).

Tokens are whitespace-separated and lowercased (as ``str.split()`` then ``lower()``), as the
catalog's metrics tokenise; an empty turn has no token. Pure: no I/O, no Django.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass

from evalstats.text_metrics import distinct_n

__all__ = ["ConversationText", "conversation_text_metrics"]

REPETITION_N = 3


@dataclass(frozen=True)
class ConversationText:
    """Text metrics of a conversation (or of one speaker's turns in it).

    ``type_token_ratio``, ``distinct_1``, ``distinct_2`` are 0.0 without tokens;
    ``self_repetition`` is None when no turn after a speaker's first has a trigram."""

    n_turns: int
    n_tokens: int
    mean_turn_length: float
    type_token_ratio: float
    distinct_1: float
    distinct_2: float
    repeated_turns: int
    self_repetition: float | None

    def as_dict(self) -> dict[str, int | float | None]:
        return asdict(self)


def _tokens(text: str) -> list[str]:
    return text.lower().split()


def _trigrams(tokens: Sequence[str]) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + REPETITION_N]) for i in range(len(tokens) - REPETITION_N + 1)]


def conversation_text_metrics(
    turns: Sequence[tuple[Hashable, str]], speaker: Hashable | None = None
) -> ConversationText:
    """Metrics of ``turns`` ((speaker, text) in order); with ``speaker``, of that speaker's
    turns only (repetition is always measured within each speaker's own turns)."""
    chosen = [(who, text) for who, text in turns if speaker is None or who == speaker]
    texts = [" ".join(_tokens(text)) for _, text in chosen]
    tokens = [token for text in texts for token in text.split()]
    seen_turns: dict[Hashable, set[str]] = {}
    seen_trigrams: dict[Hashable, set[tuple[str, ...]]] = {}
    repeated = repeated_trigrams = later_trigrams = 0
    for (who, _), text in zip(chosen, texts, strict=True):
        earlier_turns = seen_turns.setdefault(who, set())
        if text and text in earlier_turns:
            repeated += 1
        earlier_turns.add(text)
        grams = _trigrams(text.split())
        earlier = seen_trigrams.get(who)
        if earlier is not None:
            later_trigrams += len(grams)
            repeated_trigrams += sum(1 for gram in grams if gram in earlier)
        seen_trigrams.setdefault(who, set()).update(grams)
    n_tokens = len(tokens)
    return ConversationText(
        n_turns=len(chosen),
        n_tokens=n_tokens,
        mean_turn_length=n_tokens / len(chosen) if chosen else 0.0,
        type_token_ratio=len(set(tokens)) / n_tokens if n_tokens else 0.0,
        distinct_1=distinct_n(texts, 1),
        distinct_2=distinct_n(texts, 2),
        repeated_turns=repeated,
        self_repetition=repeated_trigrams / later_trigrams if later_trigrams else None,
    )
