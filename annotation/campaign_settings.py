"""A campaign's settings, declared once (pydantic): types, ranges, defaults and help.

The campaign form takes each setting's range and help text from `CampaignSettings` and
checks the settings with `settings_errors`; the task kind's own config is declared by the
kind (`TaskKind.config_schema`).
"""

from decimal import Decimal
from typing import ClassVar

from pydantic import Field

from evalhub.declared import Declared, DeclaredInvalid, check


class CampaignSettings(Declared):
    noun: ClassVar[str] = "campaign setting"
    # The settings a Campaign row stores (gold_per_batch is used once, when packing), each
    # with the same range as a validator and a database check (annotation/models.py).
    STORED: ClassVar[tuple[str, ...]] = (
        "redundancy",
        "batch_size",
        "reward_per_batch",
        "max_batches_per_worker",
        "time_limit_minutes",
        "training_threshold",
    )

    redundancy: int = Field(3, ge=1, le=50, description="Judgments wanted per item.")
    batch_size: int = Field(10, ge=1, le=200, description="Items per batch (one sitting).")
    reward_per_batch: Decimal = Field(
        Decimal("0"),
        ge=0,
        le=10000,
        decimal_places=2,
        strict=False,
        description="Paid for each submitted batch, in the provider's currency.",
    )
    max_batches_per_worker: int = Field(3, ge=1, le=1000, description="Batches one worker may do.")
    time_limit_minutes: int = Field(
        60, ge=1, le=1440, description="An assignment not submitted in this time expires."
    )
    gold_per_batch: int = Field(
        1, ge=0, le=20, description="Checks mixed into every batch when there are gold items."
    )
    training_threshold: int | None = Field(
        None,
        ge=1,
        le=100,
        description="Qualify with fewer mistaken turns than this; empty: the task kind's default.",
    )


def settings_errors(values: dict) -> dict[str, str]:
    """{field: message} for the given campaign settings; None means "not given"."""
    fields = CampaignSettings.model_fields
    given = {k: v for k, v in values.items() if k in fields and v is not None}
    try:
        check(CampaignSettings, given)
    except DeclaredInvalid as invalid:
        return dict(invalid.errors)
    return {}
