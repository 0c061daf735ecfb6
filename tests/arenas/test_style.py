"""The style features of an answer, counted by hand on small answers."""

from arenas.style import count_tokens, name_mentioned, style_features, summed_features

ANSWER = """# Plan

## Steps
1. Boil water.
2. Add **pasta** and __salt__.
   - stir *gently*
   * taste
+ done

```python
# not a header
- not a list item
**not bold**
```

#NotAHeader and ### also not at the line start
**unclosed bold
"""


def test_headers_lists_bold_and_code_blocks_counted_by_hand():
    features = style_features(ANSWER)
    assert features["header_count"] == {"h1": 1, "h2": 1, "h3": 0, "h4": 0, "h5": 0, "h6": 0}
    # "1. Boil", "2. Add" are ordered; "- stir", "* taste", "+ done" unordered (indented too).
    assert features["list_count"] == {"ordered": 2, "unordered": 3}
    assert features["bold_count"] == {"**": 1, "__": 1}
    assert features["code_blocks"] == 1


def test_what_is_inside_a_code_block_counts_as_code_only():
    inside = "```\n# h\n1. x\n- y\n**b**\n```"
    assert style_features(inside) == style_features("```x```") | {"code_blocks": 1}
    assert style_features(inside)["header_count"]["h1"] == 0


def test_each_header_level_is_its_own():
    text = "\n".join("#" * n + " title" for n in range(1, 7)) + "\n####### seven"
    counts = style_features(text)["header_count"]
    assert counts == {"h1": 1, "h2": 1, "h3": 1, "h4": 1, "h5": 1, "h6": 1}


def test_plain_text_has_no_features():
    features = style_features("Just a sentence, with a comma.")
    assert sum(features["header_count"].values()) == 0
    assert features["list_count"] == {"ordered": 0, "unordered": 0}
    assert features["bold_count"] == {"**": 0, "__": 0} and features["code_blocks"] == 0


def test_features_of_several_turns_add_up():
    one = style_features("# a\n- b\n**c**")
    two = style_features("# d\n1. e\n```f```")
    total = summed_features([one, two])
    assert total["header_count"]["h1"] == 2
    assert total["list_count"] == {"ordered": 1, "unordered": 1}
    assert total["bold_count"]["**"] == 1 and total["code_blocks"] == 1


def test_tokens_are_word_pieces_and_punctuation():
    assert count_tokens("Hello, world!") == 4
    assert count_tokens("") == 0
    assert count_tokens("It's 3.5 km") == 7  # It ' s 3 . 5 km


def test_a_model_naming_itself_is_found_as_a_whole_word():
    assert name_mentioned("I am Llama-3, made by Meta.", ["llama-3"])
    assert name_mentioned("As GPT-4 I cannot.", ["Some Name", "gpt-4"])
    assert not name_mentioned("I am gpt-4o.", ["gpt-4"])  # another model's name
    assert not name_mentioned("a llamas farm", ["llama"])
    assert not name_mentioned("I am ok", ["ok"])  # too short to tell
