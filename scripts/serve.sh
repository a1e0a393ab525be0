#!/usr/bin/env bash
# `make serve`: the production-like stack on this machine (docs/deploy.md).
#   gunicorn with WEB_CONCURRENCY workers (default 2), WhiteNoise for static files,
#   PostgreSQL from DATABASE_URL, Redis from REDIS_URL, one task worker; DJANGO_DEBUG off.
# Plain http on loopback (DJANGO_HTTPS_ONLY=false) unless told otherwise: a real
# deployment puts TLS in front and sets DJANGO_HTTPS_ONLY=true, DJANGO_BEHIND_TLS_PROXY=true.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin

export DJANGO_DEBUG=false
export DJANGO_HTTPS_ONLY=${DJANGO_HTTPS_ONLY:-false}
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/ocm}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}
export OCM_TASKS=database
# Each web thread keeps its database connection for a minute instead of opening one per request.
export DJANGO_CONN_MAX_AGE=${DJANGO_CONN_MAX_AGE:-60}
export DJANGO_STATIC_ROOT=${DJANGO_STATIC_ROOT:-$PWD/var/staticfiles}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
WEB_CONCURRENCY=${WEB_CONCURRENCY:-2}
# Threads per web worker: a long streamed export or a slow client holds a thread, not the
# whole worker, and the worker keeps telling gunicorn it is alive meanwhile.
GUNICORN_THREADS=${GUNICORN_THREADS:-4}

# Every web worker must sign sessions with the same key: one made once, kept in var/.
if [ -z "${DJANGO_SECRET_KEY:-}" ]; then
  mkdir -p var
  [ -s var/secret-key ] || $BIN/python -c \
    "from django.core.management.utils import get_random_secret_key as k; print(k())" > var/secret-key
  DJANGO_SECRET_KEY=$(cat var/secret-key)
  export DJANGO_SECRET_KEY
fi

$BIN/python manage.py ensure_database
$BIN/python manage.py migrate --noinput --verbosity 0
$BIN/python manage.py collectstatic --noinput --verbosity 0
if [ "${OCM_SERVE_DEMO:-1}" = 1 ]; then
  $BIN/python manage.py load_demo
  $BIN/python manage.py ensure_local_login
fi

$BIN/python manage.py task_worker --no-reload --verbosity 1 &
WORKER=$!
trap 'kill $WORKER 2>/dev/null; wait $WORKER 2>/dev/null' EXIT INT TERM

echo "Serving on http://$HOST:$PORT/ with $WEB_CONCURRENCY web workers ($GUNICORN_THREADS threads each) and one task worker"
echo "  database $DATABASE_URL, cache $REDIS_URL; health: http://$HOST:$PORT/healthz"
# --reuse-port: each worker listens on a socket of its own and the kernel spreads new
# connections over them. On one shared socket the first worker to wake took nearly every
# kept-alive connection (50 annotators: one worker at 63 % of a core, the other idle, saves
# at p95 124 ms; spread: 67 ms. docs/performance.md).
$BIN/gunicorn ocm_site.wsgi -c python:ocm_site.gunicorn_conf \
  --workers "$WEB_CONCURRENCY" \
  --worker-class gthread --threads "$GUNICORN_THREADS" \
  --bind "$HOST:$PORT" --reuse-port \
  --access-logfile - \
  --graceful-timeout 20 \
  --timeout "${GUNICORN_TIMEOUT:-120}"
