import json
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from evalstats.text_metrics import (
    TextMetrics,
    average_length,
    chateval_bleu2,
    chateval_distinct_1,
    chateval_distinct_2,
    chateval_sentence_bleu2,
    compute_text_metrics,
    corpus_average_bleu2,
    count_duplicates,
    count_empty,
    distinct_n,
    sentence_bleu2,
)


def chateval_nltk_bleu2(hypothesis: str, references: list[str]) -> float:
    """ChatEval's released ``bleu``: nltk, lowercased ``split()`` tokens, no smoothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nltk warns when a precision has no match
        return sentence_bleu(
            [reference.lower().split() for reference in references],
            hypothesis.lower().split(),
            weights=(0.5, 0.5),
        )


def nltk_bleu2(hypothesis: str, references: list[str]) -> float:
    return sentence_bleu(
        [reference.split() for reference in references],
        hypothesis.split(),
        weights=(0.5, 0.5),
        smoothing_function=SmoothingFunction().method1,
    )


# --- distinct-n and length -------------------------------------------------------------------

RESPONSES = ["i do not know", "i do not", "", "yes yes"]
# Tokens: 4 + 3 + 0 + 2 = 9.
# Unigrams: {i, do, not, know, yes} -> 5 distinct.
# Bigrams: {i do, do not, not know} from the first, {i do, do not} repeat, {yes yes} -> 4.
# Crossing the boundary would add "know i", "not yes": they must not be counted.


def test_distinct_1_divides_distinct_unigrams_by_tokens():
    assert distinct_n(RESPONSES, 1) == pytest.approx(5 / 9, abs=1e-15)


def test_distinct_2_divides_by_tokens_not_bigrams():
    # 4 distinct bigrams / 9 tokens, not / 6 bigrams (3 + 2 + 0 + 1).
    assert distinct_n(RESPONSES, 2) == pytest.approx(4 / 9, abs=1e-15)


def test_distinct_3_ignores_responses_shorter_than_n():
    # Trigrams: "i do not", "do not know" (first), "i do not" (repeat) -> 2 / 9 tokens.
    assert distinct_n(RESPONSES, 3) == pytest.approx(2 / 9, abs=1e-15)


def test_distinct_n_is_zero_without_tokens():
    assert distinct_n([], 1) == 0.0
    assert distinct_n(["", "   \n"], 2) == 0.0


def test_distinct_n_rejects_non_positive_n():
    with pytest.raises(ValueError):
        distinct_n(RESPONSES, 0)


def test_distinct_1_of_one_repeated_answer_shrinks_with_the_corpus():
    # 100 copies of "ok ." : 2 distinct unigrams / 200 tokens.
    assert distinct_n(["ok ."] * 100, 1) == pytest.approx(0.01, abs=1e-15)


def test_average_length_counts_whitespace_tokens():
    # (4 + 3 + 0 + 2) / 4 responses = 2.25; tabs and repeated spaces separate tokens too.
    assert average_length(RESPONSES) == 2.25
    assert average_length(["a\tb  c\n"]) == 3.0
    assert average_length([]) == 0.0


# --- empty and duplicate responses ----------------------------------------------------------


def test_count_empty_includes_whitespace_only():
    assert count_empty(["", " ", "\t\n", "a", " a "]) == 3


def test_count_duplicates_after_stripping_and_ignoring_empty():
    responses = ["hi", " hi ", "hi\n", "Hi", "", "  ", "hello there", "hello  there"]
    # " hi " and "hi\n" repeat "hi" -> 2; "Hi" differs by case; empties never count;
    # inner whitespace differs for "hello  there".
    assert count_duplicates(responses) == 2
    assert count_duplicates([]) == 0


# --- BLEU-2 against nltk --------------------------------------------------------------------

EDGE_CASES = [
    ("", ["the cat sat"]),  # empty hypothesis
    ("dog barks loudly", ["the cat sat"]),  # no overlap at all
    ("the", ["the cat sat on the mat"]),  # one token: no bigram, brevity penalty
    ("the cat", ["the cat sat on the mat"]),  # shorter than the reference
    ("the cat sat on the mat and then it slept", ["the cat sat"]),  # longer
    ("cat the", ["the cat"]),  # unigram matches only: smoothed bigram precision
    ("the the the the the the the", ["the cat is on the mat", "there is a cat on the mat"]),
    ("a b c d", ["a b", "a b c d e f"]),  # multiple references, closest is 2 away both sides
    ("a b c", ["a b", "a b c d"]),  # tie in distance: shorter reference wins
    ("a b c", ["", "x y z"]),  # an empty reference
    ("a b c", ["a b c"]),  # identical
]


@pytest.mark.parametrize(("hypothesis", "references"), EDGE_CASES)
def test_sentence_bleu2_matches_nltk_on_edge_cases(hypothesis, references):
    assert sentence_bleu2(hypothesis, references) == pytest.approx(
        nltk_bleu2(hypothesis, references), abs=1e-12
    )


def test_sentence_bleu2_of_identical_sentence_is_one():
    assert sentence_bleu2("a b c", ["a b c"]) == pytest.approx(1.0, abs=1e-15)


def test_sentence_bleu2_requires_a_reference():
    with pytest.raises(ValueError):
        sentence_bleu2("a b", [])


# A tiny vocabulary makes n-gram matches, repeats and clipping frequent.
sentences = st.lists(st.sampled_from("abcdef"), max_size=12).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(hypothesis=sentences, references=st.lists(sentences, min_size=1, max_size=4))
def test_sentence_bleu2_matches_nltk_on_random_sentences(hypothesis, references):
    assert sentence_bleu2(hypothesis, references) == pytest.approx(
        nltk_bleu2(hypothesis, references), abs=1e-12
    )


def test_corpus_average_bleu2_averages_prompts_with_references():
    responses = ["the cat", "a dog", "whatever"]
    references = [["the cat sat"], ["a dog ran", "the dog"], []]
    expected = (nltk_bleu2("the cat", ["the cat sat"]) + nltk_bleu2("a dog", references[1])) / 2
    assert corpus_average_bleu2(responses, references) == pytest.approx(expected, abs=1e-12)


def test_corpus_average_bleu2_is_none_without_any_reference():
    assert corpus_average_bleu2(["a", "b"], [[], []]) is None
    assert corpus_average_bleu2([], []) is None


def test_corpus_average_bleu2_rejects_misaligned_inputs():
    with pytest.raises(ValueError):
        corpus_average_bleu2(["a", "b"], [["a"]])


# --- the combined result ----------------------------------------------------------------------


SCORED = [("i do not know", ["i do not know"]), ("i do not", ["i do"]), ("yes yes", ["no"])]


def test_compute_text_metrics_combines_the_metrics():
    references = [["i do not know"], ["i do"], [], ["no"]]
    metrics = compute_text_metrics(RESPONSES, references)
    bleu_values = [
        nltk_bleu2("i do not know", ["i do not know"]),
        nltk_bleu2("i do not", ["i do"]),
        nltk_bleu2("yes yes", ["no"]),
    ]
    assert metrics == TextMetrics(
        n_responses=4,
        avg_length=2.25,
        distinct_1=pytest.approx(5 / 9),
        distinct_2=pytest.approx(4 / 9),
        bleu2=pytest.approx(sum(bleu_values) / 3, abs=1e-12),
        # Split on single spaces, the empty response is one empty token: 10 tokens, 6 types.
        chateval_distinct_1=pytest.approx(6 / 10),
        chateval_distinct_2=pytest.approx(4 / 10),
        chateval_bleu2=pytest.approx(sum(chateval_nltk_bleu2(*pair) for pair in SCORED) / 3),
        n_empty=1,
        n_duplicates=0,
    )


def test_compute_text_metrics_without_references_has_no_bleu():
    assert compute_text_metrics(["a b", "a b"]).bleu2 is None
    assert compute_text_metrics(["a b", "a b"]).n_duplicates == 1


def test_as_dict_round_trips_through_json():
    metrics = compute_text_metrics(RESPONSES, [["i do"], [], [], []])
    as_dict = metrics.as_dict()
    assert json.loads(json.dumps(as_dict, allow_nan=False)) == as_dict
    assert set(as_dict) == {
        "n_responses",
        "avg_length",
        "distinct_1",
        "distinct_2",
        "bleu2",
        "chateval_distinct_1",
        "chateval_distinct_2",
        "chateval_bleu2",
        "n_empty",
        "n_duplicates",
    }
    assert TextMetrics(**as_dict) == metrics


def test_empty_submission_is_all_zeros():
    assert compute_text_metrics([]).as_dict() == {
        "n_responses": 0,
        "avg_length": 0.0,
        "distinct_1": 0.0,
        "distinct_2": 0.0,
        "bleu2": None,
        "chateval_distinct_1": 0.0,
        "chateval_distinct_2": 0.0,
        "chateval_bleu2": None,
        "n_empty": 0,
        "n_duplicates": 0,
    }


def test_an_empty_response_counts_as_zero_tokens_in_evalhubs_definition():
    # EvalHub's definition: an empty line adds no token, so distinct-n is unchanged while the
    # mean length is taken over every response.
    with_empty = ["a b", "", "b c"]
    assert distinct_n(with_empty, 1) == distinct_n(["a b", "b c"], 1) == pytest.approx(3 / 4)
    assert average_length(with_empty) == pytest.approx(4 / 3)
    assert compute_text_metrics(with_empty).n_empty == 1


# --- as ChatEval computed (its released auto_eval_utils.py) -----------------------------------


def test_chateval_distinct_1_counts_an_empty_response_as_one_empty_token():
    # "a b" + "" + "b c" joined by spaces is "a b  b c": tokens a, b, "", b, c.
    assert chateval_distinct_1(["a b", "", "b c"]) == pytest.approx(4 / 5)
    assert distinct_n(["a b", "", "b c"], 1) == pytest.approx(3 / 4)


def test_chateval_distinct_1_makes_an_empty_token_of_two_spaces():
    assert chateval_distinct_1(["a  a"]) == pytest.approx(2 / 3)


def test_chateval_distinct_2_divides_bigrams_within_responses_by_tokens():
    # "i do not" has 3 tokens, "" one, "do not" 2: bigrams {i do, do not}, 6 tokens.
    assert chateval_distinct_2(["i do not", "", "do not"]) == pytest.approx(2 / 6)


def test_chateval_distinct_is_zero_for_no_responses():
    assert chateval_distinct_1([]) == chateval_distinct_2([]) == 0.0


CHATEVAL_CASES = [
    ("The Cat sat", ["the cat sat on the mat"]),  # lowercased before matching
    ("cat the", ["the cat"]),  # no bigram match: unsmoothed, practically zero
    ("the cat sat on the mat and then it slept", ["the cat sat"]),
    ("a b c d", ["a b", "a b c d e f"]),
    ("", ["a b"]),
    ("a b c", ["A B C"]),
]


@pytest.mark.parametrize(("hypothesis", "references"), CHATEVAL_CASES)
def test_chateval_sentence_bleu2_matches_nltk_unsmoothed_lowercased(hypothesis, references):
    assert chateval_sentence_bleu2(hypothesis, references) == pytest.approx(
        chateval_nltk_bleu2(hypothesis, references), abs=1e-12
    )


@settings(max_examples=300, deadline=None)
@given(hypothesis=sentences, references=st.lists(sentences, min_size=1, max_size=4))
def test_chateval_sentence_bleu2_matches_nltk_on_random_sentences(hypothesis, references):
    assert chateval_sentence_bleu2(hypothesis, references) == pytest.approx(
        chateval_nltk_bleu2(hypothesis, references), abs=1e-12
    )


def test_chateval_bleu2_and_evalhubs_differ_on_case_and_bigram_misses():
    responses, references = ["cat the", "The dog ran"], [["the cat"], ["the dog ran"]]
    evalhubs = (nltk_bleu2("cat the", ["the cat"]) + nltk_bleu2("The dog ran", ["the dog ran"])) / 2
    # ChatEval: the miss scores 0 (no smoothing), the other 1 (lowercased).
    assert chateval_bleu2(responses, references) == pytest.approx(0.5)
    assert corpus_average_bleu2(responses, references) == pytest.approx(evalhubs, abs=1e-12)
    assert evalhubs != pytest.approx(0.5)
