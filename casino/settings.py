"""Django settings, read from environment variables with safe embedded defaults.

Without any variable set the project runs on the *embedded default*: a SQLite
file under ``var/``, the in-memory channel layer and Celery's server-less
filesystem transport (a real worker process, no broker server). Production sets
``DATABASE_URL`` (PostgreSQL, as the runtime role), ``DATABASE_OWNER_URL`` (the
tables' owner, for migrations), ``REDIS_URL`` and ``CASINO_PRODUCTION=true``; see
README.md for the full list.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from kombu import Exchange, Queue

from casino.db_routing import OWNER_ALIAS
from casino.logs import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CASINO_VAR_DIR", BASE_DIR / "var"))


def env_bool(name: str, default: bool = False) -> bool:
    """Read a boolean variable: 1/true/yes/on (any case) mean true."""
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


# Django's PostgreSQL backend with a health check that needs no round trip (casino.db_backends).
POSTGRES_ENGINE = "casino.db_backends.postgresql"


def database_from_url(url: str) -> dict[str, Any]:
    """Translate ``postgres://user:pass@host:port/name?opt=v`` or
    ``sqlite:///path`` into a Django DATABASES entry."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in {"postgres", "postgresql", "pgsql"}:
        options: dict[str, Any] = dict(parse_qsl(parts.query))
        pool_size = int(os.environ.get("DB_POOL_MAX_SIZE", "0"))
        if pool_size > 0:
            # psycopg's connection pool (Django 5.1+), optional: HTTP requests run on
            # a fixed set of threads per process (casino.http), each keeping its own
            # persistent connection, so the default needs no pool. Pooling excludes
            # CONN_MAX_AGE (Django requires 0).
            options["pool"] = {
                "min_size": int(os.environ.get("DB_POOL_MIN_SIZE", "2")),
                "max_size": pool_size,
                "timeout": float(os.environ.get("DB_POOL_TIMEOUT", "10")),
            }
        return {
            "ENGINE": POSTGRES_ENGINE,
            "NAME": unquote(parts.path.lstrip("/")) or "casino",
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            "CONN_MAX_AGE": 0 if pool_size > 0 else int(os.environ.get("DB_CONN_MAX_AGE", "60")),
            "CONN_HEALTH_CHECKS": env_bool("DB_CONN_HEALTH_CHECKS", True),
            "OPTIONS": options,
            "TEST": {"NAME": os.environ.get("DATABASE_TEST_NAME") or None},
        }
    if scheme == "sqlite":
        # sqlite:///relative/path and sqlite:////absolute/path, as dj-database-url reads them.
        path = unquote(parts.netloc + parts.path)[1:] if not parts.netloc else unquote(parts.netloc + parts.path)
        return sqlite_database(Path(path) if path else VAR_DIR / "casino.sqlite3")
    raise ValueError(f"DATABASE_URL scheme {scheme!r} is not supported (postgres or sqlite)")


def sqlite_database(path: Path) -> dict[str, Any]:
    """SQLite tuned for several processes (ASGI server, worker, beat) on one file.

    WAL lets readers run beside the one writer; IMMEDIATE transactions take the
    write lock up front so two writers queue on the busy timeout instead of
    failing with "database is locked" when a read lock cannot be upgraded.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(path),
        "OPTIONS": {
            "timeout": 30,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
        "TEST": {"NAME": str(VAR_DIR / "test.sqlite3")},
    }


def owner_database(url: str) -> dict[str, Any]:
    """The owner's connection (alias ``owner``): migrations and ``setup_db_roles``
    run on it (``casino.db_routing``). Short-lived, so no pool and no persistent
    connection; under test it is the test database, as ``default``."""
    database = database_from_url(url) if url else sqlite_database(VAR_DIR / "casino.sqlite3")
    database["OPTIONS"].pop("pool", None)
    database["CONN_MAX_AGE"] = 0
    database["TEST"] = {"MIRROR": "default"}
    return database


def _secret_key() -> str:
    """The production key comes from the environment; the embedded default
    keeps a random one in ``var/`` so sessions survive a restart."""
    key = os.environ.get("DJANGO_SECRET_KEY")
    if key:
        return key
    key_file = VAR_DIR / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    key_file.write_text(key)
    key_file.chmod(0o600)
    return key


# --- Core -------------------------------------------------------------------

PRODUCTION = env_bool("CASINO_PRODUCTION")
DEBUG = env_bool("DEBUG")
SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", [] if PRODUCTION else ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "casino.apps.CasinoAdminConfig",  # django.contrib.admin; its site takes only safe lookups (casino.admin_site)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "axes",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "casino",
    "ledger",
    "games",
    "compliance",
    "client",  # the player's web client at / (docs/client.md)
]

MIDDLEWARE = [
    # First: every answer carries its X-Request-ID, and every line logged meanwhile its request id.
    "casino.log_context.RequestContextMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # Accept-Language picks English or French under /api/ (casino.i18n; the admin stays English).
    "casino.i18n.PlayerLocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "games.tables.presence.PresenceMiddleware",
    # Last: turns a login refused by django-axes' lockout into its answer (casino.auth.lockout_response).
    "axes.middleware.AxesMiddleware",
]

# django-axes first: it refuses a locked-out login before the password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "casino.urls"
ASGI_APPLICATION = "casino.asgi.application"
WSGI_APPLICATION = "casino.wsgi.application"

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
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------

# The application connects as DATABASE_URL's role; in production a role that owns
# nothing and may not rewrite the ledger (casino.db_roles). The tables' owner
# (DATABASE_OWNER_URL; unset: the same URL, as in development) runs migrations.
DATABASE_URL = os.environ.get("DATABASE_URL", "")
DATABASE_OWNER_URL = os.environ.get("DATABASE_OWNER_URL", "") or DATABASE_URL
DATABASES = {
    "default": database_from_url(DATABASE_URL) if DATABASE_URL else sqlite_database(VAR_DIR / "casino.sqlite3"),
    OWNER_ALIAS: owner_database(DATABASE_OWNER_URL),
}
DATABASE_ROUTERS = ["casino.db_routing.MigrationRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Players are answered in English or French (docs/auth.md, "Translations"): the profile's
# language, else Accept-Language; the catalogs are committed compiled (make messages).
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("fr", "Français")]
LOCALE_PATHS = [BASE_DIR / "casino" / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# The embedded default serves static files without collectstatic.
WHITENOISE_USE_FINDERS = not PRODUCTION

# --- Redis, Celery, Channels -------------------------------------------------

REDIS_URL = os.environ.get("REDIS_URL", "")
# The filesystem broker's URL names its host (kombu warns "No hostname was supplied" otherwise);
# the folders are in CELERY_BROKER_TRANSPORT_OPTIONS.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or REDIS_URL or "filesystem://localhost/"
CELERY_RESULT_BACKEND = (
    os.environ.get("CELERY_RESULT_BACKEND") or REDIS_URL or f"file://{(VAR_DIR / 'celery' / 'results').as_posix()}"
)
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = VAR_DIR / "celery" / "broker"
    for _sub in ("queue", "processed", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    (VAR_DIR / "celery" / "results").mkdir(parents=True, exist_ok=True)
    # kombu's filesystem transport with atomic writes (see casino/fs_transport.py).
    CELERY_BROKER_TRANSPORT = "casino.fs_transport:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        # kombu's default is ``control/`` in the working directory.
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
        "polling_interval": 0.1,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {"socket_connect_timeout": 2, "socket_timeout": 5}
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_RESULT_EXPIRES = 3600
# A task is acknowledged after it ran, so a killed worker's task is redelivered;
# every task is idempotent (it carries the phase sequence it expects).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The health check's ping has a queue of its own, so it never queues behind (or
# between) dealer tasks; a worker started without ``-Q`` consumes both queues.
HEALTH_CHECK_QUEUE = os.environ.get("HEALTH_CHECK_QUEUE", "health")
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = tuple(
    Queue(name, Exchange(name), routing_key=name) for name in (CELERY_TASK_DEFAULT_QUEUE, HEALTH_CHECK_QUEUE)
)
CELERY_TASK_ROUTES = {"casino.ping": {"queue": HEALTH_CHECK_QUEUE}}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # Seal the ledger's events (Merkle root + HMAC) every minute.
    "ledger-seal": {"task": "ledger.seal", "schedule": float(os.environ.get("CASINO_SEAL_INTERVAL", "60"))},
    # Responsible gaming: reality-check reminders to players whose interval has passed.
    "reality-check": {"task": "casino.reality_check", "schedule": 60.0},
    # The dealer loop's backstop: advance overdue tables, void rounds whose dealer is gone,
    # start open tables that have no round (games.house.tasks.sweep_tables).
    "games-sweep": {"task": "games.sweep", "schedule": float(os.environ.get("CASINO_SWEEP_INTERVAL", "1"))},
    # The same backstop for the poker ring-game tables (games.poker.tasks).
    "poker-sweep": {"task": "games.poker.sweep", "schedule": float(os.environ.get("CASINO_SWEEP_INTERVAL", "1"))},
    # Tournaments: scheduled starts, and the step of any tournament with a table waiting or a level due.
    "tournament-sweep": {
        "task": "games.poker.tournament_sweep",
        "schedule": float(os.environ.get("CASINO_SWEEP_INTERVAL", "1")),
    },
}
# The make run demo: bots fill and play the demo Sit & Go (games.poker.demo_bots); serve turns it on.
CASINO_DEMO_BOTS = os.environ.get("CASINO_DEMO_BOTS", "") == "1"
CASINO_DEMO_BOT_JOIN_SECONDS = float(os.environ.get("CASINO_DEMO_BOT_JOIN_SECONDS", "20"))
if CASINO_DEMO_BOTS:
    CELERY_BEAT_SCHEDULE["demo-bots"] = {"task": "games.poker.demo_bots", "schedule": 2.0}

# Messages a consumer's channel may hold (chat lines, notices): a group send to a
# full channel is dropped silently by both layers, so a burst of chat to a
# client that reads a little late must fit (the layers' default is 100).
CHANNEL_LAYER_CAPACITY = int(os.environ.get("CHANNEL_LAYER_CAPACITY", "1000"))
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": os.environ.get("CHANNEL_LAYER_BACKEND", "channels_redis.core.RedisChannelLayer"),
            # redis-py 8 reads with a 5 s socket timeout by default, the same as
            # channels_redis's 5 s blocking pop: an idle consumer then fails with
            # "Timeout reading". The socket timeout must exceed the pop's.
            # redis-py 8 pools also cap at 100 connections and raise when exhausted;
            # a process with thousands of websockets needs more at once.
            "CONFIG": {
                "hosts": [
                    {
                        "address": REDIS_URL,
                        "socket_timeout": 30,
                        "max_connections": int(os.environ.get("CHANNEL_LAYER_MAX_CONNECTIONS", "2000")),
                    }
                ]
            },
        }
    }
    if str(CHANNEL_LAYERS["default"]["BACKEND"]).endswith("core.RedisChannelLayer"):  # pubsub has no capacity
        CHANNEL_LAYERS["default"]["CONFIG"]["capacity"] = CHANNEL_LAYER_CAPACITY  # type: ignore[index]
else:
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": CHANNEL_LAYER_CAPACITY}}
    }

# Health (casino/health.py, docs/live.md "Health"). ``GET /api/health/live`` is
# public and touches nothing; the readiness check ``GET /api/health/`` is for
# staff or for a caller sending ``HEALTH_CHECK_TOKEN`` in ``X-Health-Check-Token``
# (empty: staff only). Each component may take ``HEALTH_CHECK_TIMEOUT`` seconds;
# one check runs at a time per process and its result is reused by concurrent
# callers for ``HEALTH_CHECK_CACHE_SECONDS``.
HEALTH_CHECK_TOKEN = os.environ.get("HEALTH_CHECK_TOKEN", "")
HEALTH_CHECK_TIMEOUT = float(os.environ.get("HEALTH_CHECK_TIMEOUT", "2"))
HEALTH_CHECK_CACHE_SECONDS = float(os.environ.get("HEALTH_CHECK_CACHE_SECONDS", "5"))

# --- Logins and tokens (docs/auth.md) ------------------------------------------

# Reverse proxies in front of the ASGI server that append to X-Forwarded-For. 0:
# the client is the TCP peer and the header is never read; N: the client is the
# header's Nth entry from the right (casino.auth.client_ip). uvicorn runs with
# --no-proxy-headers (casino.processes.uvicorn_command), so it never rewrites
# the peer address itself.
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT", "0"))
# django-axes: a username or a client address with this many failed logins
# (API and admin) within the cool-off is locked out until the cool-off has
# passed since its last failure; the API answers 429 ``login_locked_out``.
AXES_FAILURE_LIMIT = int(os.environ.get("CASINO_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(seconds=float(os.environ.get("CASINO_LOGIN_COOLOFF_SECONDS", "900")))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]  # either one locks: per account and per address
AXES_CLIENT_IP_CALLABLE = "casino.auth.client_ip"
AXES_LOCKOUT_CALLABLE = "casino.auth.lockout_response"
AXES_RESET_ON_SUCCESS = False  # one's own valid account must not wipe an address's failures
AXES_HTTP_RESPONSE_CODE = 429
# django-axes logs "AXES: BEGIN version ..." from every process and every manage.py command: noise.
AXES_VERBOSE = False
# django-rest-knox: API tokens stored as SHA-512 digests, expiring this long
# after login (no sliding renewal: the bet path never writes the token).
CASINO_TOKEN_TTL_SECONDS = int(os.environ.get("CASINO_TOKEN_TTL_SECONDS", str(10 * 3600)))
REST_KNOX = {
    "TOKEN_TTL": timedelta(seconds=CASINO_TOKEN_TTL_SECONDS),
    "AUTH_HEADER_PREFIX": "Token",
    "AUTO_REFRESH": False,
}
# Websocket tickets (POST /api/auth/ws-ticket/): single use, valid this long.
CASINO_WS_TICKET_SECONDS = int(os.environ.get("CASINO_WS_TICKET_SECONDS", "30"))


def _shared_cache(name: str) -> dict[str, Any]:
    """A cache every process shares: Redis with ``REDIS_URL`` (keys under
    ``casino:<name>``), else the memory of the one ASGI process of the embedded default."""
    if not REDIS_URL:
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": name}
    return {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": f"casino:{name}",
        "OPTIONS": {"socket_timeout": 2, "socket_connect_timeout": 2},
    }


CACHES: dict[str, dict[str, Any]] = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # Websocket tickets: a ticket from one process opens a socket on another, one DEL wins.
    "ws_tickets": _shared_cache("ws-ticket"),
    # DRF's request rates (casino.throttling): a player or a client address gets
    # the same rate however many ASGI processes serve it.
    "throttles": _shared_cache("throttle"),
}

# --- API ----------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "casino.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "casino.schema.CasinoAutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "casino.api.exception_handler",
    # Bodies are checked at the edge (casino.json_input: too_deep, invalid_text, invalid_json); form
    # bodies get the same text check (casino.parsers: invalid_text).
    "DEFAULT_PARSER_CLASSES": [
        "casino.parsers.JSONBodyParser",
        "casino.parsers.CheckedFormParser",
        "casino.parsers.CheckedMultiPartParser",
    ],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "casino.api.JSONFirstNegotiation",
    # DRF's throttles identify clients as casino.auth.client_ip does (never from an untrusted header).
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Casino hold'em backend API",
    "DESCRIPTION": "Player and operator API of the event-sourced hold'em game backend.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # games.tables.api.DatabaseIdConverter: a table id the database's bigint can hold (larger: 404).
    # casino.converters.TextConverter: a path segment without NUL (with one: 404).
    "PATH_CONVERTER_OVERRIDES": {
        "id": {"type": "integer", "format": "int64", "minimum": 0, "maximum": 2**63 - 1},
        "text": {"type": "string"},
    },
    # The settings' language (with labels) and the help pages' ``language`` (codes): one enum name each.
    "ENUM_NAME_OVERRIDES": {
        "PlayerLanguageEnum": "casino.models.Language",
        "HelpLanguageEnum": ["en", "fr"],
    },
}

# --- Casino -------------------------------------------------------------------

CASINO_VERSION = "0.1.0"
# Test laboratories may force outcomes; never in production (see casino.checks).
CASINO_ALLOW_SCRIPTED_SHOE = env_bool("CASINO_ALLOW_SCRIPTED_SHOE")
# The fault simulator (manage.py simulate_faults, docs/simulation.md): a development
# tool, on by default outside production; check --deploy refuses it (casino.checks).
CASINO_ALLOW_SIMULATOR = env_bool("CASINO_ALLOW_SIMULATOR", not PRODUCTION)
CASINO_DEFAULT_CURRENCY = os.environ.get("CASINO_DEFAULT_CURRENCY", "EUR")
# RULES.md: one seat per table, at most 4 tables at once (configurable).
CASINO_MAX_TABLES_PER_PLAYER = int(os.environ.get("CASINO_MAX_TABLES_PER_PLAYER", "4"))
# Responsible gaming: a play session ends after this many minutes without a
# wager; the next wager starts a new one (docs/cashier-and-responsible-gaming.md).
CASINO_RG_SESSION_IDLE_GAP_MINUTES = int(os.environ.get("CASINO_RG_SESSION_IDLE_GAP_MINUTES", "30"))
# A phase overdue by more than the grace is advanced by the beat sweeper; a round
# whose dealer has been gone longer than the void limit is voided with refunds.
CASINO_SWEEP_GRACE_SECONDS = float(os.environ.get("CASINO_SWEEP_GRACE_SECONDS", "3"))
CASINO_DEALER_GONE_VOID_SECONDS = float(os.environ.get("CASINO_DEALER_GONE_VOID_SECONDS", "120"))
# The operator's dashboard (the admin's index page; docs/live.md, "Operator's dashboard"): how often it
# refreshes itself, and its alerts' thresholds. A live table whose phase deadline passed more than
# QUEUE_LAG seconds ago with no action is late (the dealer's task queue is behind), more than DEALER_GONE
# seconds ago its dealer is gone (no worker or no beat: the sweeper would have moved it). FEED_LAG: a
# database transaction open longer holds back the feed and the seals. SEAL_AGE: an event older than
# this not sealed yet. PAYMENT_WAIT_MINUTES: a payment waiting that long for the provider's callback.
# RG_SHARE_PERCENT: a player who used this share of a responsible-gaming limit is listed (at most
# RG_PLAYERS players are looked at, the most recently active first).
CASINO_DASHBOARD_REFRESH_SECONDS = float(os.environ.get("CASINO_DASHBOARD_REFRESH_SECONDS", "10"))
CASINO_DASHBOARD_QUEUE_LAG_SECONDS = float(os.environ.get("CASINO_DASHBOARD_QUEUE_LAG_SECONDS", "5"))
CASINO_DASHBOARD_DEALER_GONE_SECONDS = float(os.environ.get("CASINO_DASHBOARD_DEALER_GONE_SECONDS", "20"))
CASINO_DASHBOARD_FEED_LAG_SECONDS = float(os.environ.get("CASINO_DASHBOARD_FEED_LAG_SECONDS", "5"))
CASINO_DASHBOARD_SEAL_AGE_SECONDS = float(os.environ.get("CASINO_DASHBOARD_SEAL_AGE_SECONDS", "300"))
CASINO_DASHBOARD_PAYMENT_WAIT_MINUTES = float(os.environ.get("CASINO_DASHBOARD_PAYMENT_WAIT_MINUTES", "30"))
CASINO_DASHBOARD_RG_SHARE_PERCENT = float(os.environ.get("CASINO_DASHBOARD_RG_SHARE_PERCENT", "80"))
CASINO_DASHBOARD_RG_PLAYERS = int(os.environ.get("CASINO_DASHBOARD_RG_PLAYERS", "500"))
# Table chat: at most this many messages per player per table in the window (seconds).
CASINO_CHAT_RATE = int(os.environ.get("CASINO_CHAT_RATE", "5"))
CASINO_CHAT_RATE_WINDOW = float(os.environ.get("CASINO_CHAT_RATE_WINDOW", "10"))
# Group commit (games.house.realtime.batcher): at most this many commands of one
# table per batch, written by a pool of this many threads per ASGI process, after
# waiting this long (seconds; 0: none) for more commands once the first arrives.
CASINO_GROUP_COMMIT_MAX = int(os.environ.get("CASINO_GROUP_COMMIT_MAX", "256"))
CASINO_GROUP_COMMIT_THREADS = int(os.environ.get("CASINO_GROUP_COMMIT_THREADS", "2"))
CASINO_GROUP_COMMIT_LINGER = float(os.environ.get("CASINO_GROUP_COMMIT_LINGER", "0"))
# The websocket relay (one per ASGI process) polls the event store's safe global log this often.
CASINO_RELAY_POLL_SECONDS = float(os.environ.get("CASINO_RELAY_POLL_SECONDS", "0.05"))
# The feed reads past a transaction of this database that has held the global log's safe bound
# this long, and delivers its events when it commits (ledger.services.events.LogFollower;
# docs/ledger.md, "Global order"): a stuck transaction delays deltas by about this much.
CASINO_FEED_GAP_SECONDS = float(os.environ.get("CASINO_FEED_GAP_SECONDS", "3"))
# ``setup_db_roles`` sets PostgreSQL's idle_in_transaction_session_timeout on the runtime role
# to this (seconds; 0: none): a session idle in a transaction this long is ended, so it can hold
# back seals and exports (which never read past a transaction of this database) for no longer.
CASINO_DB_IDLE_IN_TRANSACTION_SECONDS = float(os.environ.get("CASINO_DB_IDLE_IN_TRANSACTION_SECONDS", "30"))
# Websocket backpressure (games/tables/feed.py): a connection whose outbound queue holds more than this
# many frames, or whose current send has not completed within this many seconds, is closed with
# 4408 ("too slow: reconnect with your last seq and take a snapshot").
CASINO_WS_OUTBOX_FRAMES = int(os.environ.get("CASINO_WS_OUTBOX_FRAMES", "256"))
CASINO_WS_SEND_TIMEOUT_SECONDS = float(os.environ.get("CASINO_WS_SEND_TIMEOUT_SECONDS", "5"))
# The 4408 close frame waits this long for the too-slow client to take it (it gets it once it
# reads again); past that, the TCP connection is aborted (games/tables/feed.py, Outbox).
CASINO_WS_CLOSE_GRACE_SECONDS = float(os.environ.get("CASINO_WS_CLOSE_GRACE_SECONDS", "10"))
# An ASGI server process keeps what survived a full garbage collection out of the next ones
# (gc.freeze) and walks everything again once that set has grown by a quarter
# (casino.collector.LongLivedFrozen; docs/websocket.md, "Delivery"). Off: CPython's own schedule.
CASINO_GC_FREEZE = env_bool("CASINO_GC_FREEZE", True)
# Once the process's realtime feed runs, it runs those walks of everything itself, when no
# hand-out has been open or ended for this many seconds (games.tables.collector.walk_if_quiet);
# one it has not run within CASINO_GC_WALK_DUE_MAX_SECONDS of coming due (or by the time the
# frozen set has doubled since the last walk) runs at the next full collection regardless.
CASINO_GC_WALK_QUIET_SECONDS = float(os.environ.get("CASINO_GC_WALK_QUIET_SECONDS", "2"))
CASINO_GC_WALK_DUE_MAX_SECONDS = float(os.environ.get("CASINO_GC_WALK_DUE_MAX_SECONDS", "300"))
# Threads per ASGI process running players' websocket commands (each holds one database connection).
CASINO_WS_COMMAND_THREADS = int(os.environ.get("CASINO_WS_COMMAND_THREADS", "4"))
# `bench bets` only: serve the bare DRF endpoint it compares the bet path with
# (games/benchmarks/bare.py). Never in production.
CASINO_BENCH_ENDPOINTS = env_bool("CASINO_BENCH_ENDPOINTS") and not PRODUCTION
# Websocket inbound limits (docs/websocket.md, "Limits"). A frame over the size
# is not parsed (uvicorn closes 1009; ``casino.processes.uvicorn_command`` passes
# it as ``--ws-max-size``); messages beyond the per-connection token bucket
# (``RATE`` per second, ``BURST`` at once) are answered ``rate_limited``, and a
# connection refused ``FLOOD_CLOSE`` times in a row is closed 1008; one player
# holds at most ``MAX_CONNECTIONS_PER_PLAYER`` websockets (both families, every
# process when Redis is configured), the next is closed 4429.
# How deep a JSON body or websocket frame may nest arrays and objects (casino.json_input: too_deep).
CASINO_JSON_MAX_DEPTH = int(os.environ.get("CASINO_JSON_MAX_DEPTH", "32"))
CASINO_WS_MAX_FRAME_BYTES = int(os.environ.get("CASINO_WS_MAX_FRAME_BYTES", str(16 * 1024)))
CASINO_WS_RATE = float(os.environ.get("CASINO_WS_RATE", "10"))
CASINO_WS_BURST = int(os.environ.get("CASINO_WS_BURST", "20"))
CASINO_WS_FLOOD_CLOSE = int(os.environ.get("CASINO_WS_FLOOD_CLOSE", "50"))
CASINO_WS_MAX_CONNECTIONS_PER_PLAYER = int(os.environ.get("CASINO_WS_MAX_CONNECTIONS_PER_PLAYER", "8"))
# A connection's entry in the Redis registry expires this long after its
# process last refreshed it (a crashed process's connections are forgotten).
CASINO_WS_CONNECTION_TTL_SECONDS = float(os.environ.get("CASINO_WS_CONNECTION_TTL_SECONDS", "30"))
# Presence at a table (games.tables.presence, docs/websocket.md "Presence"): a player is
# present while a websocket of theirs to the table holds its lease (refreshed every
# third of the lease; a killed process's lease runs out), or for the grace after
# their last REST call to the table.
CASINO_PRESENCE_GRACE_SECONDS = float(os.environ.get("CASINO_PRESENCE_GRACE_SECONDS", "30"))
CASINO_PRESENCE_LEASE_SECONDS = float(os.environ.get("CASINO_PRESENCE_LEASE_SECONDS", "15"))
# Key for ledger seals and export manifests (HMAC-SHA256). Production must set it.
CASINO_SEAL_KEY = os.environ.get("CASINO_SEAL_KEY") or ("" if PRODUCTION else f"dev-only:{SECRET_KEY}")
# Key of the events' MACs (HMAC-SHA256 over each event's hash, docs/ledger.md,
# "Event MACs"): the database never holds it, so no database insider can write
# an event that verifies. Production must set it (>= 32 characters, not the seal
# key). Retired keys (comma-separated) still verify the events written under
# them, never sign new ones (rotation: docs/ledger.md).
CASINO_EVENT_MAC_KEY = os.environ.get("CASINO_EVENT_MAC_KEY") or (
    "" if PRODUCTION else hashlib.sha256(f"event-mac-dev-only:{SECRET_KEY}".encode()).hexdigest()
)
CASINO_EVENT_MAC_RETIRED_KEYS = [
    key.strip() for key in os.environ.get("CASINO_EVENT_MAC_RETIRED_KEYS", "").split(",") if key.strip()
]
# An audit export seals first and waits up to this long (seconds) for the seal to cover the
# period (a transaction of this database still running holds the seal back; see above), then
# answers period_not_sealed.
CASINO_EXPORT_SEAL_WAIT_SECONDS = float(os.environ.get("CASINO_EXPORT_SEAL_WAIT_SECONDS", "10"))
# Ed25519 seed (64 hex digits) signing compliance export manifests; regulators
# pin its public key (docs/compliance.md). Production must set it.
CASINO_EXPORT_SIGNING_KEY = os.environ.get("CASINO_EXPORT_SIGNING_KEY") or (
    "" if PRODUCTION else hashlib.sha256(f"export-dev-only:{SECRET_KEY}".encode()).hexdigest()
)
# Card key (64 hex digits): wraps each deal's data key and derives the players' keys that
# seal face-down cards at rest (games.cards.vault, docs/fairness.md). Never stored in the
# database. Retired keys (comma-separated) are still opened, never used for new seals.
CASINO_CARD_KEY = os.environ.get("CASINO_CARD_KEY") or (
    "" if PRODUCTION else hashlib.sha256(f"card-dev-only:{SECRET_KEY}".encode()).hexdigest()
)
CASINO_CARD_KEYS_RETIRED = [k.strip() for k in os.environ.get("CASINO_CARD_KEYS_RETIRED", "").split(",") if k.strip()]
# Shared secret of the payment provider's HMAC-signed cashier callbacks.
CASINO_PSP_CALLBACK_KEY = os.environ.get("CASINO_PSP_CALLBACK_KEY") or ("" if PRODUCTION else f"psp-dev:{SECRET_KEY}")

# --- Production hardening -------------------------------------------------------

if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"

# Logs (casino.logs, docs/live.md "Logs"): one line per record, with the request id, player, table,
# game number or hand id and Celery task where known. LOG_FORMAT is the terminal's (standard error)
# format: json (production's default) or plain. CASINO_LOG_FILE (manage.py serve sets one per process
# under var/log/): every record there as JSON lines, and only CASINO_LOG_CONSOLE_LEVEL (WARNING) and
# above on the terminal; CASINO_BOTS_LOG_FILE: the demo bots' lines there instead.
LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO").upper()
LOG_FORMAT = os.environ.get("LOG_FORMAT", "json" if PRODUCTION else "plain").lower()
CASINO_LOG_FILE = os.environ.get("CASINO_LOG_FILE", "")
CASINO_BOTS_LOG_FILE = os.environ.get("CASINO_BOTS_LOG_FILE", "")
LOGGING = logging_config(
    level=LOG_LEVEL,
    console_format=LOG_FORMAT,
    log_file=CASINO_LOG_FILE,
    console_level=os.environ.get("CASINO_LOG_CONSOLE_LEVEL", "").upper(),
    bots_log_file=CASINO_BOTS_LOG_FILE,
    # Beat's tasks that run more often than once a minute: their lines when they did nothing are dropped.
    routine_tasks=[entry["task"] for entry in CELERY_BEAT_SCHEDULE.values() if float(entry["schedule"]) < 60],
    bot_tasks=["games.poker.demo_bots"],
    bot_loggers=["games.poker.demo_bots"],
    local_broker=CELERY_BROKER_URL.startswith("filesystem://") and "pickle" not in CELERY_ACCEPT_CONTENT,
)
# uvicorn's own loggers keep their filters (and --no-access-log); a URL's query
# string may carry a websocket ticket, so casino.apps adds casino.log_filters'
# StripQueryStrings to them (docs/auth.md, "Logs").

# Metrics and error tracking (issue 36) -----------------------------------------------------------

# Prometheus (casino/metrics.py, docs/live.md "Metrics"): every process writes its series into this
# directory (prometheus_client's multi-process mode) and ``GET /metrics`` adds them up. It is exported
# as PROMETHEUS_MULTIPROC_DIR, so the processes a process starts write there too; ``serve`` empties it
# at start (the tests' plugin, for each run). ``GET /metrics`` is for staff or a caller sending
# ``Authorization: Bearer <METRICS_TOKEN>`` (empty: staff only).
METRICS_MULTIPROC_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or str(VAR_DIR / "prometheus")
os.environ["PROMETHEUS_MULTIPROC_DIR"] = METRICS_MULTIPROC_DIR
Path(METRICS_MULTIPROC_DIR).mkdir(parents=True, exist_ok=True)
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
# Sentry (casino/error_tracking.py): on only when SENTRY_DSN is set; what it sends is scrubbed of
# cards, tokens, passwords, tickets, cookies and Authorization headers.
SENTRY_DSN = os.environ.get("SENTRY_DSN", "")
SENTRY_ENVIRONMENT = os.environ.get("SENTRY_ENVIRONMENT", "production" if PRODUCTION else "development")
SENTRY_TRACES_SAMPLE_RATE = float(os.environ.get("SENTRY_TRACES_SAMPLE_RATE", "0"))
if SENTRY_DSN:
    from casino.error_tracking import init_sentry

    init_sentry(dsn=SENTRY_DSN, environment=SENTRY_ENVIRONMENT, release=CASINO_VERSION,
                traces_sample_rate=SENTRY_TRACES_SAMPLE_RATE)  # fmt: skip
