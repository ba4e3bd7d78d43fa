"""Django settings: one file, driven by environment variables with safe defaults.

The embedded default (no environment at all) is SQLite, an in-memory channel layer and replays run
in-process; production sets DATABASE_URL (PostgreSQL), REDIS_URL (Celery broker, channel layer) and
SECRET_KEY.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dj_database_url

from schedviz.lib.env import env_bool, env_float, env_int, env_list

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("SCHEDVIZ_DATA_DIR", str(BASE_DIR / "var")))
DATA_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and env_bool("SCHEDVIZ_REQUIRE_SECRET_KEY", False):
        raise RuntimeError("SECRET_KEY must be set")
    # Development only: a fixed key is fine for a laptop, and the production checks flag it.
    SECRET_KEY = "django-insecure-schedviz-development-key-change-me"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "schedviz.accounts",
    "schedviz.ingestion",
    "schedviz.replays",
    "schedviz.api",
    "schedviz.streaming",
    "schedviz.live",
    "schedviz.plans",
    "schedviz.metrics",  # /metrics (after the apps whose state it reads and hooks into)
]

MIDDLEWARE = [
    # first: it times the whole request (schedviz/metrics.py, /metrics)
    "schedviz.metrics.RequestMetricsMiddleware",
    "schedviz.api.middleware.SecurityHeadersMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "schedviz.api.middleware.StaticFilesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # a password check the sign-in throttle refused: 429 with Retry-After (schedviz/accounts/signin_throttle.py)
    "schedviz.accounts.middleware.SigninLockoutMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # last: it sees the views' exceptions first (a database that cannot be reached: 503, not 500)
    "schedviz.api.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "schedviz.urls"
ASGI_APPLICATION = "schedviz.asgi.application"
WSGI_APPLICATION = "schedviz.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [Path(__file__).resolve().parent / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{DATA_DIR / 'schedviz.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
        conn_health_checks=True,  # a connection kept across requests is checked before reuse
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default under concurrent use: every transaction takes SQLite's write lock when it
    # begins (BEGIN IMMEDIATE), so one that reads then writes waits its turn (up to the busy timeout)
    # instead of failing at once with "database is locked" when another commits first; with WAL,
    # readers outside transactions never wait for writers.
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options["timeout"] = env_int("SQLITE_BUSY_TIMEOUT", 30)
    _options["transaction_mode"] = "IMMEDIATE"
    _options["init_command"] = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # an unreachable server fails a request in seconds (a 503), instead of hanging it
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options.setdefault("connect_timeout", env_int("DATABASE_CONNECT_TIMEOUT", 5))
    # A pool of connections per process (Django's, on psycopg_pool): under ASGI each request runs on
    # a thread of its own, so without it every request would open (and close) a connection. A request
    # that waits longer than DATABASE_POOL_TIMEOUT for one (the server away, or every connection
    # busy) fails with a 503. DATABASE_POOL_MAX_SIZE=0 turns pooling off (then DATABASE_CONN_MAX_AGE).
    _pool_max = env_int("DATABASE_POOL_MAX_SIZE", 20)
    if _pool_max > 0 and not DATABASES["default"].get("CONN_MAX_AGE"):
        _options["pool"] = {
            "min_size": min(env_int("DATABASE_POOL_MIN_SIZE", 2), _pool_max),
            "max_size": _pool_max,
            "timeout": env_int("DATABASE_POOL_TIMEOUT", max(5, int(_options["connect_timeout"]) + 2)),
            "max_idle": 300,
        }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = DATA_DIR / "static"
# The built explorer ships inside the package (frontend/ builds into it; the wheel carries it).
EXPLORER_DIR = Path(__file__).resolve().parent / "explorer"
STATICFILES_DIRS = [p for p in [EXPLORER_DIR] if p.exists()]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"

# Sign-in throttling (schedviz/accounts/signin_throttle.py): every password check (the sign-in pages,
# the admin's, a password change's old password) goes through the backend below. Failures are counted
# in a sliding window per account (the normalised username) and per client address (REMOTE_ADDR, set
# by uvicorn from X-Forwarded-For for the proxies in FORWARDED_ALLOW_IPS); past either limit, attempts
# are refused without checking the password (429, Retry-After) until the failures age out of the
# window. A successful sign-in clears the account's count. 0 turns a limit off.
AUTHENTICATION_BACKENDS = ["schedviz.accounts.backends.ThrottledModelBackend"]
SCHEDVIZ_LOGIN_FAILURES_PER_ACCOUNT = env_int("SCHEDVIZ_LOGIN_FAILURES_PER_ACCOUNT", 5)
SCHEDVIZ_LOGIN_FAILURES_PER_ADDRESS = env_int("SCHEDVIZ_LOGIN_FAILURES_PER_ADDRESS", 20)
SCHEDVIZ_LOGIN_WINDOW_SECONDS = env_int("SCHEDVIZ_LOGIN_WINDOW_SECONDS", 15 * 60)

# Redis: the Celery broker and the channel layer. Absent: in-memory layer, replays run in-process.
REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS: dict[str, Any] = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [REDIS_URL]}}
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Custom scheduler plugins (docs/plugins.md): modules imported at startup, comma-separated, each
# "pkg.module" (its classes call registry.register) or "pkg.module:Class". Web and worker alike.
SCHEDVIZ_PLUGIN_MODULES = [
    m.strip() for m in os.environ.get("SCHEDVIZ_PLUGIN_MODULES", "").split(",") if m.strip()
]

# How replays run: "celery" (a worker via Redis), "thread" (in-process background thread) or "sync"
# (inside the request; tests). Default: celery with Redis, a thread without.
SCHEDVIZ_TASK_MODE = os.environ.get("SCHEDVIZ_TASK_MODE", "celery" if REDIS_URL else "thread")
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "schedviz"
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("SCHEDVIZ_TASK_VISIBILITY_SECONDS", 3600)}
# A running replay whose worker has not reported for this long may be re-run (POST .../rerun/).
SCHEDVIZ_STALE_SECONDS = env_int("SCHEDVIZ_STALE_SECONDS", 120)
# Bounds on a replay's (or a report's) work, wall clock (schedviz/engine/budget.py): a scheduling cycle
# past SCHEDVIZ_CYCLE_SECONDS is stopped and stored as an Error with the reason, and the replay goes on;
# reading the snapshot and configuration, and building the scheduler (profiles, plugins, the cluster)
# past SCHEDVIZ_SETUP_SECONDS each fail the replay (0: no limit). A running replay notices a cancel (or
# that another worker took it over) within SCHEDVIZ_CANCEL_POLL_SECONDS.
SCHEDVIZ_CYCLE_SECONDS = env_float("SCHEDVIZ_CYCLE_SECONDS", 10.0)
SCHEDVIZ_SETUP_SECONDS = env_float("SCHEDVIZ_SETUP_SECONDS", 120.0)
SCHEDVIZ_CANCEL_POLL_SECONDS = env_float("SCHEDVIZ_CANCEL_POLL_SECONDS", 0.4)
# Fairness between users: replays and reports of one owner run at most this many at a time (0: no
# limit). In-process ("thread" mode) they run on SCHEDVIZ_REPLAY_THREADS threads, owners served in
# turn; on Celery a task whose owner is at the limit goes back to the queue for
# SCHEDVIZ_REPLAY_RETRY_SECONDS instead of holding a worker.
SCHEDVIZ_REPLAYS_PER_USER = env_int("SCHEDVIZ_REPLAYS_PER_USER", 1)
SCHEDVIZ_REPLAY_THREADS = env_int("SCHEDVIZ_REPLAY_THREADS", 2)
SCHEDVIZ_REPLAY_RETRY_SECONDS = env_float("SCHEDVIZ_REPLAY_RETRY_SECONDS", 3.0)
# What a process keeps between requests (schedviz/ingestion/enginecache.py, schedviz/replays/cursors.py):
# the engine's readings of stored snapshots, up to this many objects in all (150,000 pods take ~2 GiB;
# 0 keeps none), and this many replays stood at a cycle, for the cycle pages' node inspection and
# Why here? (0 keeps none: each question replays from the start).
SCHEDVIZ_ENGINE_CACHE_OBJECTS = env_int("SCHEDVIZ_ENGINE_CACHE_OBJECTS", 400_000)
SCHEDVIZ_REPLAY_CURSORS = env_int("SCHEDVIZ_REPLAY_CURSORS", 2)
# the longest an API token may live; 0: no limit, and tokens that never expire may be asked for
SCHEDVIZ_TOKEN_MAX_DAYS = env_int("SCHEDVIZ_TOKEN_MAX_DAYS", 365)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "schedviz.accounts.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "schedviz.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "schedviz.api.errors.exception_handler",
    "DEFAULT_THROTTLE_RATES": {
        "uploads": os.environ.get("SCHEDVIZ_UPLOAD_RATE", "60/hour"),
        "user": os.environ.get("SCHEDVIZ_API_RATE", "10000/hour"),
    },
    "DEFAULT_THROTTLE_CLASSES": ["schedviz.api.throttling.UserRateThrottle"],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "SchedViz API",
    "DESCRIPTION": "Replays and explains kube-scheduler v1.35 decisions: snapshots, replays, cycles, explain, reports.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # the docs pages' assets are served locally (no CDN)
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "PlanKindEnum": "schedviz.plans.models.Plan.Kind",
        "PlanStatusEnum": "schedviz.plans.models.Plan.Status",
    },
}

# The rate-limit counters: in Redis when there is one, so that every web process counts the same
# requests (short timeouts: an unreachable cache lets requests through, schedviz/api/throttling.py).
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": os.environ.get("SCHEDVIZ_CACHE_URL", REDIS_URL),
        "KEY_PREFIX": "schedviz",
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    }
    if os.environ.get("SCHEDVIZ_CACHE_URL", REDIS_URL)
    # room for the sign-in throttle's counters (a key per account or address and minute) besides the rates'
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "OPTIONS": {"MAX_ENTRIES": 50_000}}
}

# Upload limits (bytes, counts); see schedviz/ingestion/parsing.py Limits.from_env.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("SCHEDVIZ_MAX_UPLOAD_BYTES", 50 * 1024 * 1024) + 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# Production hardening, on when DEBUG is off and TLS is declared.
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
if env_bool("SCHEDVIZ_TLS", False):
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

# LOG_FORMAT=json: one JSON object a line (time, level, logger, message, exception), uvicorn's lines too
LOG_FORMAT = os.environ.get("LOG_FORMAT", "text").strip().lower()
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "schedviz.lib.logjson.JsonFormatter"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", **({"formatter": "json"} if LOG_FORMAT == "json" else {})}
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
if LOG_FORMAT == "json":
    LOGGING["loggers"] = {
        name: {"handlers": ["console"], "propagate": False}
        for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "celery", "daphne")
    }
# /metrics for a Prometheus scraper that is not a staff user: Authorization: Bearer <this>
SCHEDVIZ_METRICS_TOKEN = os.environ.get("SCHEDVIZ_METRICS_TOKEN", "")
