"""What every annotation task kind provides. One module per kind implements it.

A kind owns: the shape of its items (`ItemSpec.content`), its campaign config (declared
by `config_schema`, a pydantic model: unknown keys, wrong types and out-of-range numbers
are refused), the partial template that renders one item, the validation of a submitted
form into a JSON payload (a Django form of `AnswerField`s, `parse_answers`, so each error
sits next to its field), gold scoring with feedback, and the plain export row of a judgment.
"""

from dataclasses import dataclass, field
from typing import Any, ClassVar

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import QueryDict
from django.utils.translation import get_language, gettext, gettext_noop

from evalhub.declared import Declared, DeclaredInvalid, check
from evalhub.errors import UserInputError, field_problems
from evalhub.nul_refusal import RefusesNul


@dataclass(frozen=True)
class ItemSpec:
    """An item before it is stored; the builders of each kind return these."""

    content: dict
    group_key: str = ""
    role: str = "task"
    gold: dict | None = None
    auto_payload: dict | None = None
    prompt_id: int | None = None
    response_a_id: int | None = None
    response_b_id: int | None = None
    conversation_id: int | None = None
    conversation_b_id: int | None = None
    segment_length: int | None = None
    # Every response the item shows when there are more than a and b (a k-way ranking):
    # stored as `Item.shown_responses`, so that their systems' owners never judge it.
    shown_response_ids: tuple[int, ...] = ()
    # The same for a ranking of whole conversations: `Item.shown_conversations`.
    shown_conversation_ids: tuple[int, ...] = ()


class PayloadInvalid(UserInputError):
    """A submitted form that does not fit the schema: {field name: message}; "" is general."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        summary = "; ".join(f"{k or 'form'}: {v}" for k, v in errors.items())
        super().__init__(field_problems(errors), summary=summary)


class ConfigInvalid(UserInputError, ValueError):
    pass


class NoConfig(Declared):
    """The config of a kind that has no settings: only `{}` is accepted."""

    noun: ClassVar[str] = "config key"


def check_config(schema: type[Declared], config: dict | None) -> dict:
    """`config` checked against a kind's schema, defaults filled in; ConfigInvalid if wrong."""
    try:
        return check(schema, config)
    except DeclaredInvalid as invalid:
        raise ConfigInvalid(str(invalid)) from None


@dataclass(frozen=True)
class GoldResult:
    """How a payload compares with the gold answer. `feedback` rows are shown to the worker
    only after submission: {"where", "field", "yours", "gold", "explanation"}."""

    correct: bool
    mistakes: int
    feedback: list[dict] = field(default_factory=list)


class TaskKind:
    key: str = ""
    label: str = ""
    template: str = ""
    # Keyboard shortcuts documented on the page; the template wires data-key attributes.
    shortcuts: tuple[tuple[str, str], ...] = ()
    # The declared config: its fields, types, ranges, defaults and descriptions.
    config_schema: type[Declared] = NoConfig
    # A live kind (chat) has the worker do something on their assignment before the item's
    # form: its page and answers depend on the assignment, not only on the item.
    live: bool = False
    # Whether the campaign form offers it: a kind whose campaigns another app makes (an
    # arena's crowd) is not.
    standalone: bool = True

    def page_elsewhere(self, assignment, item) -> str | None:
        """The page of a higher app where the worker does `item` (`serve_elsewhere`), or
        None when annotation's own item page shows it."""
        page = _PAGES_ELSEWHERE.get(self.key)
        return page(assignment, item) if page is not None else None

    def default_config(self) -> dict:
        return self.clean_config(None)

    def build_from_conversations(self, conversations, config: dict, rng) -> list["ItemSpec"]:
        """Items from catalog Conversations (with speakers and turns prefetched).

        Kinds judged on whole conversations implement this; A/B builds from responses."""
        raise NotImplementedError(f"{self.label} items are not built from conversations.")

    def clean_config(self, config: dict | None) -> dict:
        """The campaign config with defaults filled in; raise ConfigInvalid when it is wrong."""
        return check_config(self.config_schema, config)

    def item_context(self, item, config: dict) -> dict:
        """What the template needs for one item. Must never include `item.gold`."""
        return {"content": item.content}

    def parse_payload(self, item, config: dict, data: QueryDict) -> dict:
        raise NotImplementedError

    def assignment_context(self, assignment, item, config: dict) -> dict:
        """What the template needs on a worker's page; most kinds show the item alone."""
        return self.item_context(item, config)

    def parse_assignment_payload(self, assignment, item, config: dict, data: QueryDict) -> dict:
        """A worker's submitted form; most kinds judge the item alone."""
        return self.parse_payload(item, config, data)

    def score_gold(self, item, payload: dict) -> GoldResult | None:
        return None

    def answer_text(self, value) -> str:
        """A stored answer (in gold feedback) as the worker reads it."""
        if isinstance(value, list):
            return ", ".join(map(str, value)) or gettext("no label")
        return "—" if value is None else str(value)

    def check_gold(self, content: dict, gold: dict) -> list[str]:
        """What is wrong with an uploaded gold or training answer for an item of this
        content (unknown label, wrong number of turns, wrong speaker), as messages; checked
        at upload so that scoring never meets a malformed answer."""
        return []

    def export_row(self, judgment) -> dict[str, Any]:
        return {
            "campaign": judgment.campaign.slug,
            "item": judgment.item.position,
            "worker": str(judgment.worker.public_id),
            "batch": judgment.assignment.batch.position,
            "payload": judgment.payload,
            "started_at_ms": int(judgment.started_at.timestamp() * 1000),
            "duration_ms": judgment.client_duration_ms,
        }

    def csv_rows(self, judgment) -> list[dict[str, Any]]:
        """The export row as CSV lines; nested dicts become columns (annotation.export)."""
        return [self.export_row(judgment)]

    def training_key(self, config: dict) -> str | None:
        """Qualification key when the kind supports training and screening."""
        return None

    def default_training_threshold(self, config: dict) -> int | None:
        return None

    def training_session_size(self, config: dict) -> int | None:
        """Training items per attempt; None: all of the campaign's."""
        return None

    def screening_problems(self, item, payload: dict, config: dict) -> list[str]:
        """Why the graded training answer fails the kind's screen beyond the mistake count
        (e.g. ABC-Eval's per-label recall and precision); [] when it passes."""
        return []


# Pages of higher apps that serve a kind's items, by kind key: (assignment, item) -> URL.
_PAGES_ELSEWHERE: dict = {}


def serve_elsewhere(kind_key: str, page) -> None:
    """Let a higher app serve a kind's items on its own pages (the arenas app serves the
    `arena` kind's battles); annotation then hands the worker over to `page(assignment,
    item)` and never imports that app."""
    _PAGES_ELSEWHERE[kind_key] = page


class AnswerField(forms.Field):
    """One answer of a radio group or checkbox: the submitted string, mapped to the value
    stored in the payload. `missing` and `invalid` are the messages shown next to it
    (`invalid` may name the submitted text as {value})."""

    def __init__(self, allowed: dict[str, Any], *, missing: str | None, invalid: str):
        # required=False: `missing` decides, and None lets an absent answer through
        super().__init__(required=False)
        self.allowed, self.missing, self.invalid = allowed, missing, invalid

    def clean(self, value):
        if value in (None, ""):
            if self.missing is None:
                return None
            raise forms.ValidationError(self.missing, code="required")
        if value not in self.allowed:
            raise forms.ValidationError(self.invalid.replace("{value}", value), code="invalid")
        return self.allowed[value]


def choice_field(allowed: dict[str, Any], label: str) -> AnswerField:
    """A required radio group named `label` (in the page's language) in its messages."""
    return AnswerField(
        allowed,
        missing=gettext("Choose an answer for %(question)s.") % {"question": label},
        invalid=gettext("'{value}' is not a possible answer for %(question)s.")
        % {"question": label},
    )


def shown(text: str) -> str:
    """A text of ours that reaches the page through stored content or config (a built-in
    definition, a default speaker name), in the page's language: it is its own msgid, marked
    with gettext_noop where it is defined. A researcher's own text has no translation and
    is shown as written, like the instructions."""
    return gettext(text) if text else text


# Languages that write a noun capitalised inside a sentence.
CAPITALISED_NOUNS = ("de",)


def in_sentence(name: str) -> str:
    """A title ("Quality", "Calidad") as a message names it mid-sentence: lower case, except
    in a language that capitalises nouns ("Qualität")."""
    if (get_language() or "").split("-")[0] in CAPITALISED_NOUNS:
        return name
    return name.lower()


NOT_SHOWN = gettext_noop("This item is not shown to workers.")


class AnswerForm(RefusesNul, forms.Form):
    """The answer form of one item: its fields depend on the item and the config, so the
    kind passes them in. `unexpected(keys)` returns the message for submitted keys that
    are no field of the form (a tampered or stale page), or "" to let them be."""

    def __init__(self, data: QueryDict, fields: dict[str, forms.Field], unexpected=None):
        super().__init__(data)
        self.fields.update(fields)
        self.unexpected = unexpected

    def clean(self):
        cleaned = super().clean()
        if self.unexpected is not None:
            message = self.unexpected(sorted(k for k in self.data if k not in self.fields))
            if message:
                raise forms.ValidationError(message)
        return cleaned


def parse_answers(data: QueryDict, fields: dict[str, forms.Field], unexpected=None) -> dict:
    """The cleaned answers, or PayloadInvalid({field: message}) with every error at once;
    errors about the form as a whole sit under ""."""
    form = AnswerForm(data, fields, unexpected)
    if not form.is_valid():
        raise PayloadInvalid(
            {
                ("" if name == NON_FIELD_ERRORS else name): " ".join(messages)
                for name, messages in form.errors.items()
            }
        )
    return form.cleaned_data
