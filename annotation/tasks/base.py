"""What every annotation task kind provides. One module per kind implements it.

A kind owns: the shape of its items (`ItemSpec.content`), its campaign config, the partial
template that renders one item, the validation of a submitted form into a JSON payload,
gold scoring with feedback, and the plain export row of a judgment.
"""

from dataclasses import dataclass, field
from typing import Any

from django.http import QueryDict


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


class PayloadInvalid(Exception):
    """A submitted form that does not fit the schema: {field name: message}; "" is general."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{k or 'form'}: {v}" for k, v in errors.items()))


class ConfigInvalid(ValueError):
    pass


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

    def default_config(self) -> dict:
        return {}

    def build_from_conversations(self, conversations, config: dict, rng) -> list["ItemSpec"]:
        """Items from catalog Conversations (with speakers and turns prefetched).

        Kinds judged on whole conversations implement this; A/B builds from responses."""
        raise NotImplementedError(f"{self.label} items are not built from conversations.")

    def clean_config(self, config: dict | None) -> dict:
        """The campaign config with defaults filled in; raise ConfigInvalid when it is wrong."""
        merged = {**self.default_config(), **(config or {})}
        return merged

    def item_context(self, item, config: dict) -> dict:
        """What the template needs for one item. Must never include `item.gold`."""
        return {"content": item.content}

    def parse_payload(self, item, config: dict, data: QueryDict) -> dict:
        raise NotImplementedError

    def score_gold(self, item, payload: dict) -> GoldResult | None:
        return None

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

    def training_key(self, config: dict) -> str | None:
        """Qualification key when the kind supports training and screening."""
        return None

    def default_training_threshold(self, config: dict) -> int | None:
        return None


def one_choice(data: QueryDict, name: str, allowed: dict[str, Any], label: str) -> Any:
    """Read one radio-button answer, mapping the submitted string to its stored value."""
    value = data.get(name, "")
    if value == "":
        raise PayloadInvalid({name: f"Choose an answer for {label}."})
    if value not in allowed:
        raise PayloadInvalid({name: f"'{value}' is not a possible answer for {label}."})
    return allowed[value]


def collect_choices(data: QueryDict, fields: list[tuple[str, dict[str, Any], str]]) -> dict:
    """Read several radio groups at once, reporting every missing or bad one together."""
    values, errors = {}, {}
    for name, allowed, label in fields:
        try:
            values[name] = one_choice(data, name, allowed, label)
        except PayloadInvalid as invalid:
            errors.update(invalid.errors)
    if errors:
        raise PayloadInvalid(errors)
    return values
