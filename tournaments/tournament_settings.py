"""The settings of each tournament kind, declared once (pydantic): types, ranges, defaults.

`SpotTheBotSettings` and `ABSettings` hold the numbers and lists a researcher sets; the
forms take their ranges, defaults and help texts from here, and the forms and the API both
check a tournament's settings with `settings_errors`. The systems, the partner set and the
submission are chosen from the catalog by the forms, not declared here.
"""

from decimal import Decimal
from typing import Annotated, ClassVar

from pydantic import Field, field_validator

from annotation.kinds import get_kind
from annotation.kinds.base import ConfigInvalid
from annotation.kinds.spot_the_bot import SEGMENT_LENGTH_MAX
from evalhub.declared import Declared, DeclaredInvalid, check

SPOT_THE_BOT = get_kind("spot_the_bot")


def _kind_config_error(key: str, value) -> None:
    """The Spot The Bot task kind's own check of a config key, as a ValueError."""
    try:
        SPOT_THE_BOT.clean_config({key: value})
    except ConfigInvalid as invalid:
        raise ValueError(str(invalid)) from None


class SpotTheBotSettings(Declared):
    noun: ClassVar[str] = "Spot The Bot tournament setting"

    conversations_per_pair: int = Field(
        45, ge=1, le=1000, description="Conversations collected per pair of systems."
    )
    exchanges: int = Field(
        5,
        ge=1,
        le=SEGMENT_LENGTH_MAX,
        description="Exchanges to collect per conversation, after the seed exchange.",
    )
    segment_lengths: list[Annotated[int, Field(ge=1, le=SEGMENT_LENGTH_MAX)]] = Field(
        default_factory=lambda: [2, 3, 5],
        min_length=1,
        max_length=10,
        description=f"Exchanges per segment (each 1 to {SEGMENT_LENGTH_MAX}, 1 to 10 lengths).",
    )
    human_share: float = Field(
        0.1, ge=0.0, le=0.9, description="Share of human-human control segments among the items."
    )
    features: list[str] = Field(
        default_factory=lambda: ["sensibleness", "specificity", "fluency"],
        max_length=12,
        description="Qualities rated by preference; lowercase names.",
    )
    batch_size: int = Field(20, ge=1, le=200, description="Segments per batch (one sitting).")
    max_batches_per_worker: int = Field(3, ge=1, le=100, description="Batches one worker may do.")
    judgments_per_segment: int = Field(
        1, ge=1, le=20, description="Different workers who judge each segment."
    )
    show_seed: bool = Field(
        False,
        description="Show workers the seed exchange of collected conversations, marked as "
        "the opening given to both bots (never judged as theirs).",
    )

    @field_validator("segment_lengths", "features")
    @classmethod
    def _as_the_task_kind_wants(cls, value, info):
        _kind_config_error(info.field_name, value)
        return value


class ABSettings(Declared):
    noun: ClassVar[str] = "A/B tournament setting"

    judgments_per_prompt: int = Field(
        3, ge=1, le=20, description="Different workers judge each comparison this many times."
    )
    prompts_per_batch: int = Field(10, ge=1, le=100, description="Comparisons per batch.")
    reward_per_judgment: Decimal = Field(
        Decimal("0"),
        ge=0,
        le=100,
        decimal_places=3,
        strict=False,
        description="What a worker earns per judgment; the cost is shown before launch.",
    )


SCHEMAS = {"spot_the_bot": SpotTheBotSettings, "ab": ABSettings}


def settings_errors(kind: str, values: dict) -> dict[str, str]:
    """{field: message} for the given settings of a `kind` tournament; empty when fine.

    Keys of `values` that are not settings of the kind are ignored (the forms and the API
    pass every field); None stands for "not given" and takes the default."""
    schema = SCHEMAS[kind]
    given = {k: v for k, v in values.items() if k in schema.model_fields and v is not None}
    try:
        check(schema, given)
    except DeclaredInvalid as invalid:
        return dict(invalid.errors)
    return {}
