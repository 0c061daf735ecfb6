"""The categories a battle belongs to, for the leaderboard's `?category=`.

Built in, named as Chatbot Arena names them (its leaderboard's category keys: FastChat's
``fastchat/serve/monitor`` code and the LMSYS blog posts on categories, 2024):

- a language: the battle's ``language`` as its English name, lowercased: ``english``,
  ``chinese``, ``german``... (a live battle stores py3langid's ISO code, ``en``, mapped here;
  an imported one Chatbot Arena's name, ``English``);
- ``multiturn``: more than one user turn (Chatbot Arena's "Multi-Turn", >= 2 turns);
- ``long_user``: the user's prompts together have at least ``LONG_USER_TOKENS`` = 500
  tokens (Chatbot Arena's "Longer Query (>= 500 tokens)"); an imported battle's
  ``conv_metadata.sum_user_tokens`` when it has one, else `arenas.style.count_tokens` of
  the prompts (a tokenizer-free count, close to a BPE count for English prose);
- ``coding``: code in a prompt or an answer (Chatbot Arena's "Coding", its ``is_code``
  tag): an imported ``is_code`` when present, else `looks_like_code` below.

An owner adds their own (`ArenaCategory`): a rule over the language, the turns, the prompt
tokens and a regular expression on the prompts. Pure: no Django here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

LONG_USER_TOKENS = 500
FIXED = ("multiturn", "long_user", "coding")

# py3langid's 97 languages (ISO 639-1) by their English names, as Chatbot Arena writes them.
LANGUAGE_NAMES = {
    "af": "afrikaans", "am": "amharic", "an": "aragonese", "ar": "arabic", "as": "assamese",
    "az": "azerbaijani", "be": "belarusian", "bg": "bulgarian", "bn": "bengali",
    "br": "breton", "bs": "bosnian", "ca": "catalan", "cs": "czech", "cy": "welsh",
    "da": "danish", "de": "german", "dz": "dzongkha", "el": "greek", "en": "english",
    "eo": "esperanto", "es": "spanish", "et": "estonian", "eu": "basque", "fa": "persian",
    "fi": "finnish", "fo": "faroese", "fr": "french", "ga": "irish", "gl": "galician",
    "gu": "gujarati", "he": "hebrew", "hi": "hindi", "hr": "croatian", "ht": "haitian",
    "hu": "hungarian", "hy": "armenian", "id": "indonesian", "is": "icelandic",
    "it": "italian", "ja": "japanese", "jv": "javanese", "ka": "georgian", "kk": "kazakh",
    "km": "khmer", "kn": "kannada", "ko": "korean", "ku": "kurdish", "ky": "kyrgyz",
    "la": "latin", "lb": "luxembourgish", "lo": "lao", "lt": "lithuanian", "lv": "latvian",
    "mg": "malagasy", "mk": "macedonian", "ml": "malayalam", "mn": "mongolian",
    "mr": "marathi", "ms": "malay", "mt": "maltese", "nb": "norwegian", "ne": "nepali",
    "nl": "dutch", "nn": "norwegian", "no": "norwegian", "oc": "occitan", "or": "oriya",
    "pa": "punjabi", "pl": "polish", "ps": "pashto", "pt": "portuguese", "qu": "quechua",
    "ro": "romanian", "ru": "russian", "rw": "kinyarwanda", "se": "sami", "si": "sinhala",
    "sk": "slovak", "sl": "slovenian", "sq": "albanian", "sr": "serbian", "sv": "swedish",
    "sw": "swahili", "ta": "tamil", "te": "telugu", "th": "thai", "tl": "tagalog",
    "tr": "turkish", "ug": "uyghur", "uk": "ukrainian", "ur": "urdu", "vi": "vietnamese",
    "vo": "volapuk", "wa": "walloon", "xh": "xhosa", "zh": "chinese", "zu": "zulu",
}  # fmt: skip

# `looks_like_code`: after FastChat's code tagger (``is_code_conversation``), which marks a
# conversation as code when it has a fenced block, names a programming language or tool as
# a word, or holds an import / install / include line.
_FENCE = re.compile(r"```")
_CODE_WORDS = frozenset(
    [
        "python",
        "c++",
        "cpp",
        "java",
        "javascript",
        "typescript",
        "html",
        "css",
        "sql",
        "bash",
        "powershell",
        "matlab",
        "golang",
        "rust",
        "kotlin",
        "swift",
        "php",
        "ruby",
        "linux",
        "ubuntu",
        "git",
        "github",
        "dataframe",
        "nginx",
        "pip",
        "regex",
        "json",
        "yaml",
        "dockerfile",
        "kubernetes",
    ]
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+#]*")
_CODE_LINES = re.compile(
    r"(^|\n)\s*(from \w+(\.\w+)* import \w+|import \w+( as \w+)?\s*$|#include [<\"]\w+"
    r"|(pip|conda) install \S+|apt-get install|def \w+\(|class \w+[:(]|function \w+\(|"
    r"(public|private) (static )?\w+ \w+\()",
    re.MULTILINE,
)
_CODE_PHRASES = ("import pandas", "import numpy", "import torch", "tensorflow", "pytorch",
                 "scikit-learn", "sklearn", "console.log(", "System.out.print", "SELECT * FROM")  # fmt: skip


def looks_like_code(text: str) -> bool:
    """Code in the text: a fenced block, a programming language or tool named as a word,
    an import / install / include / definition line, or a telltale library call."""
    if _FENCE.search(text) or _CODE_LINES.search(text):
        return True
    if any(phrase in text for phrase in _CODE_PHRASES):
        return True
    return any(word.lower() in _CODE_WORDS for word in _WORD.findall(text))


def language_category(language: str) -> str:
    """The category of a stored language: ``"en"`` and ``"English"`` are both ``english``;
    "" is none."""
    language = language.strip()
    if not language:
        return ""
    name = LANGUAGE_NAMES.get(language.lower(), language.lower())
    return re.sub(r"[^a-z0-9]+", "_", name).strip("_")


def is_builtin(name: str) -> bool:
    return name in FIXED or name in set(LANGUAGE_NAMES.values())


@dataclass(frozen=True)
class BattleFacts:
    """What the categories look at in one battle."""

    language: str
    turns: int
    user_tokens: int
    code: bool
    prompts: str  # the user's prompts, joined by blank lines


@dataclass(frozen=True)
class Rule:
    """An owner's category: every condition given must hold."""

    name: str
    language: str = ""
    min_turns: int = 1
    max_turns: int = 20
    min_user_tokens: int = 0
    max_user_tokens: int = 1_000_000
    pattern: re.Pattern | None = None

    def matches(self, facts: BattleFacts) -> bool:
        if self.language and language_category(facts.language) != self.language:
            return False
        if not self.min_turns <= max(facts.turns, 1) <= self.max_turns:
            return False
        if not self.min_user_tokens <= facts.user_tokens <= self.max_user_tokens:
            return False
        return self.pattern is None or self.pattern.search(facts.prompts) is not None


def categories_of(facts: BattleFacts, rules: Iterable[Rule] = ()) -> list[str]:
    """The built-in categories of the battle, then the owner's it meets."""
    found = []
    language = language_category(facts.language)
    if language:
        found.append(language)
    if facts.turns > 1:
        found.append("multiturn")
    if facts.user_tokens >= LONG_USER_TOKENS:
        found.append("long_user")
    if facts.code:
        found.append("coding")
    found.extend(rule.name for rule in rules if rule.matches(facts))
    return found


# A quantified group holding a quantifier ("(a+)+", "(x*y)*"), or a backreference, can take
# exponential time on a crafted prompt: refused, since the task matches every prompt.
_NESTED_QUANTIFIER = re.compile(r"\([^()]*[+*}][^()]*\)\s*[+*{?]|\\[1-9]")


def pattern_problem(pattern: str, max_chars: int) -> str | None:
    """Why an owner's prompt pattern is refused (None when it is fine)."""
    if len(pattern) > max_chars:
        return f"A pattern has at most {max_chars} characters."
    try:
        re.compile(pattern)
    except re.error as error:
        return f"Not a regular expression: {error}."
    if _NESTED_QUANTIFIER.search(pattern):
        return "Nested repetition (like (a+)+) and backreferences are not allowed."
    return None
