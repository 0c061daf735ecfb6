"""ABC-Eval (Finch et al., 2023): binary behaviour labels on every bot turn of a conversation.

The 16 labels of the paper's Table 4 are split into 8 independent tasks of 1 to 4 labels
(`TASKS`); a campaign runs one task (config `{"behaviour_task": <key of TASKS>}`), because
the paper's pilots found that fewer labels per sitting gave much better agreement.

Items. One item per human-bot conversation: the bot is the one speaker whose `system` is
set, the other speaker is a person. Bot-bot, human-human and many-party conversations, and
conversations where the bot never speaks, are skipped and counted (`build_items`). The
content is every turn, the bot's marked, and `bot_turns`, the bot turns' positions in
order; `meta` (conversation id, system slug, bot speaker index) is never shown, so the
worker does not know which system they judge. `group_key` is "<conversation id>:<task>".

Page. The whole conversation; under every bot turn one checkbox per label of the task
(field `flag_<label code>_<turn position>`), with the label's definition as its title;
the definitions and one example each way are in the label guide above it. An unchecked
box sends nothing, so "no label anywhere" is a valid answer; to catch careless submits the
worker must tick `reviewed` ("I checked every bot turn").

Payload: `{"labels": {label: [0 | 1 per bot turn, in order]}}`, every label of the task.

Gold (`Item.gold`): `{"labels": {label: [0 | 1 ...]}, "explanations": {turn position: text}}`.
`score_gold` counts the bot turns where any label disagrees, as the paper's screening
does, with one feedback row per such turn. Training and screening key:
`abc_eval:<task>`; a worker qualifies with fewer mistaken turns than 2 (uninterpretable,
antisocial) or 3 (the other tasks) on the last training conversation.

Export (`export_row`), one JSON line per judgment:
`{"campaign", "conversation", "system", "task", "worker", "batch", "bot_turns",
"labels": {label: [0 | 1 per bot turn]}, "started_at_ms", "duration_ms"}`, where `system`
is the bot's slug, `worker` the worker's opaque public id, `batch` "<campaign>:<position>".
"""

from dataclasses import dataclass, replace
from typing import ClassVar

from django.utils.formats import number_format
from django.utils.translation import gettext, gettext_noop, ngettext
from pydantic import Field, field_validator

from evalhub.declared import Declared

from .base import (
    AnswerField,
    GoldResult,
    ItemSpec,
    PayloadInvalid,
    TaskKind,
    check_config,
    parse_answers,
)

BOT, USER = gettext_noop("Bot"), gettext_noop("User")
FIELD_PREFIX = "flag_"


@dataclass(frozen=True)
class Label:
    """A behaviour label. Its texts are English msgids (gettext_noop): the page shows them
    through `shown`, in its language; `name` is the stored key and never translated."""

    name: str
    heading: str
    definition: str
    yes: str
    no: str

    @property
    def code(self) -> str:
        """The label as it appears in form field names."""
        return self.name.replace(" ", "_").replace("-", "_")

    @property
    def title(self) -> str:
        return gettext(self.heading)

    def shown(self) -> dict:
        """The label's texts in the page's language, for the label guide (and a judge's
        prompt, which names the label by its stored key)."""
        return {
            "name": self.name,
            "title": self.title,
            "definition": gettext(self.definition),
            "yes": gettext(self.yes),
            "no": gettext(self.no),
        }


@dataclass(frozen=True)
class BehaviourTask:
    key: str
    heading: str  # an English msgid, shown in the page's language by `title`
    labels: tuple[str, ...]

    @property
    def title(self) -> str:
        return gettext(self.heading)


# Definitions are Table 4's; the examples are ours (a "yes" and a "no" case per label).
# Marked with gettext_noop: module constants stay English; the page translates them.
_ = gettext_noop
LABELS = {
    label.name: label
    for label in (
        Label(
            "uninterpretable",
            _("Uninterpretable"),
            _("It is difficult to understand the intended meaning of part or all of the response."),
            _(
                'User: "What did you do this weekend?" Bot: "Weekend the mountain I bicycle went of yes."'
            ),
            _('User: "What did you do this weekend?" Bot: "I went cycling in the mountains."'),
        ),
        Label(
            "antisocial",
            _("Antisocial"),
            _("The response is insulting, hateful, or excessively vulgar."),
            _('User: "I failed my driving test." Bot: "Only an idiot fails that test."'),
            _(
                'User: "I failed my driving test." Bot: "That is annoying. Many people pass the second time."'
            ),
        ),
        Label(
            "preference info",
            _("Preference info"),
            _("The response expresses the bot's preferences, wishes, or values."),
            _('Bot: "I much prefer rainy days to sunny ones."'),
            _('Bot: "Rain is expected tomorrow afternoon." (a fact, not a preference)'),
        ),
        Label(
            "life info",
            _("Life info"),
            _("The response shares information about the bot's life or experiences."),
            _('Bot: "I grew up by the sea and my brother taught me to sail."'),
            _('Bot: "Sailing takes a lot of practice to learn." (general, not about the bot)'),
        ),
        Label(
            "empathetic",
            _("Empathetic"),
            _(
                "The response shows an understanding and reacts appropriately to someone's emotions."
            ),
            _('User: "My cat died yesterday." Bot: "I am so sorry. Losing a pet is really hard."'),
            _(
                'User: "I am reading a book about trains." Bot: "Which railway is it about?" (no emotion to react to)'
            ),
        ),
        Label(
            "lack of empathy",
            _("Lack of empathy"),
            _("The bot misunderstands or reacts inappropriately to someone's emotions."),
            _('User: "My cat died yesterday." Bot: "Great! Now you have more free time."'),
            _('User: "My cat died yesterday." Bot: "I am so sorry to hear that."'),
        ),
        Label(
            "commonsense contradiction",
            _("Commonsense contradiction"),
            _("The response misunderstands or contradicts common knowledge."),
            _(
                'User: "I just had breakfast." Bot: "Nice, breakfast is the best way to end the day."'
            ),
            _(
                'User: "I just had breakfast." Bot: "Nice, a good breakfast keeps you going until lunch."'
            ),
        ),
        Label(
            "fact usage",
            _("Fact usage"),
            _("The response accurately incorporates encyclopedic or expert knowledge."),
            _(
                'User: "I would love to visit Japan." Bot: "Kyoto was its capital for over a thousand years."'
            ),
            _(
                'User: "I would love to visit Japan." Bot: "Me too, it sounds lovely!" (no knowledge used)'
            ),
        ),
        Label(
            "fact contradiction",
            _("Fact contradiction"),
            _(
                "The response hallucinates or inaccurately presents encyclopedic or expert knowledge."
            ),
            _('Bot: "Kyoto is the capital of Japan today."'),
            _('Bot: "Tokyo is the capital of Japan."'),
        ),
        Label(
            "self contradiction",
            _("Self contradiction"),
            _("The bot contradicts something it said earlier in the dialogue."),
            _('Earlier the bot said "I have two dogs"; now it says "I have never had a pet."'),
            _('Earlier the bot said "I have two dogs"; now it says "My dogs love the park."'),
        ),
        Label(
            "partner contradiction",
            _("Partner contradiction"),
            _(
                "The bot contradicts or misremembers something the user said earlier in the dialogue."
            ),
            _(
                'The user said "I live in Lisbon"; later the bot asks "How is the weather in Madrid, where you live?"'
            ),
            _(
                'The user said "I live in Lisbon"; later the bot asks "Is Lisbon warm this time of year?"'
            ),
        ),
        Label(
            "redundant",
            _("Redundant"),
            _(
                "The response inappropriately repeats information presented earlier in the dialogue."
            ),
            _(
                'The bot already said it is a teacher; unprompted, it says again "I work as a teacher, you know."'
            ),
            _(
                'User: "Sorry, what was your job again?" Bot: "I am a teacher." (repeating when asked is fine)'
            ),
        ),
        Label(
            "ignore",
            _("Ignore"),
            _("The response ignores what the user just said."),
            _('User: "I just got promoted at work!" Bot: "What do you do on weekends?"'),
            _('User: "I just got promoted at work!" Bot: "Congratulations! What is the new role?"'),
        ),
        Label(
            "irrelevant",
            _("Irrelevant"),
            _(
                "The response interrupts the current topic of discussion by presenting unrelated information."
            ),
            _(
                'While talking about last night\'s football final, the bot says "Penguins cannot fly."'
            ),
            _(
                'While talking about last night\'s football final, the bot says "That last goal was amazing."'
            ),
        ),
        Label(
            "follow-up",
            _("Follow-up"),
            _(
                "The response explores, elaborates on, or asks about the ideas shared in the previous turn."
            ),
            _('User: "I started learning the guitar." Bot: "Nice! Acoustic or electric?"'),
            _('User: "I started learning the guitar." Bot: "Cool. Seen any good films lately?"'),
        ),
        Label(
            "topic switch",
            _("Topic switch"),
            _("The response introduces a new topic of conversation."),
            _('User: "I started learning the guitar." Bot: "Cool. Seen any good films lately?"'),
            _('User: "I started learning the guitar." Bot: "Nice! Acoustic or electric?"'),
        ),
    )
}

# Table 4's row groups: the 8 independent annotation tasks.
TASKS = {
    task.key: task
    for task in (
        BehaviourTask("uninterpretable", _("Uninterpretable"), ("uninterpretable",)),
        BehaviourTask("antisocial", _("Antisocial"), ("antisocial",)),
        BehaviourTask(
            "preference_and_life_information",
            _("Preference and life information"),
            ("preference info", "life info"),
        ),
        BehaviourTask("empathy", _("Empathy"), ("empathetic", "lack of empathy")),
        BehaviourTask("commonsense", _("Commonsense"), ("commonsense contradiction",)),
        BehaviourTask("knowledge", _("Knowledge"), ("fact usage", "fact contradiction")),
        BehaviourTask(
            "consistency",
            _("Consistency"),
            ("self contradiction", "partner contradiction", "redundant"),
        ),
        BehaviourTask(
            "transitions", _("Transitions"), ("ignore", "irrelevant", "follow-up", "topic switch")
        ),
    )
}
# The paper's screening: fewer than 2 mistaken turns for these, fewer than 3 for the rest.
STRICT_TASKS = ("uninterpretable", "antisocial")
REVIEW = gettext_noop(
    "Tick “I checked every bot turn” once you have looked at each bot turn "
    "(an empty box means the label does not apply)."
)


class ABCEvalConfig(Declared):
    """An ABC-Eval campaign's config: which of the 8 behaviour tasks it runs."""

    noun: ClassVar[str] = "ABC-Eval config key"
    messages: ClassVar[dict[str, str]] = {
        "behaviour_task": f"Choose a behaviour_task: one of {', '.join(TASKS)}."
    }

    behaviour_task: str = Field(
        description=f"Required: the behaviour task, one of {', '.join(TASKS)}."
    )

    # Screening (annotation/training.py): the graded conversation's labels against gold,
    # label by label. Fewer mistaken turns than the threshold alone let a worker who ticks
    # nothing pass (every behaviour is rare); recall catches that, precision its opposite.
    screening_min_recall: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Per label with gold turns: the share of them the worker must tick.",
    )
    screening_min_precision: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Per label the worker ticked: the share of the ticks gold must agree with.",
    )
    training_conversations: int = Field(
        3,
        ge=1,
        le=20,
        description="Training conversations per attempt (graded on the last); a retry takes "
        "conversations the worker has not seen.",
    )

    @field_validator("behaviour_task")
    @classmethod
    def _known(cls, task: str) -> str:
        if task not in TASKS:
            raise ValueError(f"behaviour_task {task!r} is not one of {', '.join(TASKS)}.")
        return task


def clean_config(config: dict | None) -> dict:
    return check_config(ABCEvalConfig, config)


def human_bot_content(conversation) -> dict | None:
    """The turns of a one-person, one-system conversation with the bot's turns marked.

    `conversation` has speakers (with system) and turns prefetched. Returns None for any
    other conversation, or when the bot never speaks. Shared with the Likert kind.
    """
    speakers = list(conversation.speakers.all())
    bots = [s for s in speakers if s.system_id is not None]
    if len(speakers) != 2 or len(bots) != 1:
        return None
    bot = bots[0]
    turns = [
        {"position": t.position, "bot": t.speaker == bot.index, "text": t.text}
        for t in sorted(conversation.turns.all(), key=lambda t: t.position)
    ]
    bot_turns = [t["position"] for t in turns if t["bot"]]
    if not bot_turns:
        return None
    return {
        "turns": turns,
        "bot_turns": bot_turns,
        "meta": {
            "conversation": conversation.external_id,
            "system": bot.system.slug,
            "bot_speaker": bot.index,
        },
    }


def shown_turns(content: dict) -> list[dict]:
    """Turns as the page shows them: who speaks, and the bot turns numbered from 1."""
    rows, number = [], 0
    for turn in content["turns"]:
        row = {"position": turn["position"], "bot": turn["bot"], "text": turn["text"]}
        row["who"] = gettext(BOT) if turn["bot"] else gettext(USER)
        if turn["bot"]:
            number += 1
            row["number"] = number
        rows.append(row)
    return rows


def human_bot_items(conversations, *, extra: dict | None = None, group_suffix: str = ""):
    """One item per human-bot conversation (shared with the Likert kind); returns (specs,
    number of conversations skipped because they are not one person and one system)."""
    specs, skipped = [], 0
    for conversation in conversations:
        content = human_bot_content(conversation)
        if content is None:
            skipped += 1
            continue
        specs.append(
            ItemSpec(
                content={**content, **(extra or {})},
                group_key=conversation.external_id + group_suffix,
                conversation_id=conversation.pk,
            )
        )
    return specs, skipped


def build_items(conversations, config: dict) -> tuple[list[ItemSpec], int]:
    """One item per human-bot conversation; returns (specs, number of conversations skipped)."""
    task = clean_config(config)["behaviour_task"]
    return human_bot_items(conversations, extra={"task": task}, group_suffix=f":{task}")


def field_name(label: Label, position: int) -> str:
    return f"{FIELD_PREFIX}{label.code}_{position}"


def check_labels(content: dict, labels) -> dict[str, list[int]]:
    """Validate a `labels` mapping for an item: every label of its task, a 0 or 1 per bot turn.

    Used on payloads that arrive as JSON (imports, gold); raises PayloadInvalid.
    """
    names = TASKS[content["task"]].labels
    n = len(content["bot_turns"])
    if not isinstance(labels, dict):
        raise PayloadInvalid({"": "labels must map each label to a list of 0/1 flags."})
    problems = []
    unknown = sorted(set(labels) - set(names))
    if unknown:
        problems.append(f"unknown label {', '.join(map(repr, unknown))}")
    missing = [name for name in names if name not in labels]
    if missing:
        problems.append(f"missing label {', '.join(map(repr, missing))}")
    for name in names:
        if name in missing:
            continue
        flags = labels[name]
        if not isinstance(flags, list) or len(flags) != n:
            problems.append(f"{name!r} needs one flag per bot turn ({n})")
        elif not all(type(f) is int and f in (0, 1) for f in flags):
            problems.append(f"{name!r} flags must be 0 or 1")
    if problems:
        raise PayloadInvalid({"": "; ".join(problems) + "."})
    return {name: list(labels[name]) for name in names}


def with_gold(spec: ItemSpec, labels: dict, explanations: dict, role: str = "training") -> ItemSpec:
    """A built item turned into a gold or training item, its gold checked against its turns.

    `explanations` maps bot turn positions to the text shown when a worker disagrees there.
    """
    checked = check_labels(spec.content, labels)
    bot_turns = set(spec.content["bot_turns"])
    stray = sorted(str(p) for p in explanations if not str(p).isdigit() or int(p) not in bot_turns)
    if stray:
        raise PayloadInvalid({"": f"explanations for turns that are not bot turns: {stray}."})
    gold = {"labels": checked, "explanations": {str(p): text for p, text in explanations.items()}}
    return replace(spec, role=role, gold=gold)


def percent(share: float) -> str:
    """A share as a percentage in the page's language (German "62,5 %", Spanish "62,5 %")."""
    return gettext("%(number)s%%") % {"number": number_format(round(share * 100, 1))}


class ABCEvalKind(TaskKind):
    key = "abc_eval"
    label = "ABC-Eval behaviour labels"
    template = "annotation/kinds/abc_eval.html"
    config_schema = ABCEvalConfig
    # annotation.js: a current bot turn, outlined, whose boxes the digits tick.
    shortcuts = (
        ("j / k", gettext_noop("next / previous bot turn")),
        ("1, 2, …", gettext_noop("tick or untick that label of the current bot turn")),
        ("r", gettext_noop("I checked every bot turn")),
    )

    def default_config(self) -> dict:
        return {}  # behaviour_task has no default: the campaign must choose one

    def clean_config(self, config):
        return clean_config(config)

    def build_from_conversations(self, conversations, config, rng) -> list[ItemSpec]:
        return build_items(conversations, config)[0]

    def item_context(self, item, config):
        task = TASKS[item.content["task"]]
        labels = [LABELS[name] for name in task.labels]
        turns = shown_turns(item.content)
        for turn in turns:
            if turn["bot"]:
                turn["boxes"] = [
                    {
                        "field": field_name(label, turn["position"]),
                        # Lets the template find a re-submitted tick with `in`, in O(1).
                        "pair": (field_name(label, turn["position"]), "1"),
                        "name": label.title,
                        "definition": gettext(label.definition),
                    }
                    for label in labels
                ]
        return {"title": task.title, "labels": [label.shown() for label in labels], "turns": turns}

    def parse_payload(self, item, config, data):
        content = item.content
        labels = [LABELS[name] for name in TASKS[content["task"]].labels]
        by_code = {label.code: label.name for label in labels}
        bot_turns = set(content["bot_turns"])
        # An unticked box sends nothing: a flag's absence is its 0.
        flags = {
            field_name(label, position): AnswerField(
                {"0": 0, "1": 1}, missing=None, invalid=gettext("'{value}' is not 0 or 1")
            )
            for label in labels
            for position in content["bot_turns"]
        }
        review = gettext(REVIEW)
        fields = {"reviewed": AnswerField({"1": True}, missing=review, invalid=review), **flags}

        def stray_flags(keys):
            problems = []
            for key in keys:
                if not key.startswith(FIELD_PREFIX):
                    continue
                code, _, position = key[len(FIELD_PREFIX) :].rpartition("_")
                if code not in by_code:
                    problems.append(gettext("unknown label %(label)r") % {"label": code})
                elif not position.isdigit() or int(position) not in bot_turns:
                    problems.append(gettext("turn %(turn)r is not a bot turn") % {"turn": position})
            return "; ".join(problems)

        try:
            values = parse_answers(data, fields, stray_flags)
        except PayloadInvalid as invalid:
            # Boxes are not answered one by one: a tampered one is a problem of the form.
            errors = dict(invalid.errors)
            problems = [errors.pop(name) for name in flags if name in errors]
            problems += [errors.pop("")] if "" in errors else []
            if problems:
                errors[""] = gettext(
                    "The form sent answers this item does not have: %(problems)s."
                ) % {"problems": "; ".join(problems)}
            raise PayloadInvalid(errors) from None
        return {
            "labels": {
                label.name: [values[field_name(label, p)] or 0 for p in content["bot_turns"]]
                for label in labels
            }
        }

    def check_gold(self, content, gold):
        if "labels" not in gold:
            return []
        try:
            check_labels(content, gold["labels"])
        except PayloadInvalid as invalid:
            return list(invalid.errors.values())
        return []

    def score_gold(self, item, payload):
        if not item.gold or "labels" not in item.gold:
            return None
        gold, yours = item.gold["labels"], payload["labels"]
        names = TASKS[item.content["task"]].labels
        explanations = item.gold.get("explanations", {})
        texts = {t["position"]: t["text"] for t in item.content["turns"]}
        feedback = []
        for i, position in enumerate(item.content["bot_turns"]):
            mine = [name for name in names if yours[name][i]]
            right = [name for name in names if gold[name][i]]
            if mine != right:
                feedback.append(
                    {
                        "where": f"Bot turn {i + 1}",
                        "bot_turn": i + 1,
                        "field": str(position),
                        "quote": texts.get(position, ""),
                        "yours": mine,
                        "gold": right,
                        "explanation": explanations.get(str(position), ""),
                    }
                )
        return GoldResult(correct=not feedback, mistakes=len(feedback), feedback=feedback)

    def answer_text(self, value) -> str:
        """A list of labels (feedback's yours and gold) with the labels' titles."""
        if isinstance(value, list):
            titles = [LABELS[name].title if name in LABELS else str(name) for name in value]
            return super().answer_text(titles)
        return super().answer_text(value)

    def export_row(self, judgment):
        content = judgment.item.content
        meta = content["meta"]
        return {
            "campaign": judgment.campaign.slug,
            "conversation": meta["conversation"],
            "system": meta["system"],
            "task": content["task"],
            "worker": str(judgment.worker.public_id),
            "batch": f"{judgment.campaign.slug}:{judgment.assignment.batch.position}",
            "bot_turns": content["bot_turns"],
            "labels": judgment.payload["labels"],
            "started_at_ms": int(judgment.started_at.timestamp() * 1000),
            "duration_ms": round(judgment.seconds * 1000),
        }

    def csv_rows(self, judgment):
        # One line per bot turn with a 0/1 column per behaviour label of the task.
        row = self.export_row(judgment)
        bot_turns, labels = row.pop("bot_turns"), row.pop("labels")
        return [
            {**row, "turn": position, **{name: flags[i] for name, flags in labels.items()}}
            for i, position in enumerate(bot_turns)
        ]

    def training_key(self, config):
        return f"abc_eval:{clean_config(config)['behaviour_task']}"

    def default_training_threshold(self, config):
        return 2 if clean_config(config)["behaviour_task"] in STRICT_TASKS else 3

    def training_session_size(self, config):
        return clean_config(config)["training_conversations"]

    def screening_problems(self, item, payload, config) -> list[str]:
        """Per-label recall and precision of `payload` against the item's gold, below the
        config's thresholds, as messages ([]: the screen is passed)."""
        if not item.gold or "labels" not in item.gold:
            return []
        config = clean_config(config)
        min_recall, min_precision = (
            config["screening_min_recall"],
            config["screening_min_precision"],
        )
        problems = []
        for name in TASKS[item.content["task"]].labels:
            label_title = LABELS[name].title
            gold = item.gold["labels"][name]
            yours = payload["labels"][name]
            agreed = sum(1 for g, y in zip(gold, yours, strict=True) if g and y)
            expected, ticked = sum(1 for g in gold if g), sum(1 for y in yours if y)
            if expected and agreed / expected < min_recall:
                problems.append(
                    ngettext(
                        "%(label)s: you ticked %(agreed)s of the %(expected)s turn that shows it "
                        "(at least %(share)s needed).",
                        "%(label)s: you ticked %(agreed)s of the %(expected)s turns that show it "
                        "(at least %(share)s needed).",
                        expected,
                    )
                    % {
                        "label": label_title,
                        "agreed": agreed,
                        "expected": expected,
                        "share": percent(min_recall),
                    }
                )
            if ticked and agreed / ticked < min_precision:
                problems.append(
                    ngettext(
                        "%(label)s: %(wrong)s of your %(ticked)s tick is on turns that do not "
                        "show it (at most %(share)s allowed).",
                        "%(label)s: %(wrong)s of your %(ticked)s ticks are on turns that do not "
                        "show it (at most %(share)s allowed).",
                        ticked,
                    )
                    % {
                        "label": label_title,
                        "wrong": ticked - agreed,
                        "ticked": ticked,
                        "share": percent(1 - min_precision),
                    }
                )
        return problems


KIND = ABCEvalKind()
