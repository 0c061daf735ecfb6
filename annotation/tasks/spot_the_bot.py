"""Spot The Bot (Deriu et al., 2020): is each speaker of a conversation segment a human or a bot?

Items. A segment is the first k exchanges of a two-speaker conversation; exchange i is
turns 2i and 2i+1 (the interchange format's rule). `build_items` makes one item per
conversation and segment length in `segment_lengths`; a conversation shorter than k
exchanges is skipped for that length and counted. Every segment of a conversation carries
the conversation's external id as `group_key`, so no worker reads two segments of one
conversation (the paper's rule: a longer segment would reveal what a shorter one hid).
The page names the speakers neutrally ("Speaker 1", "Speaker 2"; config `speaker_names`);
who they really are lives in `content["meta"]`, which `item_context` never passes on.

Config (`clean_config` fills the defaults):
- `segment_lengths`: exchanges per segment, default [2, 3, 5];
- `features`: feature names rated by preference, default sensibleness, specificity,
  fluency; `feature_definitions` adds or overrides the one-sentence definitions shown on
  the page (every feature needs one);
- `speaker_names`: the two neutral names;
- `gold_conversations`: external ids of conversations used as gold checks (e.g.
  human-human controls). Each gives one gold item, at the longest configured length it
  has (it must have the shortest), whose gold labels are the truth ("human" for a person,
  "bot" for a system).

Payload, exactly as in the interchange format:
`{"labels": ["human" | "bot" | "unsure", ...], "better": {feature: speaker index | None}}`
where `labels[i]` is speaker i's label and None means "no difference".

Export (`export_row`): one line of the interchange format, `{"conversation", "worker",
"batch", "exchanges", "labels", "better", "started_at_ms", "duration_ms"}`. `worker` is the
worker's opaque public id (never the crowd platform's id, which identifies a person);
`batch` is "<campaign slug>:<batch position>", the same for every worker of that batch;
`duration_ms` is the time measured in the browser, or the server's time when the browser
sent none.

Analysis (`analysis_rows`): one row per task judgment and speaker, with the system, the
segment length, the label and the feature preferences coded +1 / 0 / -1, which is what the
survival analysis and the pairwise win rates read.
"""

import copy
import re
from dataclasses import dataclass
from typing import Any

from .base import ConfigInvalid, GoldResult, ItemSpec, PayloadInvalid, TaskKind, collect_choices

LABELS = ("human", "bot", "unsure")
HUMAN = "human"
FEATURE_DEFINITIONS = {
    "sensibleness": "Says things that make sense in the context of the conversation.",
    "specificity": "Gives answers specific to what was said rather than vague, generic replies.",
    "fluency": "Writes fluent, grammatically correct sentences that read naturally.",
}
DEFAULT_CONFIG = {
    "segment_lengths": [2, 3, 5],
    "features": ["sensibleness", "specificity", "fluency"],
    "feature_definitions": {},
    "speaker_names": ["Speaker 1", "Speaker 2"],
    "gold_conversations": [],
}
# Feature names become form field names and JSON keys.
FEATURE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
NO_DIFFERENCE = "none"


def clean_config(config: dict | None) -> dict:
    """The config with defaults filled in and `feature_definitions` covering every feature."""
    merged = {**copy.deepcopy(DEFAULT_CONFIG), **(config or {})}
    lengths = merged["segment_lengths"]
    if (
        not isinstance(lengths, list)
        or not lengths
        or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in lengths)
        or len(set(lengths)) != len(lengths)
    ):
        raise ConfigInvalid(
            "segment_lengths must be a list of distinct whole numbers of at least 1."
        )
    features = merged["features"]
    if not isinstance(features, list) or len(set(features)) != len(features):
        raise ConfigInvalid("features must be a list of distinct names.")
    for name in features:
        if not isinstance(name, str) or not FEATURE_NAME.match(name):
            raise ConfigInvalid(
                f"Feature name {name!r}: use lowercase letters, digits and _ (at most 40)."
            )
    definitions = {**FEATURE_DEFINITIONS, **(merged["feature_definitions"] or {})}
    missing = [name for name in features if not str(definitions.get(name, "")).strip()]
    if missing:
        raise ConfigInvalid(f"Give a one-sentence definition for: {', '.join(missing)}.")
    merged["feature_definitions"] = {name: definitions[name] for name in features}
    names = merged["speaker_names"]
    if (
        not isinstance(names, list)
        or len(names) != 2
        or not all(isinstance(n, str) and n.strip() for n in names)
        or names[0] == names[1]
    ):
        raise ConfigInvalid("speaker_names must be two different, non-empty names.")
    if not isinstance(merged["gold_conversations"], list):
        raise ConfigInvalid("gold_conversations must be a list of conversation ids.")
    return merged


def _speakers(conversation) -> list[str]:
    """The system slug of each speaker, "human" for a person, in speaker-index order."""
    speakers = sorted(conversation.speakers.all(), key=lambda s: s.index)
    if [s.index for s in speakers] != [0, 1]:
        raise ConfigInvalid(
            f"Spot The Bot needs two speakers (indices 0 and 1); conversation "
            f"{conversation.external_id} has {len(speakers)}."
        )
    return [s.system.slug if s.system_id else HUMAN for s in speakers]


def _segment(conversation, turns, speakers: list[str], k: int, names: list[str]) -> dict:
    return {
        "speakers": list(names),
        "turns": [{"speaker": t.speaker, "text": t.text} for t in turns[: 2 * k]],
        "meta": {"conversation": conversation.external_id, "speakers": speakers, "exchanges": k},
    }


def gold_explanation(speakers: list[str], names: list[str]) -> str:
    if all(s == HUMAN for s in speakers):
        return f"{names[0]} and {names[1]} are both people: two humans wrote this conversation."
    parts = [
        f"{name} is {'a person' if s == HUMAN else 'a chatbot'}"
        for name, s in zip(names, speakers, strict=True)
    ]
    return "; ".join(parts) + "."


def build_items(conversations, config: dict, rng) -> tuple[list[ItemSpec], int]:
    """Segments of `conversations` (speakers__system and turns prefetched) as item specs.

    Returns (specs, skipped), where `skipped` counts the (conversation, length) pairs left
    out because the conversation has fewer exchanges than the length.
    """
    config = clean_config(config)
    lengths = sorted(config["segment_lengths"])
    names = config["speaker_names"]
    gold_ids = set(config["gold_conversations"])
    specs: list[ItemSpec] = []
    skipped = 0
    found_gold = set()
    for conversation in conversations:
        speakers = _speakers(conversation)
        turns = sorted(conversation.turns.all(), key=lambda t: t.position)
        exchanges = len(turns) // 2
        fitting = [k for k in lengths if k <= exchanges]
        common = {"group_key": conversation.external_id, "conversation_id": conversation.pk}
        if conversation.external_id in gold_ids:
            found_gold.add(conversation.external_id)
            if not fitting:
                raise ConfigInvalid(
                    f"Gold conversation {conversation.external_id} is shorter than the "
                    f"shortest segment ({lengths[0]} exchanges)."
                )
            k = fitting[-1]
            gold = {"labels": speakers, "explanation": gold_explanation(speakers, names)}
            specs.append(
                ItemSpec(
                    content=_segment(conversation, turns, speakers, k, names),
                    role="gold",
                    gold=gold,
                    segment_length=k,
                    **common,
                )
            )
            continue
        skipped += len(lengths) - len(fitting)
        # Random order within a conversation: packing deals a group's items out in input
        # order, so a fixed order would put all the short segments in the first batches.
        rng.shuffle(fitting)
        for k in fitting:
            specs.append(
                ItemSpec(
                    content=_segment(conversation, turns, speakers, k, names),
                    segment_length=k,
                    **common,
                )
            )
    unknown = sorted(gold_ids - found_gold)
    if unknown:
        raise ConfigInvalid(
            f"Gold conversations not among the conversations: {', '.join(unknown)}."
        )
    return specs, skipped


def _feature_label(name: str) -> str:
    return name.replace("_", " ").capitalize()


class SpotTheBotKind(TaskKind):
    key = "spot_the_bot"
    label = "Spot The Bot"
    template = "annotation/tasks/spot_the_bot.html"
    shortcuts = (
        ("h", "human"),
        ("b", "bot"),
        ("u", "unsure"),
        ("1", "first speaker better"),
        ("2", "second speaker better"),
        ("3", "no difference"),
    )

    def default_config(self) -> dict:
        return copy.deepcopy(DEFAULT_CONFIG)

    def clean_config(self, config):
        return clean_config(config)

    def build_from_conversations(self, conversations, config, rng) -> list[ItemSpec]:
        return build_items(conversations, config, rng)[0]

    def item_context(self, item, config):
        content = item.content
        names = content["speakers"]
        speakers = [
            {
                "name": name,
                "field": f"label_{index}",
                "options": [
                    {"value": "human", "text": "Human", "key": "h"},
                    {"value": "bot", "text": "Bot", "key": "b"},
                    {"value": "unsure", "text": "Unsure", "key": "u"},
                ],
            }
            for index, name in enumerate(names)
        ]
        better_options = [
            {"value": str(index), "text": name, "key": str(index + 1)}
            for index, name in enumerate(names)
        ] + [{"value": NO_DIFFERENCE, "text": "No difference", "key": str(len(names) + 1)}]
        features = [
            {
                "name": name,
                "label": _feature_label(name),
                "definition": config["feature_definitions"][name],
                "field": f"better_{name}",
                "options": better_options,
            }
            for name in config["features"]
        ]
        turns = [
            {"speaker": t["speaker"], "name": names[t["speaker"]], "text": t["text"]}
            for t in content["turns"]
        ]
        return {"turns": turns, "speakers": speakers, "features": features}

    def parse_payload(self, item, config, data):
        names = item.content["speakers"]
        label_fields = [
            (f"label_{i}", {v: v for v in LABELS}, name) for i, name in enumerate(names)
        ]
        better_allowed: dict[str, Any] = {str(i): i for i in range(len(names))}
        better_allowed[NO_DIFFERENCE] = None
        feature_fields = [
            (f"better_{name}", better_allowed, _feature_label(name).lower())
            for name in config["features"]
        ]
        errors: dict[str, str] = {}
        unknown = sorted(
            key[len("better_") :]
            for key in data
            if key.startswith("better_") and key[len("better_") :] not in config["features"]
        )
        if unknown:
            errors[""] = f"Unknown feature: {', '.join(unknown)}."
        try:
            values = collect_choices(data, label_fields + feature_fields)
        except PayloadInvalid as invalid:
            raise PayloadInvalid({**invalid.errors, **errors}) from None
        if errors:
            raise PayloadInvalid(errors)
        return {
            "labels": [values[f"label_{i}"] for i in range(len(names))],
            "better": {name: values[f"better_{name}"] for name in config["features"]},
        }

    def score_gold(self, item, payload):
        if not item.gold or "labels" not in item.gold:
            return None
        names = item.content["speakers"]
        feedback = [
            {
                "where": names[index],
                "field": f"label_{index}",
                "yours": yours,
                "gold": gold,
                "explanation": item.gold.get("explanation", ""),
            }
            for index, (yours, gold) in enumerate(
                zip(payload["labels"], item.gold["labels"], strict=True)
            )
            # "unsure" is wrong too: a check has a known answer.
            if yours != gold
        ]
        return GoldResult(correct=not feedback, mistakes=len(feedback), feedback=feedback)

    def export_row(self, judgment):
        meta = judgment.item.content["meta"]
        batch = judgment.assignment.batch
        return {
            "conversation": meta["conversation"],
            "worker": str(judgment.worker.public_id),
            "batch": f"{judgment.campaign.slug}:{batch.position}",
            "exchanges": meta["exchanges"],
            "labels": judgment.payload["labels"],
            "better": judgment.payload["better"],
            "started_at_ms": int(judgment.started_at.timestamp() * 1000),
            "duration_ms": round(judgment.seconds * 1000),
        }


@dataclass(frozen=True)
class AnalysisRow:
    """One speaker as one judgment saw it. `features` maps a feature to +1 (this speaker
    did better), 0 (no difference) or -1 (the other speaker did better)."""

    judgment: int
    worker: int
    conversation: str
    speaker: int
    system: str
    opponent: str
    exchanges: int
    label: str
    opponent_label: str
    features: dict[str, int]


def _preference(better, speaker: int) -> int:
    if better is None:
        return 0
    return 1 if better == speaker else -1


def analysis_rows(judgments) -> list[AnalysisRow]:
    """Rows for the survival and pairwise analyses from task judgments (items loaded).

    Judgments of gold and training items are left out: they measure workers, not systems.
    """
    rows = []
    for judgment in judgments:
        item = judgment.item
        if item.role != "task":
            continue
        meta = item.content["meta"]
        systems, labels = meta["speakers"], judgment.payload["labels"]
        better = judgment.payload["better"]
        for speaker, (system, label) in enumerate(zip(systems, labels, strict=True)):
            other = 1 - speaker
            rows.append(
                AnalysisRow(
                    judgment=judgment.pk,
                    worker=judgment.worker_id,
                    conversation=meta["conversation"],
                    speaker=speaker,
                    system=system,
                    opponent=systems[other],
                    exchanges=meta["exchanges"],
                    label=label,
                    opponent_label=labels[other],
                    features={f: _preference(v, speaker) for f, v in better.items()},
                )
            )
    return rows


KIND = SpotTheBotKind()
