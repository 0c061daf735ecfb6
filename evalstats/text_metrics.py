"""Automatic text metrics of a system's responses, as reported by ChatEval.

ChatEval (Sedoc et al., 2019, "ChatEval: A Tool for Chatbot Evaluation", section
"Automatic Evaluation") reports, for the responses of a model to a fixed prompt set:

* distinct-n: "the number of unique n-grams in the model's responses divided by the total
  number of generated tokens";
* sentence-average BLEU-2 against the human reference responses (Liu et al., 2016);
* (embedding similarity and perplexity, which need models and are not computed here).

We add the average response length and the number of empty and duplicated responses, which
make degenerate submissions (all blank, one canned answer) visible at a glance.

Two definitions are computed side by side, named apart:

* **EvalHub's definition** (``distinct_1``, ``distinct_2``, ``bleu2``): tokens are
  whitespace-separated (``str.split()``); an empty response has zero tokens, adds nothing to
  either side of distinct-n and counts as length 0 in the mean length; BLEU-2 keeps case and
  uses Chen & Cherry's smoothing method 1, so a response without a matching bigram still
  scores.
* **As ChatEval computed** (``chateval_distinct_1``, ``chateval_distinct_2``,
  ``chateval_bleu2``), from ChatEval's released evaluation code (``auto_eval_utils.py`` of
  github.com/chateval/evaluation): distinct-n splits on single spaces (``split(' ')``), so an
  empty response is one empty token (and one type) and two spaces make an empty token;
  distinct-1 pools the tokens of all responses joined by spaces; distinct-2 counts distinct
  bigrams within responses over all tokens; BLEU-2 is nltk's ``sentence_bleu`` with weights
  (0.5, 0.5) on lowercased ``split()`` tokens **without smoothing**, so a response without a
  matching bigram scores (practically) 0. On ChatEval's NCM prompt set the smoothed,
  case-sensitive BLEU-2 is about twice ChatEval's: compare a system with ChatEval's
  leaderboard on the ``chateval_`` figures.

Both count empty responses in ``n_empty``. All functions are pure: no I/O, no Django.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass

__all__ = [
    "TextMetrics",
    "average_length",
    "chateval_bleu2",
    "chateval_distinct_1",
    "chateval_distinct_2",
    "compute_text_metrics",
    "corpus_average_bleu2",
    "count_duplicates",
    "count_empty",
    "distinct_n",
    "sentence_bleu2",
]

# Chen & Cherry (2014), smoothing method 1: a zero matched n-gram count becomes epsilon.
_SMOOTHING_EPSILON = 0.1
_BLEU2_WEIGHTS = (0.5, 0.5)


@dataclass(frozen=True)
class TextMetrics:
    """Automatic metrics of one system's responses to an evaluation set.

    Attributes
    ----------
    n_responses : int
        Number of responses, empty ones included.
    avg_length : float
        Mean number of whitespace tokens per response (0.0 for no responses).
    distinct_1, distinct_2 : float
        ``distinct_n`` for n = 1, 2: distinct n-grams / total tokens (ChatEval).
    bleu2 : float or None
        Mean sentence-level BLEU-2 over responses whose prompt has at least one reference;
        None when no references were given.
    chateval_distinct_1, chateval_distinct_2, chateval_bleu2 : float, float, float or None
        The same figures as ChatEval's released code computed them (module docstring).
    n_empty : int
        Responses that are empty or whitespace only.
    n_duplicates : int
        Non-empty responses identical (after stripping) to an earlier response.
    """

    n_responses: int
    avg_length: float
    distinct_1: float
    distinct_2: float
    bleu2: float | None
    chateval_distinct_1: float
    chateval_distinct_2: float
    chateval_bleu2: float | None
    n_empty: int
    n_duplicates: int

    def as_dict(self) -> dict[str, int | float | None]:
        """Plain ``int``/``float``/``None`` values, safe for ``json.dumps`` and a JSONField."""
        return asdict(self)


def _tokens(text: str) -> list[str]:
    return text.split()


def _ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def distinct_n(responses: Sequence[str], n: int) -> float:
    """ChatEval's distinct-n: ``|distinct n-grams over all responses| / total tokens``.

    The denominator is the number of generated tokens, not the number of n-grams, as defined
    in ChatEval; n-grams never span two responses. Returns 0.0 when there are no tokens.
    """
    if n < 1:
        raise ValueError(f"n must be a positive integer, got {n}")
    distinct: set[tuple[str, ...]] = set()
    total_tokens = 0
    for response in responses:
        tokens = _tokens(response)
        total_tokens += len(tokens)
        distinct.update(_ngrams(tokens, n))
    if total_tokens == 0:
        return 0.0
    return len(distinct) / total_tokens


def average_length(responses: Sequence[str]) -> float:
    """Mean number of whitespace tokens per response; 0.0 for an empty list."""
    if not responses:
        return 0.0
    return sum(len(_tokens(response)) for response in responses) / len(responses)


def _clipped_precision(
    hypothesis: Sequence[str], references: Sequence[Sequence[str]], n: int
) -> tuple[int, int]:
    """Papineni et al. (2002) modified precision as (matches, hypothesis n-grams).

    Each hypothesis n-gram count is clipped at its largest count in any single reference.
    The denominator is at least 1 so that a too-short hypothesis gives 0/1, as nltk does.
    """
    hypothesis_counts = Counter(_ngrams(hypothesis, n))
    max_reference_counts: Counter[tuple[str, ...]] = Counter()
    for reference in references:
        max_reference_counts |= Counter(_ngrams(reference, n))
    matches = sum(
        min(count, max_reference_counts[ngram]) for ngram, count in hypothesis_counts.items()
    )
    return matches, max(1, sum(hypothesis_counts.values()))


def _closest_reference_length(references: Sequence[Sequence[str]], hypothesis_length: int) -> int:
    # Ties between a shorter and a longer reference go to the shorter one (nltk, mteval-v13a).
    return min(
        (len(reference) for reference in references),
        key=lambda length: (abs(length - hypothesis_length), length),
    )


def _brevity_penalty(reference_length: int, hypothesis_length: int) -> float:
    if hypothesis_length > reference_length:
        return 1.0
    if hypothesis_length == 0:
        return 0.0
    return math.exp(1 - reference_length / hypothesis_length)


def sentence_bleu2(hypothesis: str, references: Sequence[str]) -> float:
    r"""Sentence-level BLEU-2 with Chen & Cherry (2014) smoothing method 1.

    .. math::
        \mathrm{BLEU2} = \mathrm{BP} \cdot \exp\big(\tfrac12 \log p_1 + \tfrac12 \log p_2\big),
        \qquad \mathrm{BP} = \min\big(1, e^{1 - r/c}\big)

    where :math:`p_n` is the clipped n-gram precision over all references (Papineni et al.,
    2002), :math:`c` the hypothesis length and :math:`r` the length of the reference closest
    to :math:`c` (shorter on ties). A zero bigram match count is replaced by 0.1
    (smoothing method 1); a hypothesis with no unigram match scores 0.

    This reproduces ``nltk.translate.bleu_score.sentence_bleu(refs, hyp, weights=(0.5, 0.5),
    smoothing_function=SmoothingFunction().method1)`` on whitespace tokens.

    Raises ValueError if ``references`` is empty (BLEU is undefined without a reference).
    """
    if not references:
        raise ValueError("sentence_bleu2 needs at least one reference")
    hypothesis_tokens = _tokens(hypothesis)
    reference_tokens = [_tokens(reference) for reference in references]

    precisions = []
    for n in range(1, len(_BLEU2_WEIGHTS) + 1):
        matches, total = _clipped_precision(hypothesis_tokens, reference_tokens, n)
        if n == 1 and matches == 0:
            # Without a single matching word the geometric mean is 0 whatever the smoothing.
            return 0.0
        precisions.append(matches / total if matches else _SMOOTHING_EPSILON / total)

    penalty = _brevity_penalty(
        _closest_reference_length(reference_tokens, len(hypothesis_tokens)),
        len(hypothesis_tokens),
    )
    log_mean = math.fsum(
        weight * math.log(precision)
        for weight, precision in zip(_BLEU2_WEIGHTS, precisions, strict=True)
    )
    return penalty * math.exp(log_mean)


def corpus_average_bleu2(
    responses: Sequence[str], references_per_prompt: Sequence[Sequence[str]]
) -> float | None:
    """Mean of :func:`sentence_bleu2` over responses whose prompt has at least one reference.

    ``references_per_prompt[i]`` holds the references of the prompt answered by
    ``responses[i]``. Returns None when no prompt has a reference. This is the
    "sentence average BLEU-2" of ChatEval / Liu et al. (2016), not corpus-level BLEU.
    """
    return _mean_over_referenced(sentence_bleu2, responses, references_per_prompt)


def _mean_over_referenced(score, responses, references_per_prompt) -> float | None:
    if len(responses) != len(references_per_prompt):
        raise ValueError(
            f"{len(responses)} responses but {len(references_per_prompt)} reference lists"
        )
    scores = [
        score(response, references)
        for response, references in zip(responses, references_per_prompt, strict=True)
        if references
    ]
    if not scores:
        return None
    return math.fsum(scores) / len(scores)


def chateval_distinct_1(responses: Sequence[str]) -> float:
    """ChatEval's distinct-1: the responses joined by spaces and split on single spaces;
    distinct tokens over tokens (an empty response is one empty token). 0.0 for no
    responses (ChatEval divides by zero)."""
    if not responses:
        return 0.0
    tokens = " ".join(responses).split(" ")
    return len(set(tokens)) / len(tokens)


def chateval_distinct_2(responses: Sequence[str]) -> float:
    """ChatEval's distinct-2: distinct bigrams within responses (split on single spaces)
    over the number of tokens. 0.0 for no responses."""
    bigrams: set[tuple[str, str]] = set()
    n_tokens = 0
    for response in responses:
        tokens = response.split(" ")
        n_tokens += len(tokens)
        bigrams.update(zip(tokens, tokens[1:], strict=False))
    return len(bigrams) / n_tokens if n_tokens else 0.0


def chateval_sentence_bleu2(hypothesis: str, references: Sequence[str]) -> float:
    """ChatEval's sentence BLEU-2: ``nltk`` ``sentence_bleu(refs, hyp, weights=(0.5, 0.5))``
    on lowercased ``split()`` tokens, without smoothing. Where a precision has no match nltk
    puts the smallest float in its place (and warns): the score is then 0.0 here (nltk's is
    below 1e-150)."""
    if not references:
        raise ValueError("chateval_sentence_bleu2 needs at least one reference")
    hypothesis_tokens = hypothesis.lower().split()
    reference_tokens = [reference.lower().split() for reference in references]
    log_mean = 0.0
    for n, weight in enumerate(_BLEU2_WEIGHTS, start=1):
        matches, total = _clipped_precision(hypothesis_tokens, reference_tokens, n)
        if matches == 0:
            return 0.0
        log_mean += weight * math.log(matches / total)
    penalty = _brevity_penalty(
        _closest_reference_length(reference_tokens, len(hypothesis_tokens)),
        len(hypothesis_tokens),
    )
    return penalty * math.exp(log_mean)


def chateval_bleu2(
    responses: Sequence[str], references_per_prompt: Sequence[Sequence[str]]
) -> float | None:
    """Mean of :func:`chateval_sentence_bleu2` over responses whose prompt has a reference
    (ChatEval's ``bleu``); None when no prompt has one."""
    return _mean_over_referenced(chateval_sentence_bleu2, responses, references_per_prompt)


def count_empty(responses: Sequence[str]) -> int:
    """Number of responses that are empty or whitespace only."""
    return sum(1 for response in responses if not response.strip())


def count_duplicates(responses: Sequence[str]) -> int:
    """Number of non-empty responses equal, after stripping, to an earlier response.

    Only leading and trailing whitespace is ignored; inner whitespace and case matter.
    """
    seen: set[str] = set()
    duplicates = 0
    for response in responses:
        stripped = response.strip()
        if not stripped:
            continue
        if stripped in seen:
            duplicates += 1
        else:
            seen.add(stripped)
    return duplicates


def compute_text_metrics(
    responses: Sequence[str], references: Sequence[Sequence[str]] | None = None
) -> TextMetrics:
    """All ChatEval automatic metrics of one submission.

    ``references``, when given, is aligned with ``responses`` (one list of reference
    strings per prompt, possibly empty); ``bleu2`` is None without references.
    """
    bleu2 = None if references is None else corpus_average_bleu2(responses, references)
    chateval_bleu = None if references is None else chateval_bleu2(responses, references)
    return TextMetrics(
        n_responses=len(responses),
        avg_length=average_length(responses),
        distinct_1=distinct_n(responses, 1),
        distinct_2=distinct_n(responses, 2),
        bleu2=bleu2,
        chateval_distinct_1=chateval_distinct_1(responses),
        chateval_distinct_2=chateval_distinct_2(responses),
        chateval_bleu2=chateval_bleu,
        n_empty=count_empty(responses),
        n_duplicates=count_duplicates(responses),
    )
