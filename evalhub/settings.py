"""EvalHub settings, read from the environment.

With nothing set, EvalHub runs embedded: an SQLite file, Celery tasks executed eagerly in
the web process, media on the local disk, DEBUG on and a secret key generated once into a
local file. Setting DATABASE_URL, CELERY_BROKER_URL, SECRET_KEY, ALLOWED_HOSTS and
DEBUG=0 switches to the production shape (see docker-compose.yml and the README).
"""

import base64
import hashlib
import hmac
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp import constants as csp_constants
from django.core.exceptions import ImproperlyConfigured

from evalhub import config

BASE_DIR = Path(__file__).resolve().parent.parent


def local_secret_key(path: Path) -> str:
    """A key generated on first use and kept beside the project, so sessions survive restarts."""
    if path.exists():
        return path.read_text().strip()
    key = secrets.token_urlsafe(50)
    path.write_text(key)
    path.chmod(0o600)
    return key


def development_secret_key(secret_key: str) -> str:
    """A Fernet key derived from SECRET_KEY, for DEBUG runs with no EVALHUB_SECRET_KEYS (so
    `make run` needs no setting); production refuses to start without the setting."""
    digest = hmac.new(secret_key.encode(), b"evalhub stored secrets", hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode()


# Every environment variable is declared in evalhub/config.py (type, range, default,
# meaning); a bad one stops start-up here with a message naming it.
try:
    env = config.load()
except config.ConfigError as invalid:
    raise ImproperlyConfigured(str(invalid)) from None

# Off unless set: `make run` and the tests set DEBUG=1 for the embedded mode. Without DEBUG
# a SECRET_KEY is required (config.Settings refuses to start without one).
DEBUG = env.DEBUG
SECRET_KEY = env.SECRET_KEY or local_secret_key(BASE_DIR / ".secret_key")
# Stored secrets (endpoints' tokens) are encrypted with these: the first encrypts, all
# decrypt (evalhub/encryption.py). Without DEBUG the setting is required (config.Settings).
EVALHUB_SECRET_KEYS = env.EVALHUB_SECRET_KEYS or [development_secret_key(SECRET_KEY)]
ALLOWED_HOSTS = env.ALLOWED_HOSTS
CSRF_TRUSTED_ORIGINS = env.CSRF_TRUSTED_ORIGINS

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "knox",  # API tokens: hashed, expiring, several per account (evalhub/api_tokens.py)
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",
    "axes",
    "csp",
    "evalhub",
    "endpoints",  # model calls: below annotation, tournaments and judging
    "webhooks",  # owners' event subscriptions: above endpoints, below every app with events
    "annotation",
    "tournaments",
    "arenas",  # side-by-side battles: above tournaments, below judging
    "judging",  # automatic judges: above tournaments, below analysis
    "analysis",
    "portability",  # export_all/import_all: reads and writes every app's tables
    "demo",  # above every layer: assembles each app's demo part
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # django-csp's, with the header kept per overrides when no nonce was used.
    "evalhub.content_policy.CachedCSPMiddleware",
    # A service a request cannot do without is down: 503, a page or the API's error shape.
    "evalhub.outages.ServiceUnavailableMiddleware",
    # A NUL in a URL or a page's form is a 400 before any view (evalhub/nul_refusal.py);
    # inside the CSP and frame headers' middleware, so that its page has them too.
    "evalhub.nul_refusal.RefuseNul",
    # Last, as django-axes asks: it turns a locked-out login into its lockout response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "evalhub.urls"
WSGI_APPLICATION = "evalhub.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "evalhub.notifications.context",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env.DATABASE_URL or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=env.EVALHUB_CONN_MAX_AGE,
        # A persistent connection is checked before each request reuses it, so a database
        # restart costs no request an error.
        conn_health_checks=True,
    )
}
# Statements run on a server-binding cursor are prepared on their first run, and PostgreSQL
# plans them once per connection: the crowdworker pages' two queries
# (annotation/hot_queries.py). The ORM binds on the client and never prepares; behind a
# transaction-pooling PgBouncer set EVALHUB_PG_PREPARE=0.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env.EVALHUB_PG_PREPARE:
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = 0
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Writers wait for each other instead of failing with "database is locked": the web
    # process and `make run`'s worker write at once. WAL lets readers go on while one
    # writes; IMMEDIATE takes the write lock when a transaction starts, so two transactions
    # that read then write never deadlock on upgrading their locks.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=20,
        transaction_mode="IMMEDIATE",
        init_command="PRAGMA journal_mode=WAL;",
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
# The worker pages' languages (docs/translating.md). A campaign chooses one; researcher and
# staff pages stay English, so there is no LocaleMiddleware: the worker views activate the
# campaign's language themselves (annotation/language.py). Arabic is there to keep the
# right-to-left layout working; it has no translation yet and shows English text.
LANGUAGES = [
    ("en", "English"),
    ("de", "Deutsch"),
    ("es", "Español"),
    ("ar", "العربية"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Uploads are never served from a URL of their own: evalhub.views.systems.submission_file
# hands a file out under its system's visibility. MEDIA_URL has no route.
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env.EVALHUB_MEDIA_ROOT or BASE_DIR / "media")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            # WhiteNoise's manifest storage, each URL worked out once.
            else "evalhub.static_storage.StaticFilesStorage"
        )
    },
}

EMAIL_BACKEND = env.EMAIL_BACKEND
DEFAULT_FROM_EMAIL = env.DEFAULT_FROM_EMAIL

# Production is safe by default: anything that is not DEBUG gets secure cookies and HSTS.
if not DEBUG:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.EVALHUB_HSTS_SECONDS
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env.EVALHUB_HSTS_PRELOAD
    SECURE_SSL_REDIRECT = env.EVALHUB_SSL_REDIRECT
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    # Container healthchecks ask over plain HTTP from inside.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Celery: without a broker, tasks run eagerly inside the request (embedded mode).
CELERY_BROKER_URL = env.CELERY_BROKER_URL
CELERY_RESULT_BACKEND = env.CELERY_RESULT_BACKEND or None
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
# A message is acknowledged when its task ends, and handed back if the worker process dies,
# so a killed worker's task is delivered again (the tasks are idempotent).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker child is replaced after this many tasks, so a leak cannot grow for ever.
CELERY_WORKER_MAX_TASKS_PER_CHILD = env.EVALHUB_WORKER_MAX_TASKS_PER_CHILD
# Default limits; tasks that need other ones set theirs (see evalhub/celery.py).
CELERY_TASK_SOFT_TIME_LIMIT = env.EVALHUB_TASK_SOFT_TIME_LIMIT
CELERY_TASK_TIME_LIMIT = env.EVALHUB_TASK_TIME_LIMIT
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A request must not hang when the broker is down: give up quickly and let beat re-queue.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BROKER_TRANSPORT_OPTIONS = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2}
EVALHUB_EMBEDDED_BROKER_DIR = env.EVALHUB_EMBEDDED_BROKER_DIR or str(BASE_DIR / ".broker")
if CELERY_BROKER_URL.startswith("filesystem://"):
    # `make run`: a real worker beside the server, its messages files in one folder that
    # both read and write (kombu's filesystem transport), so no service has to run.
    Path(EVALHUB_EMBEDDED_BROKER_DIR).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS |= {
        "data_folder_in": EVALHUB_EMBEDDED_BROKER_DIR,
        "data_folder_out": EVALHUB_EMBEDDED_BROKER_DIR,
    }
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Work left pending (broker down) or abandoned (worker died) is re-queued this often.
EVALHUB_MAINTENANCE_INTERVAL_SECONDS = env.EVALHUB_MAINTENANCE_INTERVAL_SECONDS

# Caches: Redis in production (login lockouts and rate limits shared by every web process),
# local memory embedded.
CACHE_URL = env.CACHE_URL
# A Redis that hangs instead of refusing (a network partition) holds a request at most this
# long per cache call, then counts as down (docs/production.md, "When Redis is down").
EVALHUB_REDIS_CACHE_OPTIONS = {"socket_connect_timeout": 1, "socket_timeout": 1}
CACHES = {
    "default": (
        # Django's backend, reusing its redis-py client (evalhub/cache.py).
        {
            "BACKEND": "evalhub.cache.RedisCache",
            "LOCATION": CACHE_URL,
            "OPTIONS": EVALHUB_REDIS_CACHE_OPTIONS,
        }
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
# Sessions are read on every page a crowdworker sees: with a shared cache (Redis) they are
# read from it and written through to the database. Not with the per-process local memory
# cache: another web process would read a stale copy.
# With Redis down they are read from and written to the database alone (evalhub/sessions.py).
if CACHE_URL:
    SESSION_ENGINE = "evalhub.sessions"

# The reverse proxies in front (docker-compose: the HTTPS proxy). The client's address, for
# lockouts and every per-address limit, is worked out from it in one place:
# evalhub/client_address.py.
EVALHUB_TRUSTED_PROXY_COUNT = env.EVALHUB_TRUSTED_PROXY_COUNT

# Accounts: django-axes locks out a username from one client address after repeated failed
# logins (pages, admin and the API token endpoint); `manage.py axes_reset` lifts every
# lockout. Per username and address together: one client failing with many usernames, or
# with one, locks nobody else out (behind a proxy or a NAT many people share an address).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.EVALHUB_LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = env.EVALHUB_LOGIN_COOLOFF_HOURS
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "evalhub.client_address.client_address"
# Sign-ups per client address and hour (evalhub/ratelimit.py).
EVALHUB_SIGNUPS_PER_HOUR = env.EVALHUB_SIGNUPS_PER_HOUR
# Seed-conversation uploads per researcher and hour (evalhub/seed_uploads.py).
EVALHUB_SEED_UPLOADS_PER_HOUR = env.EVALHUB_SEED_UPLOADS_PER_HOUR
# New crowd identities on a campaign's start link (annotation/entry.py): per client address
# and hour, over all campaigns; per campaign and minute, over all addresses. One script
# cannot invent hundreds of workers and drain a campaign.
EVALHUB_NEW_WORKERS_PER_ADDRESS_PER_HOUR = env.EVALHUB_NEW_WORKERS_PER_ADDRESS_PER_HOUR
EVALHUB_NEW_WORKERS_PER_CAMPAIGN_PER_MINUTE = env.EVALHUB_NEW_WORKERS_PER_CAMPAIGN_PER_MINUTE

# A Content-Security-Policy on every response (django-csp): only this site's scripts,
# styles, images and fonts; inline <style> blocks carry the request's nonce.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [csp_constants.SELF],
        "script-src": [csp_constants.SELF, csp_constants.NONCE],
        "style-src": [csp_constants.SELF, csp_constants.NONCE],
        "img-src": [csp_constants.SELF, "data:"],
        "font-src": [csp_constants.SELF],
        "connect-src": [csp_constants.SELF],
        "object-src": [csp_constants.NONE],
        "base-uri": [csp_constants.SELF],
        "form-action": [csp_constants.SELF],
        "frame-ancestors": [csp_constants.NONE],
    }
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # django-rest-knox's tokens (`Authorization: Token <token>`), noting their last use.
        "evalhub.api.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Each API view declares who may call each method (evalhub/permissions.py `by_method`);
    # one that forgets is refused everything.
    "DEFAULT_PERMISSION_CLASSES": ["evalhub.permissions.NothingDeclared"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # ?search=, ?ordering= and per-field filters (django-filter) on the API's lists.
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.SearchFilter",
        "rest_framework.filters.OrderingFilter",
    ],
    # Every error, 400 to 500, answers {"errors": [{"line"|"field", "message"}], "error_count"}.
    "EXCEPTION_HANDLER": "evalhub.api.exceptions.exception_handler",
    # DRF's throttles find the client's address by the same rule as
    # evalhub/client_address.py (left unset, DRF would believe any X-Forwarded-For).
    "NUM_PROXIES": EVALHUB_TRUSTED_PROXY_COUNT,
    # Request rates (evalhub/api/throttles.py): per account (or address, signed out), per
    # address signed out, and per scope for the writes a view names (creations, uploads,
    # token requests). The counts live in the default cache: Redis in production, shared by
    # every web process; per-process memory embedded.
    "DEFAULT_THROTTLE_CLASSES": [
        "evalhub.api.throttles.UserRateThrottle",
        "evalhub.api.throttles.AnonRateThrottle",
        "evalhub.api.throttles.ScopedRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "user": f"{env.EVALHUB_API_USER_PER_MINUTE}/minute",
        "anon": f"{env.EVALHUB_API_ANON_PER_MINUTE}/minute",
        "creations": f"{env.EVALHUB_API_CREATIONS_PER_MINUTE}/minute",
        "uploads": f"{env.EVALHUB_API_UPLOADS_PER_HOUR}/hour",
        "token": f"{env.EVALHUB_API_TOKEN_PER_MINUTE}/minute",
        "probes": f"{env.EVALHUB_ENDPOINT_PROBES_PER_MINUTE}/minute",
        "prolific_hooks": f"{env.EVALHUB_PROLIFIC_HOOKS_PER_MINUTE}/minute",
    },
    # DRF's, refusing a body that holds a NUL, JSON nested too deep answered 400 rather than
    # 500, and bodies over EVALHUB_MAX_JSON_BODY_BYTES 413 (evalhub/api/parsers.py).
    "DEFAULT_PARSER_CLASSES": [
        "evalhub.api.parsers.JSONParser",
        "evalhub.api.parsers.FormParser",
        "evalhub.api.parsers.MultiPartParser",
    ],
}
# API tokens (django-rest-knox): stored as SHA-512 digests under EvalHub's own model (a
# name and the last use), expiring, at most EVALHUB_API_TOKENS_PER_USER live per account.
EVALHUB_API_TOKEN_DAYS = env.EVALHUB_API_TOKEN_DAYS
EVALHUB_API_TOKENS_PER_USER = env.EVALHUB_API_TOKENS_PER_USER
KNOX_TOKEN_MODEL = "evalhub.ApiToken"
# knox's own AuthToken is swapped for that one, but knox's migrations (which do not declare
# it swappable) would still create its table: unused, and a foreign key to auth_user that
# PostgreSQL's flush (tests) refuses to truncate past. No migrations for knox, so no table.
MIGRATION_MODULES = {"knox": None}
REST_KNOX = {
    "TOKEN_TTL": timedelta(days=EVALHUB_API_TOKEN_DAYS),
    # A fixed beginning lets secret scanners recognise a leaked EvalHub token.
    "TOKEN_PREFIX": "evh_",
    "AUTH_HEADER_PREFIX": "Token",
    "TOKEN_LIMIT_PER_USER": EVALHUB_API_TOKENS_PER_USER,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "EvalHub API",
    "DESCRIPTION": "Register dialogue systems, submit their responses, read results.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Every error response refers to the one Error component (evalhub/api/schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "evalhub.api.schema.add_error_responses",
    ],
    # Several models have a "status": each choice set gets its own component name.
    "ENUM_NAME_OVERRIDES": {
        "CampaignStatusEnum": "annotation.models.Campaign.Status",
        "CampaignProviderEnum": "annotation.models.Campaign.Provider",
        "WorkerProviderEnum": "annotation.models.Worker.PROVIDERS",
        "CrowdPlatformEnum": "annotation.api.crowd.PLATFORM_CHOICES",
        "SubmissionStatusEnum": "evalhub.models.Submission.Status",
        "TournamentStatusEnum": "tournaments.models.Tournament.Status",
        "AnalysisRunStatusEnum": "analysis.models.AnalysisRun.Status",
        "JudgeRunStatusEnum": "judging.models.JudgeRun.Status",
        "AutomaticJudgmentStatusEnum": "judging.models.AutomaticJudgment.Status",
        "EndpointCallStatusEnum": "endpoints.models.EndpointCall.Status",
        "TaskKindEnum": "annotation.kinds.KIND_CHOICES",
        "RubricTaskKindEnum": "judging.rubrics.RUBRIC_KIND_CHOICES",
        "ReportKindEnum": ["spot_the_bot", "ab"],
    },
}

# Uploads larger than this are refused with a message before they are parsed.
EVALHUB_MAX_UPLOAD_BYTES = env.EVALHUB_MAX_UPLOAD_BYTES
# JSON bodies larger than this are refused (413) before they are parsed (evalhub/api/parsers.py).
EVALHUB_MAX_JSON_BODY_BYTES = env.EVALHUB_MAX_JSON_BODY_BYTES
# Per-user quotas (evalhub/quotas.py): rows one account may own, files it may upload a day.
EVALHUB_QUOTA_SYSTEMS = env.EVALHUB_QUOTA_SYSTEMS
EVALHUB_QUOTA_ENDPOINTS = env.EVALHUB_QUOTA_ENDPOINTS
EVALHUB_QUOTA_TOURNAMENTS = env.EVALHUB_QUOTA_TOURNAMENTS
EVALHUB_QUOTA_RUBRICS = env.EVALHUB_QUOTA_RUBRICS
EVALHUB_QUOTA_CAMPAIGNS = env.EVALHUB_QUOTA_CAMPAIGNS
EVALHUB_QUOTA_UPLOADS_PER_DAY = env.EVALHUB_QUOTA_UPLOADS_PER_DAY
EVALHUB_QUOTA_WEBHOOKS = env.EVALHUB_QUOTA_WEBHOOKS
EVALHUB_WEBHOOK_TESTS_PER_MINUTE = env.EVALHUB_WEBHOOK_TESTS_PER_MINUTE
# Django refuses request bodies above this before the view sees them; keep it above the
# upload limit so the view, not a bare 400, tells the user the file is too large.
DATA_UPLOAD_MAX_MEMORY_SIZE = EVALHUB_MAX_UPLOAD_BYTES + 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# Bounded work: a plan's size is computed arithmetically and refused above these
# (a tournament's planned conversations; a campaign's assignments, i.e. batches x redundancy).
EVALHUB_MAX_PLANNED_CONVERSATIONS = env.EVALHUB_MAX_PLANNED_CONVERSATIONS
EVALHUB_MAX_ASSIGNMENTS_PER_CAMPAIGN = env.EVALHUB_MAX_ASSIGNMENTS_PER_CAMPAIGN
# Training attempts a worker may begin per qualification key (annotation/training.py).
EVALHUB_TRAINING_MAX_ATTEMPTS = env.EVALHUB_TRAINING_MAX_ATTEMPTS

# Bot endpoints and live dialogue collection (endpoints/client.py, collection.py).
# Defaults for new endpoints: total seconds per request, requests in flight, requests a day.
EVALHUB_BOT_TIMEOUT_SECONDS = env.EVALHUB_BOT_TIMEOUT_SECONDS
EVALHUB_BOT_MAX_CONCURRENCY = env.EVALHUB_BOT_MAX_CONCURRENCY
EVALHUB_BOT_DAILY_BUDGET = env.EVALHUB_BOT_DAILY_BUDGET
# ... and the share (percent) of that budget chat campaigns may spend (endpoints/budget.py).
EVALHUB_BOT_CHAT_SHARE_PERCENT = env.EVALHUB_BOT_CHAT_SHARE_PERCENT
# Retries of transient failures; a Retry-After longer than the cap ends the retries.
EVALHUB_BOT_RETRY_ATTEMPTS = env.EVALHUB_BOT_RETRY_ATTEMPTS
EVALHUB_BOT_RETRY_BASE_DELAY = env.EVALHUB_BOT_RETRY_BASE_DELAY
EVALHUB_BOT_RETRY_MAX_DELAY = env.EVALHUB_BOT_RETRY_MAX_DELAY
EVALHUB_BOT_RETRY_AFTER_MAX_SECONDS = env.EVALHUB_BOT_RETRY_AFTER_MAX_SECONDS
EVALHUB_BOT_MAX_REPLY_CHARS = env.EVALHUB_BOT_MAX_REPLY_CHARS
EVALHUB_BOT_SLOT_WAIT_SECONDS = env.EVALHUB_BOT_SLOT_WAIT_SECONDS
EVALHUB_ENDPOINT_PROBES_PER_MINUTE = env.EVALHUB_ENDPOINT_PROBES_PER_MINUTE
# A concurrency slot's lease outlives the request's total deadline by this much.
EVALHUB_BOT_LEASE_MARGIN_SECONDS = env.EVALHUB_BOT_LEASE_MARGIN_SECONDS
# Outbound requests reach public addresses, and internal ones only where an entry of this
# allow-list matches address and port (evalhub/outbound_policy.py); link-local and cloud
# metadata addresses never. Checked after DNS resolution, on the address connected to.
EVALHUB_OUTBOUND_ALLOW = env.EVALHUB_OUTBOUND_ALLOW
# Outcomes of calls kept per endpoint for its owner (endpoints/calls.py): the newest this
# many, none older than this many days (pruned by the maintenance beat).
EVALHUB_ENDPOINT_CALLS_KEPT = env.EVALHUB_ENDPOINT_CALLS_KEPT
EVALHUB_ENDPOINT_CALLS_MAX_AGE_DAYS = env.EVALHUB_ENDPOINT_CALLS_MAX_AGE_DAYS
# Webhooks (webhooks/delivery.py): sent through the same outbound guard as model calls.
EVALHUB_WEBHOOK_TIMEOUT_SECONDS = env.EVALHUB_WEBHOOK_TIMEOUT_SECONDS
EVALHUB_WEBHOOK_MAX_ATTEMPTS = env.EVALHUB_WEBHOOK_MAX_ATTEMPTS
EVALHUB_WEBHOOK_RETRY_BASE_SECONDS = env.EVALHUB_WEBHOOK_RETRY_BASE_SECONDS
EVALHUB_WEBHOOK_RETRY_MAX_SECONDS = env.EVALHUB_WEBHOOK_RETRY_MAX_SECONDS
EVALHUB_WEBHOOK_LOG_DAYS = env.EVALHUB_WEBHOOK_LOG_DAYS
# Chat campaigns (annotation/chat.py, endpoints/chat.py): a worker waits at most
# this long for one reply (the endpoint's own timeout is used when shorter; one retry of a
# transient failure fits inside), and sends at most this many messages a minute.
EVALHUB_CHAT_REPLY_TIMEOUT_SECONDS = env.EVALHUB_CHAT_REPLY_TIMEOUT_SECONDS
EVALHUB_CHAT_MESSAGES_PER_MINUTE = env.EVALHUB_CHAT_MESSAGES_PER_MINUTE
# Background work (collection, judge runs, analysis runs) is claimed through one lease
# (evalhub/leases.py) that its owner renews four times a lease; a dead owner's lease lapses
# after EVALHUB_LEASE_SECONDS and the sweep (every EVALHUB_LEASE_SWEEP_SECONDS, in beat and
# in every worker process) queues its work again: taken over within lease + sweep, < 2 min.
EVALHUB_LEASE_SECONDS = env.EVALHUB_LEASE_SECONDS
EVALHUB_LEASE_SWEEP_SECONDS = env.EVALHUB_LEASE_SWEEP_SECONDS
# Automatic judges (judging/): one task works on a run for at most the slice, then queues
# the rest (so it stays within the task time limits) and reads the reply limit.
EVALHUB_JUDGE_SLICE_SECONDS = env.EVALHUB_JUDGE_SLICE_SECONDS
EVALHUB_JUDGE_MAX_REPLY_CHARS = env.EVALHUB_JUDGE_MAX_REPLY_CHARS
# Arenas (arenas/): a vote asks for the leaderboard, computed by a task after this delay
# (the votes of that while together), with this many bootstrap rounds. When a system is
# provisional is each arena's setting (arenas/arena_settings.py).
EVALHUB_ARENA_LEADERBOARD_DELAY_SECONDS = env.EVALHUB_ARENA_LEADERBOARD_DELAY_SECONDS
EVALHUB_ARENA_BOOTSTRAP_ROUNDS = env.EVALHUB_ARENA_BOOTSTRAP_ROUNDS
# Each arena voter (account, invited visitor, crowd participant) takes at most this many
# battle actions a minute (arenas/voter_limits.py).
EVALHUB_ARENA_ACTIONS_PER_MINUTE = env.EVALHUB_ARENA_ACTIONS_PER_MINUTE

# Crowd platforms (annotation/crowd/). Task URLs given to platforms are built from
# EVALHUB_PUBLIC_URL, the HTTPS address workers reach. AWS credentials come the usual boto3
# way (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ~/.aws). The endpoint
# settings let a local test double stand in for either platform.
EVALHUB_PUBLIC_URL = env.EVALHUB_PUBLIC_URL
EVALHUB_PROLIFIC_TOKEN = env.EVALHUB_PROLIFIC_TOKEN
EVALHUB_PROLIFIC_API_URL = env.EVALHUB_PROLIFIC_API_URL
# Prolific's service fee as a fraction of rewards and bonuses (check your account's rate).
EVALHUB_PROLIFIC_SERVICE_FEE = env.EVALHUB_PROLIFIC_SERVICE_FEE
EVALHUB_PROLIFIC_TIMEOUT = env.EVALHUB_PROLIFIC_TIMEOUT
EVALHUB_PROLIFIC_WORKSPACE_ID = env.EVALHUB_PROLIFIC_WORKSPACE_ID
EVALHUB_PROLIFIC_HOOK_SECRET = env.EVALHUB_PROLIFIC_HOOK_SECRET
EVALHUB_PROLIFIC_HOOK_TOLERANCE = env.EVALHUB_PROLIFIC_HOOK_TOLERANCE
EVALHUB_MTURK_ENDPOINT_URL = env.EVALHUB_MTURK_ENDPOINT_URL
# Where a finished MTurk assignment may be posted back (turkSubmitTo is checked against it).
EVALHUB_MTURK_SUBMIT_ORIGINS = env.EVALHUB_MTURK_SUBMIT_ORIGINS
EVALHUB_CROWD_RETRY_ATTEMPTS = env.EVALHUB_CROWD_RETRY_ATTEMPTS
EVALHUB_CROWD_RETRY_BASE_DELAY = env.EVALHUB_CROWD_RETRY_BASE_DELAY
# How often the periodic task syncs live campaigns with their platform.
EVALHUB_CROWD_SYNC_SECONDS = env.EVALHUB_CROWD_SYNC_SECONDS

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.EVALHUB_LOG_LEVEL},
}
