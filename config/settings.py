"""GPU Planner settings, read from the environment (see .env.example).

Defaults run with no services: a SQLite file and in-process Celery tasks.
Production (config.settings_production) refuses to start without a secret key.
"""

import decimal
from pathlib import Path

import environ
from celery.schedules import crontab
from kombu import Exchange, Queue

# Money arithmetic: 40 significant digits, not Python's 28. The cost options allow amounts and volumes
# up to 1e12 (costs.engine.options.MAX_MAGNITUDE); a price of 1e12 per 1M tokens at the spec's largest
# token volume over 120 months reaches ~3e27, which 28 digits cannot quantize to cents (found by
# schemathesis). Set for new threads (DefaultContext) and this one; exact results of sane plans are the
# same to the cent.
decimal.DefaultContext.prec = 40
decimal.getcontext().prec = 40

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DJANGO_DEBUG", default=True)
# The fallback key is only for the embedded default; production settings reject it.
INSECURE_DEV_SECRET_KEY = "dev-insecure-gpu-planner-key-change-me-0123456789abcdef"
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default=INSECURE_DEV_SECRET_KEY)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI / ReDoc static files, no CDN
    "django_htmx",
    "django_prometheus",
    "catalog",
    "costs",
    "planner",
    "planner.api",
    # Login lockout, audit log, and the project's own wiring (config/apps.py); last so every
    # audited model is loaded when it registers them.
    "axes",
    "auditlog",
    "config.apps.OpsConfig",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "config.request_id.RequestIdMiddleware",
    # a 404 HTML page under /api/ (DEBUG's technical 404) answered in the API's JSON shape
    "config.middleware.ApiHtmlNotFoundMiddleware",
    # 413 for bodies over MAX_REQUEST_BODY_BYTES, before anything reads them.
    "config.middleware.RequestSizeLimitMiddleware",
    # 400 for NUL / unpaired surrogates in the path, query parameters and API form fields.
    "config.middleware.UnsafeTextMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # gzip of the API's JSON (a plan's result: ~450 KB, ~55 KB compressed); below the middleware that
    # read a body (ApiHtmlNotFound reads a 404's HTML), so they see it plain
    "config.middleware.ApiGZipMiddleware",
    # Database down: a plain 503 page or JSON instead of a stack trace (config/middleware.py).
    "config.middleware.DatabaseUnavailableMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Records the acting user on audit log entries.
    "auditlog.middleware.AuditlogMiddleware",
    # Login lockout; last so it sees the final response of a failed login.
    "axes.middleware.AxesMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = "config.urls"
# A failed CSRF check under /api/ answers in the API's JSON error shape.
CSRF_FAILURE_VIEW = "config.middleware.csrf_failure"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=0))
# A connection broken by a database restart is noticed and replaced, so the app recovers alone.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Content-Security-Policy: scripts only from our own static files (no inline scripts, no
# eval: htmx runs with allowEval off). Inline style attributes are allowed for simple bars.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

LANGUAGE_CODE = env.str("DJANGO_LANGUAGE_CODE", default="en")
LANGUAGES = [("en", "English"), ("ru", "Русский")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# The new-workload form's currency; empty: the page language's (RUB in Russian, USD in English).
PLANNER_DEFAULT_CURRENCY = env.str("PLANNER_DEFAULT_CURRENCY", default="")
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

# Login throttling (django-axes): after AXES_FAILURE_LIMIT failed logins for one username
# from one IP address, that pair is locked out for AXES_COOLOFF_TIME hours. Attempts that
# carry no request (client.login() in tests, management commands) are not HTTP logins:
# config.auth.LockoutBackend passes them to ModelBackend without counting them.
AUTHENTICATION_BACKENDS = [
    "config.auth.LockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = env.float("AXES_COOLOFF_TIME_HOURS", default=0.25)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
# Reverse proxies in front of the app that append to X-Forwarded-For (0 = clients connect
# directly). The lockout counts the address the nearest trusted proxy saw (config.auth).
TRUSTED_PROXY_COUNT = env.int("DJANGO_TRUSTED_PROXY_COUNT", default=0)
AXES_CLIENT_IP_CALLABLE = "config.auth.client_ip"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# Uploads (catalog files, HF config.json) are small; refuse anything larger.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=5 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = DATA_UPLOAD_MAX_MEMORY_SIZE
# Whole request bodies, uploaded files included (catalog files are the largest legitimate ones).
MAX_REQUEST_BODY_BYTES = env.int("MAX_REQUEST_BODY_BYTES", default=10 * 1024 * 1024)

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "config.pagination.StrictPageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "planner.api.auth.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    # One JSON error shape for every API error (docs/API.md).
    "EXCEPTION_HANDLER": "planner.api.errors.api_exception_handler",
    "DEFAULT_PARSER_CLASSES": ["planner.api.parsers.SafeJSONParser"],
    # Per-token (or per-user) and per-IP request rates, e.g. "600/min".
    "DEFAULT_THROTTLE_CLASSES": ["planner.api.throttles.TokenRateThrottle", "planner.api.throttles.AnonIpRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        "token": env.str("API_THROTTLE_RATE", default="600/min"),
        "anon": env.str("API_ANON_THROTTLE_RATE", default="120/min"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "GPU Planner API",
    "DESCRIPTION": "Catalog, estimates and plans for AI infrastructure sizing and costing.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "VersionStatusEnum": "planner.choices.VersionStatus",
        # catalog choices reused by several fields (base/quote, form_factor_kind/gpu_form_factor_kind)
        "CurrencyEnum": "catalog.choices.Currency",
        "FormFactorKindEnum": "catalog.choices.FormFactorKind",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "planner.api.schema.add_error_responses",
    ],
}

# /metrics access (config/metrics_access.py): open in development; production settings close
# it to all but a bearer token (METRICS_TOKEN) or addresses/networks (METRICS_ALLOWED_IPS).
METRICS_PUBLIC = env.bool("METRICS_PUBLIC", default=DEBUG)
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
METRICS_ALLOWED_IPS = env.list("METRICS_ALLOWED_IPS", default=[])

# Celery: the broker is REDIS_URL (not CELERY_BROKER_URL, which Celery reads itself).
REDIS_URL = env.str("REDIS_URL", default="")
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_QUEUE", default="default")
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_SOFT_TIME_LIMIT = 240
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"

# Reliability (docs/RELIABILITY.md). A submit must never hang when Redis is down: publishing
# retries briefly, then plan_version_enqueue gives up and the pending row waits for the sweeper.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_TASK_PUBLISH_RETRY = True
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.25, "interval_max": 0.5}
# The longest computation any task may run (plans and catalog imports: hard limit 300 s).
LONGEST_TASK_SECONDS = 300
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "socket_connect_timeout": 2,
    "socket_timeout": 5,
    # An unacked message (its whole worker killed) is redelivered after this. Sized to the
    # longest computation plus a margin, so a slow task is never handed to a second worker
    # while the first still runs it; lost plans come back sooner through the sweeper.
    "visibility_timeout": LONGEST_TASK_SECONDS + 60,
}
# On a lost broker connection, running acks-late tasks finish and write their result to
# PostgreSQL (their ack may fail; the redelivery then finds the version done). Cancelling
# them (Celery 6's default) would throw the work away. Set explicitly: no deprecation warning.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# A worker never gives up on the broker (Celery's default stops after 100 attempts), and it
# retries every 0.5-2 s (config.celery.Consumer), so it computes again right after an outage.
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CONSUMER = "config.celery:Consumer"
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = 2
CELERY_REDIS_SOCKET_TIMEOUT = 5
CELERY_RESULT_EXPIRES = 24 * 3600
# Results live in PostgreSQL (PlanVersion, CatalogImportRun); nothing waits on Celery results,
# so a Redis outage cannot block a finished task on storing one.
CELERY_TASK_IGNORE_RESULT = True
# Queues split by work type; config.celery.route_task routes by task name. Setting CELERY_QUEUE
# to anything but "default" puts every task on that one queue (tests, tiny single-queue setups).
CELERY_WORK_QUEUES = {"compute": "compute", "exports": "exports", "periodic": "periodic"}
CELERY_TASK_ROUTES = ("config.celery.route_task",)
# A plain `celery worker` (no -Q) consumes every work queue; `-Q compute` narrows it.
CELERY_TASK_QUEUES = [
    Queue(q, Exchange(q), routing_key=q) for q in ([CELERY_TASK_DEFAULT_QUEUE] if CELERY_TASK_DEFAULT_QUEUE != "default"
                       else ["default", *CELERY_WORK_QUEUES.values()])
]
CELERY_TASK_CREATE_MISSING_QUEUES = True
# The sweeper re-queues versions pending longer than PLAN_PENDING_REQUEUE_SECONDS (broker was
# down, message lost) or running with no live worker holding their row lock (worker killed),
# and fails versions after PLAN_MAX_ATTEMPTS attempts with the reason shown to the user.
# Recovery in seconds (docs/RELIABILITY.md): every sweep is a few indexed queries and one
# Redis round trip, so it runs often.
PLAN_SWEEP_INTERVAL_SECONDS = env.float("PLAN_SWEEP_INTERVAL_SECONDS", default=5.0)
# A published version carries a Redis marker this long (gpu_planner:queued:<id>). A pending
# version without one has no message in this Redis (never published: broker down at submit;
# or Redis restarted empty) and is queued again at the next sweep; with one, it is queued
# again only after the marker expired (a message lost while Redis stayed up).
PLAN_PENDING_REQUEUE_SECONDS = env.int("PLAN_PENDING_REQUEUE_SECONDS", default=120)
# When a worker receives a version's message, the marker is cut to this many seconds (plus
# the message's countdown, if it is a retry): the worker claims the row in milliseconds, and
# a worker killed in between (its message unacked until visibility_timeout) loses the version
# for this long, not for the marker's 120 s. Expiring early on a live worker costs one
# duplicate message, never a duplicate computation.
PLAN_RECEIVED_MARK_SECONDS = env.int("PLAN_RECEIVED_MARK_SECONDS", default=10)
# A pending version younger than this is left alone: its publish on commit may be under way.
PLAN_PENDING_MIN_AGE_SECONDS = env.float("PLAN_PENDING_MIN_AGE_SECONDS", default=2.0)
PLAN_MAX_ATTEMPTS = env.int("PLAN_MAX_ATTEMPTS", default=3)
# A running row younger than this may be between its claim and its row lock (two statements
# apart): not yet dead. Taking one over early only costs an attempt, never a duplicate.
PLAN_RUNNING_GRACE_SECONDS = env.int("PLAN_RUNNING_GRACE_SECONDS", default=5)
# Price feeds (docs/CATALOG.md "Feeds"): the Bank of Russia daily rates from a configurable URL,
# daily at CBR_DAILY_HOUR_UTC (the bank sets the next day's rates in the afternoon, Moscow time);
# SkyPilot catalog CSVs weekly when SKYPILOT_CATALOG_SOURCES="AWS=<url>,GCP=<url>" is set.
CBR_DAILY_URL = env.str("CBR_DAILY_URL", default="https://www.cbr.ru/scripts/XML_daily.asp")
CBR_DAILY_HOUR_UTC = env.int("CBR_DAILY_HOUR_UTC", default=13)
FEED_TIMEOUT_SECONDS = env.float("FEED_TIMEOUT_SECONDS", default=20.0)
SKYPILOT_CATALOG_SOURCES = dict(
    item.split("=", 1) for item in env.list("SKYPILOT_CATALOG_SOURCES", default=[]) if "=" in item
)
# A plan warns when a price it uses is older than this many days at the plan date (naming the row).
PRICE_MAX_AGE_DAYS = {
    "fx": env.int("PRICE_MAX_AGE_DAYS_FX", default=7),
    "cloud": env.int("PRICE_MAX_AGE_DAYS_CLOUD", default=90),
    "hardware": env.int("PRICE_MAX_AGE_DAYS_HARDWARE", default=180),
    "quote": env.int("PRICE_MAX_AGE_DAYS_QUOTE", default=180),
}
CELERY_BEAT_SCHEDULE = {
    "sweep-plan-versions": {"task": "planner.sweep_plan_versions", "schedule": PLAN_SWEEP_INTERVAL_SECONDS},
    "import-cbr-daily": {
        "task": "catalog.import_cbr_daily",
        "schedule": crontab(minute=0, hour=CBR_DAILY_HOUR_UTC),
    },
}
if SKYPILOT_CATALOG_SOURCES:
    CELERY_BEAT_SCHEDULE["import-skypilot-catalogs"] = {
        "task": "catalog.import_skypilot_catalogs",
        "schedule": crontab(minute=30, hour=CBR_DAILY_HOUR_UTC, day_of_week="mon"),
    }
# Fault tests only: seconds a computation sleeps while holding its row lock, so a worker can
# be killed mid-computation (tests/reliability). Production settings force it to 0.
FAULT_INJECTION_COMPUTE_DELAY_SECONDS = env.float("FAULT_INJECTION_COMPUTE_DELAY_SECONDS", default=0.0)
# ... and seconds between a worker receiving a computation's message and claiming its row.
FAULT_INJECTION_CLAIM_DELAY_SECONDS = env.float("FAULT_INJECTION_CLAIM_DELAY_SECONDS", default=0.0)

# Structured logs: one JSON object per line with the request id; plain text by default while
# DEBUG is on (LOG_FORMAT=json|text overrides).
LOG_FORMAT = env.str("LOG_FORMAT", default="text" if DEBUG else "json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "config.request_id.RequestIdFilter"}},
    "formatters": {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
        "text": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["request_id"],
            "formatter": "json" if LOG_FORMAT == "json" else "text",
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}
