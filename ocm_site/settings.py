"""Settings for the transcript workbench, read from the environment.

DJANGO_SECRET_KEY, DJANGO_DEBUG, DJANGO_ALLOWED_HOSTS and DATABASE_URL (dj-database-url;
a SQLite file in the project folder by default). With DJANGO_DEBUG=false the site is served
over HTTPS only (secure cookies, HSTS, redirect; DJANGO_HTTPS_ONLY=false for a local
production-like stack on plain http); DJANGO_BEHIND_TLS_PROXY=true when a proxy
or load balancer terminates TLS and says so in X-Forwarded-Proto. docs/security.md explains
the headers and limits set here.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONE, SELF
from django.core.management.utils import get_random_secret_key

from ocm_site.storages import task_storages

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


DEBUG = env_bool("DJANGO_DEBUG", True)

# A development default that is stable for one process but never a shared constant; any
# real deployment sets DJANGO_SECRET_KEY (and DJANGO_DEBUG=false).
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or (
    get_random_secret_key() if not DEBUG else "dev-only-insecure-key-set-DJANGO_SECRET_KEY"
)

ALLOWED_HOSTS = [
    h.strip()
    for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")
    if h.strip()
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "axes",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "csp",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "ninja",
    "django_tasks",
    "django_tasks_db",
    "editor",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "editor.middleware.UploadSizeLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "editor.middleware.LoginRequiredForPagesMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "editor.middleware.ThrottleMiddleware",
    "editor.middleware.DatabaseUnavailableMiddleware",
    # Last, as django-axes asks: it turns a lockout raised during authentication into a page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "ocm_site.urls"

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

WSGI_APPLICATION = "ocm_site.wsgi.application"
ASGI_APPLICATION = "ocm_site.asgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DJANGO_CONN_MAX_AGE", "0")),
        # A kept connection is checked before a request reuses it (the server may have gone).
        conn_health_checks=True,
    )
}

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Readers never wait for a writer (WAL); a writer waits up to 20 s for another one instead
    # of failing at once; a transaction takes the write lock when it begins (IMMEDIATE), so two
    # transactions never both read and then fail to upgrade. An import holds the lock only
    # while it writes (editor.importing), and task workers beat on their own connection.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        }
    )

elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Parameters go to the server apart from the query, so a statement a connection runs
    # again and again (the read of a transcript with the caller's role, say) is prepared
    # once and its plan kept: planning was four times that query's execution (docs/performance.md).
    # PgBouncer in transaction mode cannot keep prepared statements: 0 turns them off there.
    prepare_threshold = int(os.environ.get("DJANGO_DB_PREPARE_THRESHOLD", "5"))
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"server_side_binding": True, "prepare_threshold": prepare_threshold or None}
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Argon2id (ocm_site/passwords.py: one lane of 64 MiB, two passes): stronger than PBKDF2 and a
# fraction of its time at log-in. PBKDF2 stays second, so a hash made before verifies and is
# rewritten as Argon2id at its owner's next log-in.
PASSWORD_HASHERS = [
    "ocm_site.passwords.Argon2idPasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# django-axes first: it refuses a locked-out username+address before a password is checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

# Login throttling (django-axes, failures kept in the database so that every web worker sees
# them): 10 failed logins for one username from one address lock that pair for 15 minutes;
# a successful login resets the count. Bearer tokens do not log in, so they are not counted.
AXES_FAILURE_LIMIT = 10
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Behind reverse proxies every request comes from the last proxy's address, so that one
# username could be locked out for everyone. With DJANGO_PROXY_COUNT=N the client is the
# address N places from the right of X-Forwarded-For, which the proxies must set (what a
# client writes there itself is left of theirs, so it is never taken).
PROXY_COUNT = int(os.environ.get("DJANGO_PROXY_COUNT", "0"))
if PROXY_COUNT:
    AXES_IPWARE_PROXY_COUNT = PROXY_COUNT
    AXES_IPWARE_META_PRECEDENCE_ORDER = ("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR")

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Local runs serve static/ through WhiteNoise's finders; a deployment (DJANGO_DEBUG=false)
# collects it into STATIC_ROOT first (`manage.py collectstatic`).
STATIC_ROOT = os.environ.get("DJANGO_STATIC_ROOT") or (None if DEBUG else BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        # Hashed names (served with far-future cache headers) and gzip/brotli copies.
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Uploads of big JSONL files go to a temporary file, not memory (past 2.5 MB); their size is
# bounded by the importer (editor.importing.MAX_TRANSCRIPT_BYTES per transcript).
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
# A body read into memory (JSON, form fields, a pasted transcript) is at most 20 MB; more is
# a 413 (editor.views.errors, api.errors). Fields and files per request: Django's defaults
# (DATA_UPLOAD_MAX_NUMBER_FIELDS 1000, DATA_UPLOAD_MAX_NUMBER_FILES 100).
DATA_UPLOAD_MAX_MEMORY_SIZE = 20 * 1024 * 1024
# One transcript, wherever it comes from (create, save, raw mode, an import's item), holds at
# most this many bytes of source text and this many messages; more is refused with
# ``transcript-too-large`` before it is parsed or stored (editor.storage.content).
OCM_MAX_TRANSCRIPT_BYTES = int(os.environ.get("OCM_MAX_TRANSCRIPT_BYTES", str(32 * 1024**2)))
OCM_MAX_TRANSCRIPT_MESSAGES = int(os.environ.get("OCM_MAX_TRANSCRIPT_MESSAGES", "50000"))
# Per caller (token, user or address), the expensive routes' budgets: (requests, seconds).
# Past one, 429 with Retry-After (editor.throttling). OCM_THROTTLE_SCALE multiplies them all
# (0 turns the limits off, e.g. behind a proxy that limits already).
_THROTTLE_SCALE = float(os.environ.get("OCM_THROTTLE_SCALE", "1"))
OCM_THROTTLES = {
    kind: (max(1, round(requests * _THROTTLE_SCALE)), seconds)
    for kind, (requests, seconds) in {
        "render": (120, 60),  # whole-transcript renders, the source view, the debug rendering
        "export": (30, 60),  # exports of a transcript or a dataset, started or streamed
        "search": (240, 60),  # text searches of a dataset's transcripts
        "format": (600, 60),  # the stateless format routes and live validation of drafts
        "model": (30, 60),  # regenerating a turn, testing a model connection (docs/models.md)
    }.items()
    if _THROTTLE_SCALE > 0
}
# Any request body, uploads included, is at most this (editor.middleware: 413 unread).
OCM_MAX_UPLOAD_BYTES = int(os.environ.get("OCM_MAX_UPLOAD_BYTES", str(2 * 1024**3)))

# --- security headers ---------------------------------------------------------------------

# Nothing inline: no inline script or style, no eval (htmx runs with allowEval false), no
# data: images. The API docs page (swagger's CSS has data: icons) widens img-src for itself
# only, in api/api.py.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "img-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_HTTPONLY = True
# Pages put the CSRF token in the HTML (hx-headers on <body>); no script reads the cookie.
CSRF_COOKIE_HTTPONLY = True

# Production (DJANGO_DEBUG=false) is HTTPS only; `make run` stays plain http on 127.0.0.1.
# DJANGO_HTTPS_ONLY=false turns that off for a production-like stack on a laptop (plain http
# on 127.0.0.1); `check --deploy` then warns, as it should.
HTTPS_ONLY = env_bool("DJANGO_HTTPS_ONLY", not DEBUG)
SESSION_COOKIE_SECURE = HTTPS_ONLY
CSRF_COOKIE_SECURE = HTTPS_ONLY
SECURE_SSL_REDIRECT = HTTPS_ONLY
# Load balancers probe the health check over plain http inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = 365 * 24 * 3600 if HTTPS_ONLY else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS_ONLY
SECURE_HSTS_PRELOAD = HTTPS_ONLY
if env_bool("DJANGO_BEHIND_TLS_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOG_LEVEL = os.environ.get("DJANGO_LOG_LEVEL", "WARNING")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    # Django's own "django" logger has a console handler in DEBUG: without this its records
    # would also reach the root handler and every line would print twice.
    "loggers": {"django": {"handlers": [], "level": LOG_LEVEL, "propagate": True}},
}

# --- cache and background tasks (docs/deploy.md) -----------------------------------------

# Redis when REDIS_URL is set (shared by every web and task worker); otherwise the
# local-memory cache of one process. Nothing that several workers must agree on is kept
# only in the cache: task progress and results live in the database.
REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "ocm_site.redis_cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "ocm",
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Imports, large exports and bulk re-validation are django-tasks tasks. "database" queues
# them in the database for `manage.py task_worker` (django-tasks-db's worker plus heartbeats
# and the recovery of tasks whose worker died); "immediate" runs them within the request
# that starts them (tests, and a one-process setup with no worker).
OCM_TASKS = os.environ.get("OCM_TASKS", "database").strip().lower()
TASKS = {
    "default": {
        "BACKEND": "django_tasks.backends.immediate.ImmediateBackend"
        if OCM_TASKS == "immediate"
        else "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default"],
    }
}
# A running task writes a heartbeat this often; one whose heartbeat is older than
# OCM_TASK_STALE_AFTER seconds (or whose worker process on this host is gone) is taken to
# have died with its worker: it is queued again once, then marked failed.
OCM_TASK_HEARTBEAT_SECONDS = float(os.environ.get("OCM_TASK_HEARTBEAT_SECONDS", "2"))
OCM_TASK_STALE_AFTER = float(os.environ.get("OCM_TASK_STALE_AFTER", "120"))
OCM_TASK_MAX_ATTEMPTS = int(os.environ.get("OCM_TASK_MAX_ATTEMPTS", "2"))
# An idle task worker looks for a queued task this often (seconds; `task_worker --interval`
# overrides it): a user who started an import waits half of it on average before it starts.
# django-tasks-db's own default is 1 s. An idle worker's CPU, measured: 0.4 % of a core
# polling every 1 s, 1.4 % every 0.2 s, 2.6 % every 0.1 s (docs/performance.md).
OCM_TASK_POLL_SECONDS = float(os.environ.get("OCM_TASK_POLL_SECONDS", "0.2"))
# An import of a source this large (bytes) parses and checks its items in a helper process
# while it writes them (editor.importing.preparing): two cores at work instead of one. The
# helper is started once per process (the task worker starts it with itself) and holds about
# 140 MB; OCM_IMPORT_HELPER=false keeps every import in one process.
OCM_IMPORT_HELPER = env_bool("OCM_IMPORT_HELPER", True)
OCM_IMPORT_HELPER_MIN_BYTES = int(os.environ.get("OCM_IMPORT_HELPER_MIN_BYTES", str(4 * 1024**2)))
# Uploaded files wait here for their import task: a folder every web and task worker
# reads (a shared volume when they run on several machines).
OCM_UPLOAD_DIR = Path(os.environ.get("OCM_UPLOAD_DIR") or BASE_DIR / "var" / "uploads")
# Exports prepared in the background wait here to be downloaded (shared, like uploads).
OCM_EXPORT_DIR = Path(os.environ.get("OCM_EXPORT_DIR") or BASE_DIR / "var" / "exports")
# A prepared export's file is removed this many days after it was prepared (0: kept until its
# dataset is deleted); its task then says so (editor.exporting.tasks.remove_expired_exports).
OCM_EXPORT_KEEP_DAYS = float(os.environ.get("OCM_EXPORT_KEEP_DAYS", "7"))
# Or both live in a bucket (docs/deploy.md, "Object storage"): OCM_STORAGE_URL=s3://bucket/prefix
# names it, OCM_STORAGE_ENDPOINT an S3-compatible server (else boto3's AWS_ENDPOINT_URL…);
# credentials and region are boto3's AWS_* variables. A prepared export is then downloaded
# from a signed URL valid OCM_STORAGE_URL_EXPIRY seconds. ocm_site/storages.py builds the two
# storages ("ocm_uploads", "ocm_exports"; used by editor/filestore.py).
OCM_STORAGE_URL = os.environ.get("OCM_STORAGE_URL", "").strip()
OCM_STORAGE_ENDPOINT = os.environ.get("OCM_STORAGE_ENDPOINT", "").strip() or None
OCM_STORAGE_URL_EXPIRY = int(os.environ.get("OCM_STORAGE_URL_EXPIRY", "300"))
STORAGES.update(
    task_storages(
        OCM_STORAGE_URL, endpoint=OCM_STORAGE_ENDPOINT, spool_bytes=FILE_UPLOAD_MAX_MEMORY_SIZE
    )
)
# Webhooks (docs/webhooks.md): URLs resolving to loopback, private, link-local… addresses are
# refused unless this is true (a receiver on the same machine or network); a send waits this
# many seconds; an endpoint failing this many deliveries in a row is disabled.
OCM_WEBHOOKS_ALLOW_PRIVATE = os.environ.get("OCM_WEBHOOKS_ALLOW_PRIVATE", "").lower() in (
    "1",
    "true",
    "yes",
)
OCM_WEBHOOK_TIMEOUT = float(os.environ.get("OCM_WEBHOOK_TIMEOUT", "5"))
OCM_WEBHOOK_MAX_FAILURES = int(os.environ.get("OCM_WEBHOOK_MAX_FAILURES", "10"))
