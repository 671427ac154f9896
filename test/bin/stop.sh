#!/usr/bin/env bash
# `make stop`: stop the PostgreSQL server started by `make run` (its dynindex_http
# workers, the DynamoDB endpoint, stop with it), and a dynindex-gateway that an older
# `make run` started.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

RUN_DIR="$(di_run_dir)"
BINDIR="$("$(di_pg_config)" --bindir)"
stopped=0

if [ -f "$RUN_DIR/gateway.pid" ]; then
    pid="$(cat "$RUN_DIR/gateway.pid" 2>/dev/null || true)"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null \
       && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q dynindex-gateway; then
        di_log "stopping gateway (pid $pid)"
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
        stopped=1
    fi
    rm -f "$RUN_DIR/gateway.pid"
fi

if [ -f "$RUN_DIR/data/postmaster.pid" ]; then
    di_log "stopping PostgreSQL ($RUN_DIR/data)"
    di_as_owner "$BINDIR/pg_ctl" -D "$RUN_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    stopped=1
fi

if [ "$stopped" -eq 1 ]; then di_log "stopped"; else di_log "nothing running (run dir: $RUN_DIR)"; fi
