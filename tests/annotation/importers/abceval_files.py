"""A small ABC-Eval study in the release's shapes, made up for the tests.

Two conversations with text ("c1" by bot-a, 2 bot turns; "c2" by bot-b, 3 bot turns);
behaviour labels by two annotators on c1 and one on c2; Likert scores for c1 (named by its
source id) and for "(9,1)_bot_b", a dialogue whose text is not published; one comparison
of those two, recorded from both sides as the release does."""

import json

C1, C2 = "(1,1)_bot_a", "(2,1)_bot_b"
TEXTLESS = "(9,1)_bot_b"


def jsonl(*rows) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode()


def conversations() -> list[dict]:
    return [
        {
            "id": "c1",
            "source_id": C1,
            "speakers": ["human", "bot-a"],
            "turns": [
                {"speaker": 0, "text": "Hi!"},
                {"speaker": 1, "text": "Hello! I love sailing."},
                {"speaker": 0, "text": "My cat died."},
                {"speaker": 1, "text": "Great, more free time."},
            ],
        },
        {
            "id": "c2",
            "source_id": C2,
            "speakers": ["human", "bot-b"],
            "turns": [
                {"speaker": 1, "text": "Hi there."},
                {"speaker": 0, "text": "Hello."},
                {"speaker": 1, "text": "Kyoto is the capital of Japan."},
                {"speaker": 0, "text": "Is it?"},
                {"speaker": 1, "text": "I have never had a pet. My dogs are great."},
            ],
        },
    ]


def behaviours() -> list[dict]:
    return [
        {
            "conversation": "c1",
            "annotator": "a1",
            "labels": {
                "empathetic": [0, 0],
                "lack of empathy": [0, 1],
                "incorrect fact": [0, 0],
                "self contradiction": [0, 0],
            },
        },
        {
            "conversation": "c1",
            "annotator": "a2",
            "labels": {
                "empathetic": [1, 0],
                "lack of empathy": [0, 1],
                "incorrect fact": [0, 0],
                "self contradiction": [0, 0],
            },
        },
        {
            "conversation": "c2",
            "annotator": "a1",
            "labels": {
                "empathetic": [0, 0, 0],
                "lack of empathy": [0, 0, 0],
                "incorrect fact": [0, 1, 0],
                "self contradiction": [0, 0, 1],
            },
        },
    ]


def likert() -> list[dict]:
    def row(dialogue, bot, label, score, seconds):
        return {
            "dialogue": dialogue,
            "bot": bot,
            "label": label,
            "worker": "w1",
            "score": score,
            "seconds": seconds,
        }

    return [
        row(C1, "bot-a", "quality", 4, 60.5),
        row(C1, "bot-a", "consistent", 5, 60.5),
        row(TEXTLESS, "bot-b", "quality", 2, 30),
        row(TEXTLESS, "bot-b", "consistent", 3, 30),
    ]


def comparative() -> list[dict]:
    def row(dialogue, bot, versus, bot_versus, label, score):
        return {
            "dialogue": dialogue,
            "bot": bot,
            "label": label,
            "worker": "w2",
            "score": score,
            "seconds": 90.0,
            "versus": versus,
            "bot_versus": bot_versus,
        }

    return [
        row(C1, "bot-a", TEXTLESS, "bot-b", "quality", 1),
        row(C1, "bot-a", TEXTLESS, "bot-b", "consistent", 0),
        row(TEXTLESS, "bot-b", C1, "bot-a", "quality", -1),
        row(TEXTLESS, "bot-b", C1, "bot-a", "consistent", 0),
    ]


def write(tmp_path, **overrides) -> dict:
    """The four files under tmp_path; `overrides` replace a file's rows (or its bytes)."""
    rows = {
        "conversations": conversations(),
        "behaviours": behaviours(),
        "likert": likert(),
        "comparative": comparative(),
    }
    rows.update(overrides)
    paths = {}
    for name, content in rows.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(content if isinstance(content, bytes) else jsonl(*content))
        paths[name] = path
    return paths


def given(paths: dict) -> dict:
    """Arguments of import_abceval for the files."""
    return {name: (path.name, path.read_bytes()) for name, path in paths.items()}
