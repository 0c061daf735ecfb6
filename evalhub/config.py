"""Every environment variable EvalHub reads, declared once: type, range, default, meaning.

`evalhub/settings.py` reads its values from `load()` and nowhere else; no other module reads
the environment for a setting (tests/evalhub/test_config.py checks both). A bad value stops
start-up with one line per variable naming it, what it accepts and what it got. The settings
reference of the documentation is `reference_markdown()`, rendered from this schema by the
MkDocs hook (docs/hooks.py), so it cannot drift from the code.

It imports no Django itself (the documentation build renders the reference from it), and
`python -m evalhub.config` prints the reference.
"""

from __future__ import annotations

import base64
import os
from typing import Annotated, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from evalhub.outbound_policy import parse_allow_list

from . import limits

__all__ = ["ConfigError", "Settings", "group_table", "load", "reference_markdown"]

CommaList = Annotated[list[str], NoDecode]

# Settings whose values a start-up error never repeats.
SECRETS = {
    "SECRET_KEY",
    "EVALHUB_SECRET_KEYS",
    "EVALHUB_PROLIFIC_TOKEN",
    "EVALHUB_PROLIFIC_HOOK_SECRET",
}

# The groups of the reference, in the order the page shows them.
GROUPS = {
    "core": "Core: the embedded mode or production",
    "database": "Database, cache and files",
    "security": "HTTPS, logins and rate limits",
    "celery": "Background work (Celery)",
    "limits": "Sizes and counts",
    "quotas": "Quotas and API rates",
    "endpoints": "Model endpoints, chat and judges",
    "webhooks": "Webhooks",
    "crowd": "Crowd platforms",
}


def setting(default, description: str, group: str, **constraints):
    """A field of the schema: `description` is the reference's text (what it does and when
    to change it), `group` its section of the reference."""
    if group not in GROUPS:
        raise ValueError(f"unknown group {group!r}")
    return Field(
        default,
        description=description,
        json_schema_extra={"group": group},
        **constraints,
    )


class ConfigError(ValueError):
    """The environment has values the schema refuses; `problems` has one line per variable."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__(
            "EvalHub's environment has invalid settings:\n"
            + "\n".join(f"- {problem}" for problem in problems)
        )


class Settings(BaseSettings):
    """The environment, typed. Names are the variables' names, exactly (case-sensitive); an
    empty value counts as unset, so `FOO=` keeps the default."""

    model_config = SettingsConfigDict(
        case_sensitive=True, env_ignore_empty=True, extra="ignore", validate_default=True
    )

    # Core -------------------------------------------------------------------------------
    DEBUG: bool = setting(
        False,
        "Development mode: Django's debug pages, a secret key generated into `.secret_key`, "
        "no HTTPS redirects. `make run` and the tests set it; never in production.",
        "core",
    )
    SECRET_KEY: str = setting(
        "",
        "Django's signing key: a long random string. Required when DEBUG is off; with DEBUG "
        "on and none set, one is generated once into `.secret_key`.",
        "core",
    )
    ALLOWED_HOSTS: CommaList = setting(
        ["127.0.0.1", "localhost", "testserver"],
        "Host names this site answers to, comma-separated (Django's ALLOWED_HOSTS).",
        "core",
    )
    CSRF_TRUSTED_ORIGINS: CommaList = setting(
        [],
        "Origins (https://host) trusted for form posts behind a proxy, comma-separated.",
        "core",
    )
    EVALHUB_LOG_LEVEL: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = setting(
        "INFO", "The level of the console log.", "core"
    )
    EMAIL_BACKEND: str = setting(
        "django.core.mail.backends.console.EmailBackend",
        "Django's e-mail backend for notices; the console one prints them (embedded mode).",
        "core",
    )
    DEFAULT_FROM_EMAIL: str = setting(
        "evalhub@localhost", "The sender address of EvalHub's e-mails.", "core"
    )

    # Database, cache and files ------------------------------------------------------------
    DATABASE_URL: str = setting(
        "",
        "The database, as a URL (postgres://user@host:5432/name). Unset: the SQLite file "
        "`db.sqlite3` beside the project (embedded mode).",
        "database",
    )
    EVALHUB_CONN_MAX_AGE: int = setting(
        0,
        "Seconds a database connection is kept for the next request (0: one per request). "
        "Health-checked before reuse.",
        "database",
        ge=0,
        le=3600,
    )
    EVALHUB_PG_PREPARE: bool = setting(
        True,
        "Prepare the crowdworker pages' hot statements on PostgreSQL. Turn off behind a "
        "transaction-pooling PgBouncer.",
        "database",
    )
    CACHE_URL: str = setting(
        "",
        "Redis for the cache: copies of the sessions (kept in the database) and the rate-limit "
        "counters shared by every web process (redis://host:6379/1). Unset: per-process "
        "memory (embedded mode). What each use does while Redis is down: docs/production.md.",
        "database",
    )
    EVALHUB_MEDIA_ROOT: str = setting(
        "",
        "Where uploaded files are stored. Unset: `media/` beside the project.",
        "database",
    )

    # HTTPS, logins and rate limits ------------------------------------------------------------
    EVALHUB_HSTS_SECONDS: int = setting(
        31_536_000,
        "Strict-Transport-Security max-age when DEBUG is off.",
        "security",
        ge=0,
        le=63_072_000,
    )
    EVALHUB_HSTS_PRELOAD: bool = setting(
        True, "Ask browsers to preload HSTS for the domain (DEBUG off).", "security"
    )
    EVALHUB_SSL_REDIRECT: bool = setting(
        True,
        "Redirect plain HTTP to HTTPS (DEBUG off). Turn off only where a proxy already does.",
        "security",
    )
    EVALHUB_TRUSTED_PROXY_COUNT: int = setting(
        0,
        "Reverse proxies in front of EvalHub that append the address they see to "
        "X-Forwarded-For (an HTTPS proxy: 1). The client's address, for login lockouts and "
        "every per-address limit, is the one that many entries from the right of "
        "X-Forwarded-For followed by the connection's address (`evalhub/client_address.py`). "
        "0: the connection's address, and X-Forwarded-For is ignored. Set it to exactly the "
        "proxies there are: one too many lets a client choose its address by sending the "
        "header, one too few gives every client the proxy's address.",
        "security",
        ge=0,
        le=5,
    )
    EVALHUB_LOGIN_FAILURE_LIMIT: int = setting(
        5,
        "Failed logins for one username from one client address before that pair is locked "
        "out (other accounts, and the same account from elsewhere, can still log in).",
        "security",
        ge=1,
        le=1000,
    )
    EVALHUB_LOGIN_COOLOFF_HOURS: float = setting(
        1.0, "Hours a login lockout lasts.", "security", gt=0, le=720
    )
    EVALHUB_SECRET_KEYS: CommaList = setting(
        [],
        "Fernet keys that encrypt the secrets EvalHub stores (endpoints' tokens and API keys), "
        "comma-separated: the first encrypts, every one decrypts. To rotate, put a new key "
        "first, run `manage.py rotate_secrets`, then drop the old one. Make a key with `python "
        "-c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'`. "
        "Required when DEBUG is off; with DEBUG on and none set, one is derived from SECRET_KEY.",
        "security",
    )
    EVALHUB_API_TOKEN_DAYS: int = setting(
        90,
        "Days an API token works after its creation; then its owner makes a new one.",
        "security",
        ge=1,
        le=3650,
    )
    EVALHUB_API_TOKENS_PER_USER: int = setting(
        20, "Unexpired API tokens one account may hold at once.", "security", ge=1, le=1000
    )
    EVALHUB_SIGNUPS_PER_HOUR: int = setting(
        5, "Sign-ups per client address and hour.", "security", ge=0, le=1_000_000
    )
    EVALHUB_SEED_UPLOADS_PER_HOUR: int = setting(
        20, "Seed-conversation uploads per researcher and hour.", "security", ge=0, le=1_000_000
    )
    EVALHUB_NEW_WORKERS_PER_ADDRESS_PER_HOUR: int = setting(
        10,
        "New crowd identities per client address and hour, over all campaigns' start links.",
        "security",
        ge=0,
        le=1_000_000,
    )
    EVALHUB_NEW_WORKERS_PER_CAMPAIGN_PER_MINUTE: int = setting(
        60,
        "New crowd identities per campaign and minute, over all addresses.",
        "security",
        ge=0,
        le=1_000_000,
    )

    # Background work -----------------------------------------------------------------------
    CELERY_BROKER_URL: str = setting(
        "",
        "Celery's broker (redis://host:6379/0). `filesystem://`: messages are files in "
        "EVALHUB_EMBEDDED_BROKER_DIR, for `make run`'s worker (no service needed). Unset: tasks "
        "run eagerly inside the request (the tests, and a bare `manage.py runserver`).",
        "celery",
    )
    EVALHUB_EMBEDDED_BROKER_DIR: str = setting(
        "",
        "Where the `filesystem://` broker keeps its messages (default: .broker/ in the "
        "project). Only for one machine: the web process and its worker share the folder.",
        "celery",
    )
    CELERY_RESULT_BACKEND: str = setting(
        "", "Celery's result backend; EvalHub needs none (results live in the database).", "celery"
    )
    EVALHUB_WORKER_MAX_TASKS_PER_CHILD: int = setting(
        100,
        "Tasks a worker child runs before it is replaced, so a leak cannot grow for ever.",
        "celery",
        ge=1,
        le=1_000_000,
    )
    EVALHUB_TASK_SOFT_TIME_LIMIT: int = setting(
        600,
        "Seconds a task may run before it is asked to stop (tasks that need more set their own).",
        "celery",
        ge=1,
        le=86_400,
    )
    EVALHUB_TASK_TIME_LIMIT: int = setting(
        660,
        "Seconds after which a task's process is killed; above the soft limit.",
        "celery",
        ge=1,
        le=86_400,
    )
    EVALHUB_MAINTENANCE_INTERVAL_SECONDS: int = setting(
        300,
        "How often work left pending (broker down) is queued again and old records pruned.",
        "celery",
        ge=10,
        le=86_400,
    )
    EVALHUB_LEASE_SECONDS: float = setting(
        60.0,
        "Seconds a lease on background work lasts without a heartbeat (evalhub/leases.py): a "
        "dead worker's work is free after this.",
        "celery",
        ge=5,
        le=3600,
    )
    EVALHUB_LEASE_SWEEP_SECONDS: float = setting(
        30.0,
        "How often lapsed leases are looked for and their work queued again (beat and every "
        "worker). Lease + sweep bounds how long a dead worker's work waits.",
        "celery",
        ge=1,
        le=3600,
    )

    # Sizes and counts ----------------------------------------------------------------------
    EVALHUB_MAX_UPLOAD_BYTES: int = setting(
        20 * 1024 * 1024,
        "Largest upload accepted; larger files are refused with a message before parsing.",
        "limits",
        ge=1,
        le=2 * 1024**3,
    )
    EVALHUB_MAX_PLANNED_CONVERSATIONS: int = setting(
        100_000, "Most conversations one tournament may plan.", "limits", ge=1, le=100_000_000
    )
    EVALHUB_MAX_ASSIGNMENTS_PER_CAMPAIGN: int = setting(
        100_000,
        "Most assignments (batches x redundancy) one campaign may have.",
        "limits",
        ge=1,
        le=100_000_000,
    )
    EVALHUB_TRAINING_MAX_ATTEMPTS: int = setting(
        2, "Training attempts a worker may begin per qualification.", "limits", ge=1, le=100
    )
    EVALHUB_MAX_JSON_BODY_BYTES: int = setting(
        1024 * 1024,
        "Largest JSON request body the API reads; larger ones are refused (413) before "
        "parsing. Files go as multipart uploads, under EVALHUB_MAX_UPLOAD_BYTES.",
        "limits",
        ge=1024,
        le=1024**3,
    )

    # Quotas and API rates ------------------------------------------------------------------
    EVALHUB_QUOTA_SYSTEMS: int = setting(
        100, "Systems one account may own (staff: no quota).", "quotas", ge=0, le=1_000_000
    )
    EVALHUB_QUOTA_ENDPOINTS: int = setting(
        100,
        "Bot endpoints one account's systems may have (staff: no quota).",
        "quotas",
        ge=0,
        le=1_000_000,
    )
    EVALHUB_QUOTA_TOURNAMENTS: int = setting(
        100, "Tournaments one account may own (staff: no quota).", "quotas", ge=0, le=1_000_000
    )
    EVALHUB_QUOTA_RUBRICS: int = setting(
        100,
        "Rubric versions one account may write (staff: no quota).",
        "quotas",
        ge=0,
        le=1_000_000,
    )
    EVALHUB_QUOTA_CAMPAIGNS: int = setting(
        100,
        "Campaigns one account may own, a tournament's generated one included (staff: no quota).",
        "quotas",
        ge=0,
        le=1_000_000,
    )
    EVALHUB_QUOTA_UPLOADS_PER_DAY: int = setting(
        100,
        "Files one account may upload a day, UTC (responses, seed conversations; refused "
        "ones count too; staff: no quota).",
        "quotas",
        ge=0,
        le=1_000_000,
    )
    EVALHUB_QUOTA_WEBHOOKS: int = setting(
        10,
        "Webhook subscriptions one account may have (staff: no quota).",
        "quotas",
        ge=0,
        le=1000,
    )
    EVALHUB_WEBHOOK_TESTS_PER_MINUTE: int = setting(
        5,
        "Test events one account may send to one webhook subscription a minute (its page "
        "and the API): each is a real request to the subscriber.",
        "quotas",
        ge=1,
        le=1000,
    )
    EVALHUB_API_USER_PER_MINUTE: int = setting(
        120,
        "API requests one signed-in account (or, signed out, one address) may make a minute.",
        "quotas",
        ge=1,
        le=1_000_000,
    )
    EVALHUB_API_ANON_PER_MINUTE: int = setting(
        60, "API requests one address may make a minute signed out.", "quotas", ge=1, le=1_000_000
    )
    EVALHUB_ENDPOINT_PROBES_PER_MINUTE: int = setting(
        6,
        "Connection tests of one endpoint a minute, per account, on its page and the API: each "
        "is a real request on the endpoint's daily budget.",
        "quotas",
        ge=1,
        le=1_000,
    )
    EVALHUB_API_CREATIONS_PER_MINUTE: int = setting(
        10,
        "API requests a minute that create something (systems, endpoints, tournaments and their "
        "campaigns, rubrics, judges, partner sets, runs), per account.",
        "quotas",
        ge=1,
        le=1_000_000,
    )
    EVALHUB_API_UPLOADS_PER_HOUR: int = setting(
        60, "API file uploads an hour, per account.", "quotas", ge=1, le=1_000_000
    )
    EVALHUB_API_TOKEN_PER_MINUTE: int = setting(
        10,
        "Requests for an API token (POST /api/token/) a minute, per address.",
        "quotas",
        ge=1,
        le=1_000_000,
    )

    # Model endpoints, chat and judges ---------------------------------------------------------
    EVALHUB_BOT_TIMEOUT_SECONDS: float = setting(
        30.0, "Default total seconds of one request for new endpoints.", "endpoints", ge=1, le=600
    )
    EVALHUB_BOT_MAX_CONCURRENCY: int = setting(
        2, "Default requests in flight at once for new endpoints.", "endpoints", ge=1, le=64
    )
    EVALHUB_BOT_DAILY_BUDGET: int = setting(
        5000, "Default requests per day for new endpoints.", "endpoints", ge=1, le=1_000_000
    )
    EVALHUB_BOT_CHAT_SHARE_PERCENT: int = setting(
        50,
        "Default share (percent) of a new endpoint's daily budget that chat campaigns may "
        "spend; tournaments and judges always keep the rest. 0: no chats.",
        "endpoints",
        ge=0,
        le=100,
    )
    EVALHUB_BOT_RETRY_ATTEMPTS: int = setting(
        3, "Attempts of a request that fails transiently.", "endpoints", ge=1, le=20
    )
    EVALHUB_BOT_RETRY_BASE_DELAY: float = setting(
        0.5, "Seconds before the first retry (doubling after).", "endpoints", ge=0, le=60
    )
    EVALHUB_BOT_RETRY_MAX_DELAY: float = setting(
        8.0, "Longest wait between two retries.", "endpoints", ge=0, le=600
    )
    EVALHUB_BOT_RETRY_AFTER_MAX_SECONDS: float = setting(
        60.0,
        "A Retry-After longer than this ends the retries instead of waiting.",
        "endpoints",
        ge=0,
        le=3600,
    )
    EVALHUB_BOT_MAX_REPLY_CHARS: int = setting(
        4000,
        "Longest bot reply kept; longer ones are cut (at most a turn's limit, TEXT_CHARS).",
        "endpoints",
        ge=1,
        le=limits.TEXT_CHARS,
    )
    EVALHUB_BOT_SLOT_WAIT_SECONDS: float = setting(
        300.0,
        "Seconds a caller waits for a free concurrency slot of an endpoint.",
        "endpoints",
        ge=0,
        le=3600,
    )
    EVALHUB_BOT_LEASE_MARGIN_SECONDS: float = setting(
        5.0,
        "How long a concurrency slot outlives its request's deadline.",
        "endpoints",
        ge=0,
        le=600,
    )
    EVALHUB_OUTBOUND_ALLOW: CommaList = setting(
        [],
        "Internal destinations endpoints and judges may reach, comma-separated "
        "`host-or-network[:port]` entries (`10.0.0.5:8000`, `10.1.0.0/16:11434`, "
        "`[fd00::5]:8000`, `models.internal:8000`). Loopback and private addresses are refused "
        "unless an entry matches the address (or the URL's host name) and the port; "
        "link-local and cloud metadata addresses are refused always. Unset: public addresses "
        "only. The production page says more (outbound requests).",
        "endpoints",
    )
    # Webhooks -----------------------------------------------------------------------------
    EVALHUB_WEBHOOK_TIMEOUT_SECONDS: float = setting(
        10.0,
        "Total seconds one webhook request may take (connecting, sending, the answer's "
        "status); a subscriber should answer at once and do its work afterwards.",
        "webhooks",
        ge=1,
        le=60,
    )
    EVALHUB_WEBHOOK_MAX_ATTEMPTS: int = setting(
        8,
        "Requests made for one webhook message before it is given up (the first included).",
        "webhooks",
        ge=1,
        le=20,
    )
    EVALHUB_WEBHOOK_RETRY_BASE_SECONDS: float = setting(
        10.0,
        "Seconds before a webhook message's second attempt; each later wait doubles.",
        "webhooks",
        ge=1,
        le=3600,
    )
    EVALHUB_WEBHOOK_RETRY_MAX_SECONDS: float = setting(
        3600.0,
        "Longest wait between two attempts of a webhook message.",
        "webhooks",
        ge=1,
        le=86400,
    )
    EVALHUB_WEBHOOK_LOG_DAYS: int = setting(
        30, "Days the webhook delivery log keeps a message.", "webhooks", ge=1, le=3650
    )
    EVALHUB_ENDPOINT_CALLS_KEPT: int = setting(
        500, "Call outcomes kept per endpoint for its owner.", "endpoints", ge=1, le=1_000_000
    )
    EVALHUB_ENDPOINT_CALLS_MAX_AGE_DAYS: float = setting(
        14.0, "Days a call outcome is kept.", "endpoints", gt=0, le=3650
    )
    EVALHUB_CHAT_REPLY_TIMEOUT_SECONDS: float = setting(
        20.0,
        "Longest a chatting worker waits for one reply (the endpoint's timeout when shorter).",
        "endpoints",
        ge=1,
        le=600,
    )
    EVALHUB_CHAT_MESSAGES_PER_MINUTE: int = setting(
        20, "Messages a chatting worker may send a minute.", "endpoints", ge=1, le=10_000
    )
    EVALHUB_JUDGE_SLICE_SECONDS: float = setting(
        300.0,
        "Seconds one judge task works before it queues the rest of its run.",
        "endpoints",
        ge=1,
        le=3600,
    )
    EVALHUB_JUDGE_MAX_REPLY_CHARS: int = setting(
        20_000, "Longest judge reply read.", "endpoints", ge=1, le=1_000_000
    )
    EVALHUB_ARENA_LEADERBOARD_DELAY_SECONDS: float = setting(
        10.0,
        "After a vote, seconds before an arena's leaderboard is computed again; the votes of "
        "that while are counted together (one computation, not one per vote).",
        "endpoints",
        ge=0,
        le=3600,
    )
    EVALHUB_ARENA_BOOTSTRAP_ROUNDS: int = setting(
        200,
        "Bootstrap resamples of an arena's battles behind its leaderboard's 95% intervals.",
        "endpoints",
        ge=10,
        le=10_000,
    )

    EVALHUB_ARENA_ACTIONS_PER_MINUTE: int = setting(
        30,
        "Battle actions (start, turn, regenerate, vote) one arena voter may take a minute, "
        "over all arenas; the next is refused with 429 until the minute is over.",
        "endpoints",
        ge=1,
        le=10_000,
    )

    # Crowd platforms ---------------------------------------------------------------------
    EVALHUB_PUBLIC_URL: str = setting(
        "",
        "The HTTPS address crowdworkers reach this site at; task URLs given to platforms are "
        "built from it. Required to launch on Prolific or MTurk.",
        "crowd",
    )
    EVALHUB_PROLIFIC_TOKEN: str = setting(
        "", "Prolific's API token; needed to launch on Prolific.", "crowd"
    )
    EVALHUB_PROLIFIC_API_URL: str = setting(
        "https://api.prolific.com/api/v1/",
        "Prolific's API (a local stand-in in tests).",
        "crowd",
    )
    EVALHUB_PROLIFIC_SERVICE_FEE: float = setting(
        0.429,
        "Prolific's fee as a fraction of rewards and bonuses (check your account's rate).",
        "crowd",
        ge=0,
        le=2,
    )
    EVALHUB_PROLIFIC_TIMEOUT: float = setting(
        30.0, "Seconds of one request to Prolific.", "crowd", ge=1, le=600
    )
    EVALHUB_PROLIFIC_WORKSPACE_ID: str = setting(
        "",
        "The Prolific workspace whose submission status changes EvalHub subscribes to at "
        "launch (with EVALHUB_PROLIFIC_HOOK_SECRET). Unset: the periodic sync alone.",
        "crowd",
    )
    EVALHUB_PROLIFIC_HOOK_SECRET: str = setting(
        "",
        "The workspace's hook secret (Prolific's POST /api/v1/hooks/secrets/), which signs "
        "the events Prolific sends; a request not signed with it is refused.",
        "crowd",
    )
    EVALHUB_PROLIFIC_HOOK_TOLERANCE: int = setting(
        300,
        "Seconds a hook request's X-Prolific-Request-Timestamp may differ from this server's "
        "clock; an older (replayed) request is refused.",
        "crowd",
        ge=30,
        le=3600,
    )
    EVALHUB_PROLIFIC_HOOKS_PER_MINUTE: int = setting(
        600,
        "Hook requests one address may send a minute (Prolific sends one per submission "
        "change); the next is refused with 429 and Prolific retries it.",
        "crowd",
        ge=10,
        le=100_000,
    )
    EVALHUB_MTURK_ENDPOINT_URL: str = setting(
        "",
        "MTurk's API endpoint (the sandbox, or a local stand-in). Unset: boto3's default. "
        "AWS credentials come the usual boto3 way.",
        "crowd",
    )
    EVALHUB_MTURK_SUBMIT_ORIGINS: CommaList = setting(
        ["https://www.mturk.com", "https://workersandbox.mturk.com"],
        "Where a finished MTurk assignment may be posted back (turkSubmitTo is checked).",
        "crowd",
    )
    EVALHUB_CROWD_RETRY_ATTEMPTS: int = setting(
        5, "Attempts of a platform call that fails transiently.", "crowd", ge=1, le=20
    )
    EVALHUB_CROWD_RETRY_BASE_DELAY: float = setting(
        1.0, "Seconds before the first retry of a platform call.", "crowd", ge=0, le=60
    )
    EVALHUB_CROWD_SYNC_SECONDS: int = setting(
        300, "How often live campaigns are synced with their platform.", "crowd", ge=10, le=86_400
    )

    @field_validator(
        "ALLOWED_HOSTS",
        "CSRF_TRUSTED_ORIGINS",
        "EVALHUB_MTURK_SUBMIT_ORIGINS",
        "EVALHUB_SECRET_KEYS",
        "EVALHUB_OUTBOUND_ALLOW",
        mode="before",
    )
    @classmethod
    def _comma_separated(cls, value):
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("EVALHUB_SECRET_KEYS")
    @classmethod
    def _fernet_keys(cls, keys: list[str]) -> list[str]:
        for position, key in enumerate(keys, start=1):
            if not _is_fernet_key(key):
                # The key itself is never repeated in the message: it is a secret.
                raise ValueError(
                    f"key {position} is not a Fernet key (32 bytes in URL-safe base64, "
                    "44 characters)"
                )
        return keys

    @field_validator("EVALHUB_OUTBOUND_ALLOW")
    @classmethod
    def _outbound_allow(cls, value: list[str]) -> list[str]:
        parse_allow_list(value)  # EntryInvalid (a ValueError) names the entry and why
        return value

    @field_validator("EVALHUB_PUBLIC_URL")
    @classmethod
    def _public_url(cls, value: str) -> str:
        value = value.rstrip("/")
        if value and not value.startswith(("https://", "http://")):
            raise ValueError("must be an http(s) URL such as https://evalhub.example.org")
        return value

    @model_validator(mode="after")
    def _consistent(self):
        if self.EVALHUB_TASK_TIME_LIMIT <= self.EVALHUB_TASK_SOFT_TIME_LIMIT:
            raise ValueError(
                "EVALHUB_TASK_TIME_LIMIT must be above EVALHUB_TASK_SOFT_TIME_LIMIT "
                f"({self.EVALHUB_TASK_TIME_LIMIT} <= {self.EVALHUB_TASK_SOFT_TIME_LIMIT})"
            )
        if not self.SECRET_KEY and not self.DEBUG:
            raise ValueError(
                "SECRET_KEY is not set. With DEBUG off EvalHub refuses to start without one: "
                "set SECRET_KEY to a long random string (or DEBUG=1 for a local embedded run)."
            )
        if not self.EVALHUB_SECRET_KEYS and not self.DEBUG:
            raise ValueError(
                "EVALHUB_SECRET_KEYS is not set. With DEBUG off EvalHub refuses to start "
                "without a key to encrypt stored secrets (endpoints' tokens): set it to a "
                "Fernet key, see the security settings of the documentation."
            )
        return self


def _is_fernet_key(key: str) -> bool:
    try:
        return len(base64.urlsafe_b64decode(key.encode("ascii"))) == 32 and len(key) == 44
    except (ValueError, UnicodeEncodeError):
        return False


def _accepts(name: str) -> str:
    """What a variable accepts, in words: its type and range."""
    field = Settings.model_fields[name]
    kind = _type_name(field.annotation)
    bounds = {type(m).__name__: m for m in field.metadata}
    low = bounds.get("Ge") or bounds.get("Gt")
    high = bounds.get("Le") or bounds.get("Lt")
    if low is not None and high is not None:
        low_value = getattr(low, "ge", getattr(low, "gt", None))
        high_value = getattr(high, "le", getattr(high, "lt", None))
        return f"{kind} from {low_value} to {high_value}"
    return kind


def _type_name(annotation) -> str:
    text = str(annotation)
    if annotation is bool:
        return "a boolean (1/0, true/false, yes/no, on/off)"
    if annotation is int:
        return "an integer"
    if annotation is float:
        return "a number"
    if annotation is str:
        return "text"
    if "Literal" in text:
        return "one of " + ", ".join(annotation.__args__)
    return "a comma-separated list"


# Variables EvalHub no longer reads, and what took their place. One still set stops
# start-up: ignored in silence, it would leave the operator believing it works.
REPLACED = {
    "EVALHUB_BOT_ALLOW_PRIVATE_ADDRESSES": (
        "was replaced by EVALHUB_OUTBOUND_ALLOW, a list of the internal destinations "
        "endpoints may reach (e.g. 10.0.0.5:8000 or models.internal:8000); list yours there "
        "and remove it"
    ),
}


def load() -> Settings:
    """The settings from the process environment. Raises ConfigError naming every variable
    that is wrong (what it accepts, what it got), never a pydantic traceback."""
    problems = [
        f"{name} {instead}" for name, instead in REPLACED.items() if os.environ.get(name, "")
    ]
    try:
        loaded = Settings()
    except ValidationError as invalid:
        problems += [_problem(error) for error in invalid.errors()]
    if problems:
        raise ConfigError(problems)
    return loaded


def _problem(error) -> str:
    if not error["loc"]:  # a rule over several variables (Settings._consistent)
        return str(error.get("ctx", {}).get("error", error["msg"]))
    name = str(error["loc"][0])
    got = "(a secret, not shown)" if name in SECRETS else repr(error.get("input"))
    return f"{name} must be {_accepts(name)}, got {got}: {error['msg']}"


def _default_text(name: str) -> str:
    default = Settings.model_fields[name].default
    if isinstance(default, list):
        return ", ".join(default) if default else "(none)"
    if isinstance(default, bool):
        return "1" if default else "0"
    if default == "":
        return "(unset)"
    return str(default)


def reference_markdown() -> str:
    """The settings reference page: one table per group, one row per variable."""
    lines = [
        "# Settings reference",
        "",
        "EvalHub is configured by environment variables only, each declared in "
        "`evalhub/config.py` with its type, range and default; this page is generated from "
        "that schema. A value out of range stops start-up with a message naming the variable. "
        "An empty value counts as unset.",
        "",
    ]
    for group, title in GROUPS.items():
        lines += [f"## {title}", "", group_table(group), ""]
    return "\n".join(lines)


def group_table(group: str) -> str:
    """One group's variables as a table (the limits page shows two groups again)."""
    lines = ["| Variable | Accepts | Default | What it does |", "|---|---|---|---|"]
    for name, field in Settings.model_fields.items():
        if (field.json_schema_extra or {}).get("group") != group:
            continue
        description = field.description.replace("|", "\\|")
        lines.append(f"| `{name}` | {_accepts(name)} | {_default_text(name)} | {description} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(reference_markdown())
