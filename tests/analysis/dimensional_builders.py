"""A small made-up ABC-Eval study with known rates, imported as the real one would be.

Two bots, "bot-good" and "bot-bad", 6 conversations each with 4 bot turns, every
conversation labelled by two annotators (who agree on most turns): "ignore" is present in
1 of 4 turns of bot-good's conversations and 3 of 4 of bot-bad's, "empathetic" the other way
round. Two workers rate every dialogue's quality and consistency (bot-good 4-5, bot-bad 1-2)
and judge 6 pairs of one conversation of each bot (bot-good better on quality)."""

import json
import random

from annotation.importers.abceval.study import import_abceval

BOTS = ("bot-good", "bot-bad")
PER_BOT = 6
FAST = {"alpha_resamples": 50, "seed": 1}


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def _conversation(bot: str, n: int) -> dict:
    turns = []
    for k in range(4):
        turns.append({"speaker": 0, "text": f"Human line {k} of {n}."})
        turns.append({"speaker": 1, "text": f"{bot} reply {k} of {n}."})
    return {"id": f"{bot}-{n}", "speakers": ["human", bot], "turns": turns}


def study_files(seed: int = 0) -> dict[str, tuple[str, bytes]]:
    rng = random.Random(seed)
    conversations, behaviours, likert, comparative = [], [], [], []
    for bot in BOTS:
        good = bot == "bot-good"
        for n in range(PER_BOT):
            conversation = _conversation(bot, n)
            conversations.append(conversation)
            ignore = [1, 0, 0, 0] if good else [1, 1, 1, 0]
            empathetic = [1, 1, 1, 0] if good else [1, 0, 0, 0]
            for annotator in ("a1", "a2"):
                flip = annotator == "a2" and n % 3 == 0
                behaviours.append(
                    {
                        "conversation": conversation["id"],
                        "annotator": annotator,
                        "labels": {
                            "ignore": [1 - f for f in ignore] if flip and n == 0 else ignore,
                            "empathetic": empathetic,
                        },
                    }
                )
            for worker in ("w1", "w2"):
                for label in ("quality", "consistent"):
                    likert.append(
                        {
                            "dialogue": conversation["id"],
                            "bot": bot,
                            "label": label,
                            "worker": worker,
                            "score": rng.choice([4, 5]) if good else rng.choice([1, 2]),
                            "seconds": 30.0,
                        }
                    )
    for n in range(PER_BOT):
        for worker in ("w1", "w2"):
            for label, score in (("quality", 1), ("consistent", rng.choice([1, 0]))):
                common = {"label": label, "worker": worker, "seconds": 40.0}
                comparative.append(
                    {
                        "dialogue": f"bot-good-{n}",
                        "bot": "bot-good",
                        "versus": f"bot-bad-{n}",
                        "bot_versus": "bot-bad",
                        "score": score,
                        **common,
                    }
                )
                comparative.append(
                    {
                        "dialogue": f"bot-bad-{n}",
                        "bot": "bot-bad",
                        "versus": f"bot-good-{n}",
                        "bot_versus": "bot-good",
                        "score": -score,
                        **common,
                    }
                )
    return {
        "conversations": ("conversations.jsonl", _jsonl(conversations)),
        "behaviours": ("behaviours.jsonl", _jsonl(behaviours)),
        "likert": ("likert.jsonl", _jsonl(likert)),
        "comparative": ("comparative.jsonl", _jsonl(comparative)),
    }


def imported_study(slug: str = "abc-made-up", **files):
    """The study imported; returns the Study."""
    result = import_abceval(name="Made-up ABC-Eval", slug=slug, **{**study_files(), **files})
    return result.study
