"""The annotation task kinds, one module each; `get_kind(key)` returns the kind object."""

import importlib

from .base import TaskKind

KIND_KEYS = (
    "ab",
    "spot_the_bot",
    "abc_eval",
    "likert",
    "comparative",
    "chat",
    "arena",
    "ranking",
    "conversation_ranking",
)
KIND_CHOICES = [
    ("ab", "A/B response comparison (ChatEval)"),
    ("spot_the_bot", "Spot The Bot"),
    ("abc_eval", "ABC-Eval behaviour labels"),
    ("likert", "Likert ratings (dialogue or turn)"),
    ("comparative", "Side-by-side dialogue comparison"),
    ("chat", "Live chat with a system, then ratings"),
    ("arena", "Arena battles voted by a paid crowd (launched from an arena)"),
    ("ranking", "K-way ranking of responses (Plackett-Luce)"),
    ("conversation_ranking", "K-way ranking of conversations (Plackett-Luce)"),
]


def get_kind(key: str) -> TaskKind:
    if key not in KIND_KEYS:
        raise KeyError(f"Unknown task kind {key!r}; known: {', '.join(KIND_KEYS)}")
    return importlib.import_module(f"annotation.kinds.{key}").KIND
