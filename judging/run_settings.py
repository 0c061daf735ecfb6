"""The numbers a researcher sets on a judge run, declared once (pydantic): the model's
validators and check constraints, the form and the API take their ranges from here."""

from typing import ClassVar

from pydantic import Field

from evalhub.declared import Declared


class JudgeRunSettings(Declared):
    noun: ClassVar[str] = "judge run setting"

    concurrency: int = Field(
        2, ge=1, le=16, description="Requests to the judge's endpoint in flight at once."
    )
    max_attempts: int = Field(
        3,
        ge=1,
        le=5,
        description="Requests per item before an answer that does not parse is recorded "
        "as failed (with the raw text).",
    )

    STORED: ClassVar[tuple[str, ...]] = ("concurrency", "max_attempts")
