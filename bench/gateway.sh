#!/usr/bin/env bash
# Benchmarks of dynindex-gateway on this machine.  Starts a throwaway
# PostgreSQL with dynindex (shared_preload_libraries, synchronous_commit=off
# since dynalite keeps everything in memory), the gateway in --dev mode and
# dynalite (in memory), runs a client, stops everything.  In vs mode the
# server also loads dynindex_http (the endpoint inside PostgreSQL, dev mode,
# BENCH_HTTP_WORKERS workers, default 4), measured in the same run.
#
#   bench/gateway.sh [vs] [ARGS...]     gateway-vs-dynalite.mjs (PutItem/GetItem/Query, 1 and 8 clients)
#   bench/gateway.sh load [ARGS...]     gateway-load.mjs (60 s mixed load with abusive clients)
#   bench/gateway.sh auth [ARGS...]     the gateway with SigV4 authentication (no --dev, an access
#                                       key for the superuser), wrk with pre-signed requests
#   bench/gateway.sh scale              10,000 idle keep-alive connections held open while wrk runs
#                                       GetItem, PutItem, Query with 8 connections (60 s each; SCALE_SECONDS),
#                                       then wrk with 1,000 connections (SCALE_C1000_SECONDS, 20 s each);
#                                       gateway RSS, errors, p99, idle connections kept/closed/reset;
#                                       SCALE_TARGET=in-server: the same against dynindex_http (RSS: its workers')
#
# vs takes --client sdk|raw|wrk (wrk: a C load generator, bench/wrk-dynamodb.lua).
#
# Needs `make install` done (the extension and dynindex-gateway in pg_config's
# directories), node >= 18 with npm.  Ports: BENCH_PGPORT (5489),
# BENCH_GW_PORT (8091), BENCH_DL_PORT (8092), BENCH_HTTP_PORT (8093); BENCH_POOL
# (gateway --pool-size, 8).
# Results (JSON, text) go to bench/results/ (not committed).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MODE=vs
if [ $# -gt 0 ] && { [ "$1" = vs ] || [ "$1" = load ] || [ "$1" = auth ] || [ "$1" = scale ]; }; then MODE="$1"; shift; fi
# scale: 10,000 idle sockets in the client and the gateway
[ "$MODE" = scale ] && ulimit -n "$(ulimit -Hn)"
PGBIN="$(pg_config --bindir)"
PGPORT_="${BENCH_PGPORT:-5489}"; GWPORT="${BENCH_GW_PORT:-8091}"; DLPORT="${BENCH_DL_PORT:-8092}"
POOL="${BENCH_POOL:-8}"; HTTPPORT="${BENCH_HTTP_PORT:-8093}"; HTTPWORKERS="${BENCH_HTTP_WORKERS:-4}"
WORK="$(mktemp -d /tmp/dynindex-gwbench.XXXXXX)"
PIDS=()
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    [ -f "$WORK/data/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$WORK/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] && chown postgres "$WORK"
mkdir -p "$HERE/results"
[ -d "$HERE/node_modules/dynalite" ] || (cd "$HERE" && npm ci --no-audit --no-fund >/dev/null)

echo "==> PostgreSQL on port $PGPORT_ (socket $WORK)"
as_pg "$PGBIN/initdb" -D "$WORK/data" -A trust >/dev/null
PRELOAD=dynindex
if [ "$MODE" = vs ] || [ "${SCALE_TARGET:-}" = in-server ]; then
    PRELOAD=dynindex,dynindex_http
    printf "dynindex_http.port = %s\ndynindex_http.dev = on\ndynindex_http.workers = %s\ndynindex_http.timeout = 900\n" "$HTTPPORT" "$HTTPWORKERS" >>"$WORK/data/postgresql.conf"
fi
as_pg "$PGBIN/pg_ctl" -D "$WORK/data" -l "$WORK/pg.log" -w start -o \
    "-p $PGPORT_ -k $WORK -c listen_addresses='' -c shared_preload_libraries=$PRELOAD -c max_connections=50 -c max_worker_processes=16 -c synchronous_commit=off" >/dev/null
GWEXTRA=""
[ "$MODE" = scale ] && GWEXTRA="--max-connections ${SCALE_MAX_CONNECTIONS:-10100} --timeout 900"
SU="$(as_pg whoami)"
psql -X -q -h "$WORK" -p "$PGPORT_" -U "$SU" -d postgres -c 'CREATE EXTENSION dynindex'
CONN="host=$WORK port=$PGPORT_ user=$SU dbname=postgres"

DEV=--dev
if [ "$MODE" = auth ]; then
    DEV=""
    KEY="$(psql -X -q -At -F : -h "$WORK" -p "$PGPORT_" -U "$SU" -d postgres -c "SELECT * FROM dynindex.create_access_key(current_user)")"
fi
echo "==> dynindex-gateway ${DEV:-(SigV4)} on 127.0.0.1:$GWPORT (pool $POOL)"
"$PGBIN/dynindex-gateway" $DEV --host 127.0.0.1 --port "$GWPORT" --pool-size "$POOL" --timeout 10 \
    $GWEXTRA --dbname "$CONN" >"$WORK/gw.out" 2>"$WORK/gw.err" &
GWPID=$!; PIDS+=("$GWPID")
if [ "$MODE" = vs ]; then
    echo "==> dynalite (in memory) on 127.0.0.1:$DLPORT"
    node "$HERE/node_modules/dynalite/cli.js" --host 127.0.0.1 --port "$DLPORT" \
        --createTableMs 0 --deleteTableMs 0 --updateTableMs 0 >"$WORK/dl.out" 2>&1 &
    DLPID=$!; PIDS+=("$DLPID")
fi
sleep 1
grep -q 'listening on' "$WORK/gw.out" || { cat "$WORK/gw.err"; exit 1; }

export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
STAMP="$(date +%Y%m%d-%H%M%S)"
set +e
if [ "$MODE" = vs ]; then
    echo "==> dynindex_http (in the server, $HTTPWORKERS workers) on 127.0.0.1:$HTTPPORT"
    node "$HERE/gateway-vs-dynalite.mjs" --dynindex "http://127.0.0.1:$GWPORT" --dynalite "http://127.0.0.1:$DLPORT" \
        --http "http://127.0.0.1:$HTTPPORT" --gateway-pid "$GWPID" --dynalite-pid "$DLPID" --psql "$CONN" \
        --json "$HERE/results/gateway-vs-dynalite-$STAMP.json" "$@" | tee "$HERE/results/gateway-vs-dynalite-$STAMP.txt"
elif [ "$MODE" = auth ]; then
    node "$HERE/gateway-vs-dynalite.mjs" --dynindex "http://127.0.0.1:$GWPORT" --only dynindex --client wrk --sign "$KEY" \
        --gateway-pid "$GWPID" --psql "$CONN" \
        --json "$HERE/results/gateway-auth-$STAMP.json" "$@" | tee "$HERE/results/gateway-auth-$STAMP.txt"
elif [ "$MODE" = scale ]; then
    # the gateway, or (SCALE_TARGET=in-server) dynindex_http's workers
    URL="http://127.0.0.1:$GWPORT"; TARGET=(--dynindex "$URL" --only dynindex --gateway-pid "$GWPID"); WHO=gateway
    if [ "${SCALE_TARGET:-}" = in-server ]; then
        URL="http://127.0.0.1:$HTTPPORT"; TARGET=(--http "$URL" --only in-server); WHO="dynindex_http workers"
        for _ in $(seq 1 100); do curl -sf -o /dev/null "$URL/" && break; sleep 0.1; done
    fi
    # the gateway's RSS; the workers' private memory (their RSS also counts the
    # shared buffers they touched)
    rss() {
        if [ "${SCALE_TARGET:-}" = in-server ]; then
            for p in $(psql -X -At -d "$CONN" -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'dynindex http'"); do
                awk '/^Private_(Clean|Dirty):/ {s += $2} END {print s}' "/proc/$p/smaps_rollup"
            done | awk '{s += $1} END {print s " kB private"}'
        else
            awk '/VmRSS/ {print $2 " kB"}' "/proc/$GWPID/status"
        fi
    }
    echo "==> $WHO RSS at start: $(rss)"
    node "$HERE/gateway-idle.mjs" --endpoint "$URL" --n "${SCALE_IDLE:-10000}" >"$WORK/idle.out" 2>&1 &
    IDLEPID=$!; PIDS+=("$IDLEPID")
    for _ in $(seq 1 600); do grep -q '^ready' "$WORK/idle.out" && break; sleep 0.2; done
    echo "==> idle connections: $(cat "$WORK/idle.out") (ready open failed); $WHO RSS: $(rss)"
    node "$HERE/gateway-vs-dynalite.mjs" "${TARGET[@]}" --client wrk --threads 2 \
        --clients 8 --ops GetItem,PutItem,Query --duration "${SCALE_SECONDS:-60}" --rounds 1 --warmup 3 \
        --psql "$CONN" --json "$HERE/results/gateway-scale-$STAMP.json" "$@" \
        | tee "$HERE/results/gateway-scale-$STAMP.txt"
    echo "==> $WHO RSS with the idle connections after the 8-connection runs: $(rss)"
    kill -TERM "$IDLEPID"; wait "$IDLEPID" 2>/dev/null
    echo "==> idle connections at the end: $(tail -1 "$WORK/idle.out")"
    node "$HERE/gateway-vs-dynalite.mjs" "${TARGET[@]}" --client wrk --threads 2 \
        --clients 1000 --ops GetItem,PutItem,Query --duration "${SCALE_C1000_SECONDS:-20}" --rounds 1 --warmup 2 \
        --psql "$CONN" --no-seed --json "$HERE/results/gateway-c1000-$STAMP.json" "$@" \
        | tee -a "$HERE/results/gateway-scale-$STAMP.txt"
    echo "==> $WHO RSS after wrk -c 1000: $(rss)"
else
    node "$HERE/gateway-load.mjs" --endpoint "http://127.0.0.1:$GWPORT" --gateway-pid "$GWPID" --gateway-timeout 10 \
        --abuse --json "$HERE/results/gateway-load-$STAMP.json" "$@" | tee "$HERE/results/gateway-load-$STAMP.txt"
fi
RC=${PIPESTATUS[0]}
kill -0 "$GWPID" 2>/dev/null || { echo "the gateway died:"; tail -20 "$WORK/gw.err"; RC=1; }
exit "$RC"
