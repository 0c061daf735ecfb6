"""The language of a prompt, detected with py3langid (a kept fork of langid.py: a small
naive Bayes model over byte n-grams shipped inside the package, 97 languages, no download).

Pure (no Django). The model is loaded on first use, not when the app loads.
"""

from __future__ import annotations

import re

# Fewer letters than this tell nothing reliable ("ok", "?", a number).
MIN_LETTERS = 3
_LETTER = re.compile(r"[^\W\d_]")


def detect_language(text: str) -> str:
    """The ISO 639-1 code of the text's language ("en", "fr", ...), or "" when the text
    has too few letters to tell."""
    if len(_LETTER.findall(text[:2000])) < MIN_LETTERS:
        return ""
    import py3langid  # ~20 MB of model: loaded by the first battle, not at start-up

    language, _score = py3langid.classify(text[:2000])
    return language
