"""Spot The Bot (Deriu et al., 2020): is each speaker of a conversation segment a human or a bot?

Items. A segment is the first k exchanges of a two-speaker conversation; exchange i is
turns 2i and 2i+1 (the interchange format's rule). A collected conversation's seed exchange
(`Conversation.seed_turns`) is not one of them: it is the opening given to both speakers,
so a segment of k exchanges holds k turns of each speaker ("each dialog system produced k
outputs"). With `show_seed` the item carries the opening (`content["seed"]`) and the page
shows it apart, as the opening given to both speakers, which neither wrote; the human-human
controls then show their own first exchange that way, and their segments count the
exchanges after it, so that controls and bot conversations look alike. `build_items` makes one item per
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
- `show_seed`: show the opening (above), default off;
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

import re
from typing import Annotated, Any, ClassVar, NamedTuple

from django.utils.translation import gettext, gettext_noop
from pydantic import Field, field_validator, model_validator

from evalhub.declared import Declared

from .base import (
    ConfigInvalid,
    GoldResult,
    ItemSpec,
    TaskKind,
    check_config,
    choice_field,
    in_sentence,
    parse_answers,
    shown,
)

LABELS = ("human", "bot", "unsure")
HUMAN = "human"
FEATURE_DEFINITIONS = {
    "sensibleness": gettext_noop("Says things that make sense in the context of the conversation."),
    "specificity": gettext_noop(
        "Gives answers specific to what was said rather than vague, generic replies."
    ),
    "fluency": gettext_noop("Writes fluent, grammatically correct sentences that read naturally."),
}
# The built-in features' labels as `_feature_label` makes them, for the translation catalog.
BUILT_IN_LABELS = (
    gettext_noop("Sensibleness"),
    gettext_noop("Specificity"),
    gettext_noop("Fluency"),
)
# Feature names become form field names and JSON keys.
FEATURE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
NO_DIFFERENCE = "none"


SEGMENT_LENGTH_MAX = 50
LENGTHS_MESSAGE = (
    "segment_lengths must be a list of distinct whole numbers of at least 1 "
    f"(at most {SEGMENT_LENGTH_MAX}, and at most 10 of them)."
)


class SpotTheBotConfig(Declared):
    """A Spot The Bot campaign's config."""

    noun: ClassVar[str] = "Spot The Bot config key"
    messages: ClassVar[dict[str, str]] = {
        "segment_lengths": LENGTHS_MESSAGE,
        "features": "features must be a list of distinct names (at most 12).",
        "speaker_names": "speaker_names must be two different, non-empty names.",
        "gold_conversations": "gold_conversations must be a list of conversation ids.",
        "feature_definitions": "feature_definitions must map feature names to sentences.",
    }

    segment_lengths: list[Annotated[int, Field(ge=1, le=SEGMENT_LENGTH_MAX)]] = Field(
        default_factory=lambda: [2, 3, 5],
        min_length=1,
        max_length=10,
        description="Exchanges per segment; one item per conversation and length. "
        f"Each from 1 to {SEGMENT_LENGTH_MAX}, 1 to 10 lengths.",
    )
    features: list[str] = Field(
        default_factory=lambda: ["sensibleness", "specificity", "fluency"],
        max_length=12,
        description="Qualities rated by preference: lowercase names (letters, digits, _).",
    )
    feature_definitions: dict[str, str] = Field(
        default_factory=dict,
        description="One-sentence definitions shown on the page, adding to or overriding "
        "the built-in ones; every feature needs one.",
    )
    speaker_names: list[str] = Field(
        default_factory=lambda: [gettext_noop("Speaker 1"), gettext_noop("Speaker 2")],
        min_length=2,
        max_length=2,
        description="The two neutral names the page gives the speakers.",
    )
    show_seed: bool = Field(
        False,
        description="Show the opening given to both speakers (a collected conversation's "
        "seed exchange; a human-human control's first exchange), marked as such.",
    )
    gold_conversations: list[str] = Field(
        default_factory=list,
        description="External ids of conversations used as gold checks (their truth is known).",
    )

    @field_validator("segment_lengths")
    @classmethod
    def _distinct_lengths(cls, lengths: list[int]) -> list[int]:
        if len(set(lengths)) != len(lengths):
            raise ValueError(LENGTHS_MESSAGE)
        return lengths

    @field_validator("features")
    @classmethod
    def _feature_names(cls, features: list[str]) -> list[str]:
        if len(set(features)) != len(features):
            raise ValueError("features must be a list of distinct names.")
        for name in features:
            if not FEATURE_NAME.match(name):
                raise ValueError(
                    f"Feature name {name!r}: use lowercase letters, digits and _ (at most 40)."
                )
        return features

    @field_validator("speaker_names")
    @classmethod
    def _two_names(cls, names: list[str]) -> list[str]:
        if not all(n.strip() for n in names) or names[0] == names[1]:
            raise ValueError("speaker_names must be two different, non-empty names.")
        return names

    @model_validator(mode="after")
    def _every_feature_defined(self):
        definitions = {**FEATURE_DEFINITIONS, **self.feature_definitions}
        missing = [name for name in self.features if not definitions.get(name, "").strip()]
        if missing:
            raise ValueError(f"Give a one-sentence definition for: {', '.join(missing)}.")
        self.feature_definitions = {name: definitions[name] for name in self.features}
        return self


def clean_config(config: dict | None) -> dict:
    """The config with defaults filled in and `feature_definitions` covering every feature."""
    return check_config(SpotTheBotConfig, config)


# The defaults, for readers that need one of them (the schema above is where they are set).
DEFAULT_CONFIG = clean_config(None)


def _speakers(conversation) -> list[str]:
    """The system slug of each speaker, "human" for a person, in speaker-index order."""
    speakers = sorted(conversation.speakers.all(), key=lambda s: s.index)
    if [s.index for s in speakers] != [0, 1]:
        raise ConfigInvalid(
            f"Spot The Bot needs two speakers (indices 0 and 1); conversation "
            f"{conversation.external_id} has {len(speakers)}."
        )
    return [s.system.slug if s.system_id else HUMAN for s in speakers]


def _segment(conversation, turns, speakers: list[str], k: int, names: list[str], seed) -> dict:
    content = {
        "speakers": list(names),
        "turns": [{"speaker": t.speaker, "text": t.text} for t in turns[: 2 * k]],
        "meta": {"conversation": conversation.external_id, "speakers": speakers, "exchanges": k},
    }
    if seed:
        content["seed"] = seed
    return content


def _opening(conversation, turns, speakers: list[str], show: bool):
    """(the opening to show, the turns after it): a stored seed is never a turn; with
    `show`, a human-human conversation's first exchange becomes its opening too."""
    seed = [
        {"speaker": t["speaker"], "text": t["text"]}
        for t in getattr(conversation, "seed_turns", None) or []
    ]
    if not seed and show and all(s == HUMAN for s in speakers) and len(turns) >= 2:
        seed = [{"speaker": t.speaker, "text": t.text} for t in turns[:2]]
        turns = turns[2:]
    return (seed if show else []), turns


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
        seed, turns = _opening(conversation, turns, speakers, config["show_seed"])
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
                    content=_segment(conversation, turns, speakers, k, names, seed),
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
                    content=_segment(conversation, turns, speakers, k, names, seed),
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
    """A feature's name as the page shows it: a built-in one translated (kinds.base.shown)."""
    return shown(name.replace("_", " ").capitalize())


class SpotTheBotKind(TaskKind):
    key = "spot_the_bot"
    label = "Spot The Bot"
    template = "annotation/kinds/spot_the_bot.html"
    shortcuts = (
        ("h", gettext_noop("human")),
        ("b", gettext_noop("bot")),
        ("u", gettext_noop("unsure")),
        ("1", gettext_noop("first speaker better")),
        ("2", gettext_noop("second speaker better")),
        ("3", gettext_noop("no difference")),
    )

    config_schema = SpotTheBotConfig

    def clean_config(self, config):
        return clean_config(config)

    def build_from_conversations(self, conversations, config, rng) -> list[ItemSpec]:
        return build_items(conversations, config, rng)[0]

    def item_context(self, item, config):
        content = item.content
        names = [shown(name) for name in content["speakers"]]
        speakers = [
            {
                "name": name,
                "field": f"label_{index}",
                "options": [
                    {"value": "human", "text": gettext("Human"), "key": "h"},
                    {"value": "bot", "text": gettext("Bot"), "key": "b"},
                    {"value": "unsure", "text": gettext("Unsure"), "key": "u"},
                ],
            }
            for index, name in enumerate(names)
        ]
        better_options = [
            {"value": str(index), "text": name, "key": str(index + 1)}
            for index, name in enumerate(names)
        ] + [{"value": NO_DIFFERENCE, "text": gettext("No difference"), "key": str(len(names) + 1)}]
        features = [
            {
                "name": name,
                "label": _feature_label(name),
                "definition": shown(config["feature_definitions"][name]),
                "field": f"better_{name}",
                "options": better_options,
            }
            for name in config["features"]
        ]
        turns = [
            {"speaker": t["speaker"], "name": names[t["speaker"]], "text": t["text"]}
            for t in content["turns"]
        ]
        # The opening neither speaker wrote (shown only when the campaign says so).
        seed = [
            {"speaker": t["speaker"], "name": names[t["speaker"]], "text": t["text"]}
            for t in content.get("seed", [])
        ]
        return {"turns": turns, "seed": seed, "speakers": speakers, "features": features}

    def parse_payload(self, item, config, data):
        names = [shown(name) for name in item.content["speakers"]]
        better_allowed: dict[str, Any] = {str(i): i for i in range(len(names))}
        better_allowed[NO_DIFFERENCE] = None
        fields = {
            f"label_{i}": choice_field({v: v for v in LABELS}, name) for i, name in enumerate(names)
        }
        fields |= {
            f"better_{name}": choice_field(better_allowed, in_sentence(_feature_label(name)))
            for name in config["features"]
        }

        def unknown_features(keys):
            unknown = [k[len("better_") :] for k in keys if k.startswith("better_")]
            if not unknown:
                return ""
            return gettext("Unknown feature: %(names)s.") % {"names": ", ".join(unknown)}

        values = parse_answers(data, fields, unknown_features)
        return {
            "labels": [values[f"label_{i}"] for i in range(len(names))],
            "better": {name: values[f"better_{name}"] for name in config["features"]},
        }

    def check_gold(self, content, gold):
        labels = gold.get("labels")
        if labels is None:
            return []
        speakers = content["speakers"]
        if not isinstance(labels, list) or len(labels) != len(speakers):
            return [f"'labels' must hold one label per speaker ({len(speakers)})."]
        return [
            f"the label of {speakers[i]} must be one of {', '.join(LABELS)}, not {label!r}."
            for i, label in enumerate(labels)
            if label not in LABELS
        ]

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

    def csv_rows(self, judgment):
        # A label per speaker (label_1, label_2, ...) and a column per feature naming the
        # better speaker by the same number (better_<feature>), empty for "no difference".
        row = self.export_row(judgment)
        labels = row.pop("labels")
        better = row.pop("better")
        row.update({f"label_{i}": label for i, label in enumerate(labels, start=1)})
        row["better"] = {f: None if who is None else who + 1 for f, who in better.items()}
        return [row]


class AnalysisRow(NamedTuple):
    """One speaker as one judgment saw it. `features` maps a feature to +1 (this speaker
    did better), 0 (no difference) or -1 (the other speaker did better). A tuple, so that
    the rows of a whole study are cheap to make and transpose into columns."""

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
