"""What a campaign's `provider_config` may hold, declared per crowd provider (pydantic).

The platform options a campaign sets (Prolific's devices, MTurk's qualifications) and the
ids a provider remembers once it has created them on the platform (a completion code, a
qualification type, a block list) live in one JSON field; each provider's keys, types,
ranges and defaults are declared here once. `Campaign.clean` checks the field against the
campaign's provider (the admin form), and the providers read it through `provider_config`,
defaults filled in. A module of its own, beside `campaign_settings`, so that the models can
check a config without importing the providers (which import the models).
"""

from typing import ClassVar, Literal

from pydantic import Field

from evalhub.declared import Declared, check

PlatformId = Field(None, min_length=1, max_length=200)


class LocalConfig(Declared):
    """The shared link keeps nothing of its own."""

    noun: ClassVar[str] = "link provider setting"


class ProlificConfig(Declared):
    noun: ClassVar[str] = "Prolific setting"

    description: str | None = Field(
        None, max_length=5000, description="The study's description (else the instructions)."
    )
    currency: Literal["GBP", "USD"] = Field("GBP", description="The account's currency.")
    minutes_per_batch: int | None = Field(
        None, ge=1, le=600, description="Estimated minutes per batch (else measured or guessed)."
    )
    device_compatibility: list[Literal["desktop", "tablet", "mobile"]] = Field(
        default_factory=lambda: ["desktop"], description="Devices participants may use."
    )
    auto_approve_after_hours: int | None = Field(
        None, ge=1, le=720, description="Approve submissions left unreviewed this long."
    )
    project_id: str | None = Field(None, max_length=200, description="The Prolific project.")
    # Remembered by the provider once made on the platform.
    completion_code: str | None = Field(None, min_length=1, max_length=100)
    block_group_id: str | None = PlatformId


class MTurkConfig(Declared):
    noun: ClassVar[str] = "MTurk setting"

    description: str | None = Field(None, max_length=2000, description="The HIT's description.")
    keywords: str = Field(
        "chatbot, evaluation, dialogue", max_length=1000, description="The HIT's keywords."
    )
    min_approval_rate: int = Field(
        95, ge=0, le=100, description="Lowest approval rate (%) a worker needs."
    )
    min_approved_hits: int = Field(
        100, ge=0, le=1_000_000, description="Fewest approved HITs a worker needs."
    )
    locales: list[str] = Field(
        default_factory=list, max_length=50, description="Countries (ISO codes) allowed."
    )
    require_training_qualification: bool = Field(
        False, description="Only workers who passed this campaign's training."
    )
    lifetime_seconds: int = Field(
        7 * 24 * 3600, ge=60, le=365 * 24 * 3600, description="How long the HITs stay listed."
    )
    auto_approval_seconds: int = Field(
        3 * 24 * 3600, ge=0, le=30 * 24 * 3600, description="Approve after this many seconds."
    )
    frame_height: int = Field(0, ge=0, le=10_000, description="The task frame's height (0: auto).")
    # Remembered by the provider once made on the platform.
    training_qualification_type_id: str | None = PlatformId
    block_qualification_type_id: str | None = PlatformId


SCHEMAS: dict[str, type[Declared]] = {
    "local": LocalConfig,
    "prolific": ProlificConfig,
    "mturk": MTurkConfig,
}


def provider_config(provider: str, stored: dict | None) -> dict:
    """`stored` checked against `provider`'s schema, defaults filled in. Raises
    DeclaredInvalid naming each wrong key."""
    return check(SCHEMAS.get(provider, LocalConfig), stored or {})
