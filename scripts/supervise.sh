#!/bin/sh
# Run a command, and run it again whenever it exits, saying so: `make run` keeps its task
# worker alive with it (a worker that died would leave every later import queued forever).
#
#   scripts/supervise.sh COMMAND [ARGUMENT...]
#
# SIGINT or SIGTERM stops the supervisor and the command. SUPERVISE_RESTART_DELAY (seconds,
# default 2) is the pause before a restart, so a command that cannot start does not spin.
set -u
delay="${SUPERVISE_RESTART_DELAY:-2}"
child=""

stop() {
    if [ -n "$child" ]; then
        kill "$child" 2>/dev/null
        wait "$child" 2>/dev/null
    fi
    exit 0
}
trap stop INT TERM

while :; do
    "$@" &
    child=$!
    wait "$child"
    status=$?
    child=""
    echo "supervise: '$*' exited with status $status; restarting it in $delay s" >&2
    sleep "$delay"
done
