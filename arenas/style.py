"""The style features of one answer, as Chatbot Arena's style control counts them.

Pure functions of the text (no Django): the leaderboard's style control (the next issue)
regresses votes on the differences of these features between the two sides.

Chatbot Arena (FastChat's ``count_markdown_elements``, which made the ``conv_metadata`` of its
published clean battles) removes fenced code blocks first, then counts, each a line-anchored
regular expression:

- headers by level: a line starting with exactly ``#`` .. ``######`` then whitespace;
- ordered list items: a line of optional indentation, digits, a dot and whitespace;
- unordered list items: optional indentation, one of ``-``, ``*``, ``+``, then whitespace;
- bold spans: ``**text**`` and ``__text__`` with no line break and no marker inside.

We count the fenced code blocks too (a ```` ``` ```` ... ```` ``` ```` span), which that code
removes without counting. The answer length in tokens is the server's own count when it
reports one (``usage.completion_tokens``); otherwise `count_tokens` counts word pieces and
punctuation marks, a tokenizer-free approximation documented as such.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

HEADER_LEVELS = ("h1", "h2", "h3", "h4", "h5", "h6")
_HEADERS = {
    level: re.compile(rf"^#{{{n}}}\s", re.MULTILINE) for n, level in enumerate(HEADER_LEVELS, 1)
}
_ORDERED = re.compile(r"^\s*\d+\.\s", re.MULTILINE)
_UNORDERED = re.compile(r"^\s*[-*+]\s", re.MULTILINE)
_BOLD_STARS = re.compile(r"\*\*[^*\n]+\*\*")
_BOLD_UNDERSCORES = re.compile(r"__[^_\n]+__")
_CODE_BLOCK = re.compile(r"```[^`]*```")
# A run of letters or digits, or one other visible character: close to what a BPE
# tokenizer makes of English prose (within about a quarter), and the same for everyone.
_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """Word pieces and punctuation marks: `"Hello, world!"` is 4."""
    return sum(1 for _ in _TOKEN.finditer(text))


def empty_features() -> dict:
    return {
        "header_count": dict.fromkeys(HEADER_LEVELS, 0),
        "list_count": {"ordered": 0, "unordered": 0},
        "bold_count": {"**": 0, "__": 0},
        "code_blocks": 0,
    }


def style_features(text: str) -> dict:
    """The markdown features of one answer (code blocks removed before the other counts)."""
    code_blocks = _CODE_BLOCK.findall(text)
    prose = text
    for block in code_blocks:
        prose = prose.replace(block, "")
    return {
        "header_count": {level: len(rx.findall(prose)) for level, rx in _HEADERS.items()},
        "list_count": {
            "ordered": len(_ORDERED.findall(prose)),
            "unordered": len(_UNORDERED.findall(prose)),
        },
        "bold_count": {
            "**": len(_BOLD_STARS.findall(prose)),
            "__": len(_BOLD_UNDERSCORES.findall(prose)),
        },
        "code_blocks": len(code_blocks),
    }


def summed_features(features: Iterable[Mapping]) -> dict:
    """The features of several answers (a battle's turns on one side), added up."""
    total = empty_features()
    for one in features:
        for group, counts in one.items():
            if isinstance(counts, Mapping):
                for key, value in counts.items():
                    total[group][key] = total[group].get(key, 0) + int(value)
            else:
                total[group] = total.get(group, 0) + int(counts)
    return total


def name_mentioned(text: str, names: Iterable[str]) -> bool:
    """Whether any of `names` (a model's name, slug or served model name) appears in the
    text as a whole word, case ignored: the model gave itself away."""
    for name in names:
        name = name.strip()
        if len(name) < 3:  # "a", "lm": too common to tell anything
            continue
        pattern = rf"(?<![\w-]){re.escape(name)}(?![\w-])"
        if re.search(pattern, text, flags=re.IGNORECASE):
            return True
    return False
