"""Typed answers of the main resources. Each model names its component of the OpenAPI
schema (`schema_component`); the server's tests check that every field declared here is one
of that component's properties, so a renamed field fails there, not in a researcher's script.
Fields the server adds later are kept (extra="allow") and reachable as attributes.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    schema_component: ClassVar[str]


class System(Model):
    schema_component = "System"
    slug: str
    name: str
    owner: str | None = None
    description: str = ""
    is_baseline: bool = False
    visibility: str | None = None
    embargo_until: datetime | None = None
    created: datetime


class Submission(Model):
    schema_component = "Submission"
    id: str
    system: str
    prompt_set: str
    status: str | None = None
    format: str
    original_filename: str = ""
    baselines: list[str] = []
    metrics: dict[str, Any] | None = None
    error_report: Any = None
    warnings: Any = None
    created: datetime
    scored_at: datetime | None = None


class PromptSet(Model):
    schema_component = "PromptSet"
    slug: str
    name: str
    description: str = ""
    source: str = ""
    version: str = ""
    prompt_count: int
    created: datetime


class PromptSetDetail(PromptSet):
    schema_component = "PromptSetDetail"
    prompts: list[dict[str, Any]]


class Campaign(Model):
    schema_component = "Campaign"
    slug: str
    title: str
    task_kind: str | None = None
    status: str | None = None
    provider: str | None = None
    redundancy: int
    batch_size: int
    reward_per_batch: Decimal | None = None
    budget: Decimal | None = None
    owner: str | None = None
    created: datetime
    launched_at: datetime | None = None
    finished_at: datetime | None = None
    judgments: int
    judgments_needed: int
    start_url: str


class CampaignDetail(Campaign):
    schema_component = "CampaignDetail"
    instructions: str = ""
    task_config: Any = None


class Progress(Model):
    schema_component = "Progress"
    status: str
    items_done: int
    items_needed: int
    percent_done: float
    judgments: int
    judgments_needed: int
    cost: Decimal


class LaunchRequest(Model):
    schema_component = "LaunchApproval"
    campaign: str
    provider: str
    platform_sandbox: bool
    reward_per_batch: Decimal
    places: int
    state: str
    requested_by: str | None = None
    requested_at: datetime
    decided_by: str | None = None
    decided_at: datetime | None = None
    reason: str = ""
    campaign_status: str


class Judgment(Model):
    schema_component = "Judgment"
    id: int
    campaign: str
    item: int
    worker: str | None = None
    payload: Any = None
    submitted_at: datetime | None = None
    gold_correct: bool | None = None


class Tournament(Model):
    schema_component = "Tournament"
    slug: str
    name: str
    kind: str
    status: str | None = None
    owner: str | None = None
    published: bool = False
    campaign: str | None = None
    systems: list[str] = []
    created: datetime


class AnalysisRun(Model):
    schema_component = "AnalysisRun"
    id: int
    tournament: str | None = None
    campaign: str | None = None
    status: str | None = None
    progress: str = ""
    parameters: Any = None
    created: datetime
    finished_at: datetime | None = None
    error: str = ""


class AnalysisRunDetail(AnalysisRun):
    schema_component = "AnalysisRunDetail"
    result: Any = None


class Judge(Model):
    schema_component = "Judge"
    slug: str
    name: str
    owner: str | None = None
    # The judge's own endpoint (ModelEndpoint: no system, its auth_token never returned).
    endpoint: dict[str, Any]
    model_name: str = ""
    created: datetime


class Rubric(Model):
    schema_component = "Rubric"
    id: int
    name: str
    task_kind: str
    instructions: str


class JudgeRun(Model):
    schema_component = "Run"
    id: int
    judge: str
    rubric: int
    campaign: str | None = None
    arena: str | None = None
    status: str
    items_total: int
    items_done: int


class JudgeRunProgress(Model):
    schema_component = "JudgeRunProgress"
    id: int
    status: str
    items_total: int
    items_done: int
    items_failed: int
    items_skipped: int
    percent: int
    last_error: str = ""


class ApiToken(Model):
    schema_component = "ApiToken"
    name: str
    starts_with: str
    created: datetime
    expiry: datetime | None = None
    last_used: datetime | None = None
    current: bool


class NewToken(Model):
    """The token itself is in this answer and nowhere else, ever."""

    schema_component = "NewToken"
    token: str
    name: str
    expiry: datetime | None = None


MODELS: tuple[type[Model], ...] = (
    System,
    Submission,
    PromptSet,
    PromptSetDetail,
    Campaign,
    CampaignDetail,
    Progress,
    LaunchRequest,
    Judgment,
    Tournament,
    AnalysisRun,
    AnalysisRunDetail,
    Judge,
    Rubric,
    JudgeRun,
    JudgeRunProgress,
    ApiToken,
    NewToken,
)
