#!/usr/bin/env bash
# `make run`: install what is missing, build, install, start a local PostgreSQL with
# dynindex preloaded (own data directory and port; the system cluster is never
# touched), create database `dynindex`, and show both ends working: SQL through psql,
# and DynamoDB's HTTP protocol through curl.  The HTTP endpoint is dynindex_http,
# background workers of that same server (docs/gateway.md): one process to run, no
# gateway program.  Running it again restarts everything cleanly.
#
# Environment: DYNINDEX_PORT (5433), DYNINDEX_HOST (127.0.0.1), DYNINDEX_GATEWAY_PORT
# (8000: the DynamoDB endpoint), DYNINDEX_METRICS_PORT (DYNINDEX_GATEWAY_PORT + 1: its
# Prometheus metrics), DYNINDEX_RUN_DIR (.run/ in the checkout; /var/tmp/dynindex-run-PORT
# as root), DYNINDEX_KEEP_DATA=1 keeps the previous data directory instead of a fresh one.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

bash "$DI_ROOT/test/bin/deps.sh"
di_build_install "$DI_ROOT"

PGC="$(di_pg_config)"
BINDIR="$("$PGC" --bindir)"
RUN_DIR="$(di_run_dir)"
DATA="$RUN_DIR/data"

# Stop whatever a previous `make run` left running.
bash "$DI_ROOT/test/bin/stop.sh"

if (exec 3<>"/dev/tcp/$DI_HOST/$DI_PORT") 2>/dev/null; then
    di_die "something already listens on $DI_HOST:$DI_PORT; choose another port: DYNINDEX_PORT=5434 make run"
fi

if di_is_root; then
    OWNER="$(di_unpriv_user)"
    di_log "running as root: the server runs as user '$OWNER' in $RUN_DIR"
    mkdir -p "$RUN_DIR"
    chown "$OWNER": "$RUN_DIR"
    chmod 700 "$RUN_DIR"
else
    mkdir -p "$RUN_DIR"
fi

FRESH=0
if [ "${DYNINDEX_KEEP_DATA:-0}" != 1 ] || [ ! -f "$DATA/PG_VERSION" ]; then
    FRESH=1
    rm -rf "$DATA"
    di_log "initdb $DATA"
    di_as_owner "$BINDIR/initdb" -D "$DATA" -U "$DI_SUPERUSER" -A trust -E UTF8 --locale=C \
        >"$RUN_DIR/initdb.log" 2>&1 || { cat "$RUN_DIR/initdb.log"; di_die "initdb failed"; }
fi
# The DynamoDB endpoint: dynindex_http's workers in the server, if it was built and its
# ports are free (else the server runs without it, and says why).
METRICS_PORT="${DYNINDEX_METRICS_PORT:-$((DI_GW_PORT + 1))}"
port_taken() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
HTTP=0
HTTP_CONF=""
PRELOAD="dynindex"
if [ -f "$("$PGC" --pkglibdir)/dynindex_http.so" ]; then
    if port_taken "$DI_GW_HOST" "$DI_GW_PORT"; then
        di_warn "port $DI_GW_HOST:$DI_GW_PORT is taken; no DynamoDB endpoint (set DYNINDEX_GATEWAY_PORT)"
    else
        HTTP=1
        PRELOAD="dynindex,dynindex_http"
        if port_taken "$DI_GW_HOST" "$METRICS_PORT"; then
            di_warn "port $DI_GW_HOST:$METRICS_PORT is taken; no metrics endpoint (set DYNINDEX_METRICS_PORT)"
            METRICS_PORT=0
        fi
        HTTP_CONF="dynindex_http.host = '$DI_GW_HOST'
dynindex_http.port = $DI_GW_PORT
dynindex_http.metrics_host = '$DI_GW_HOST'
dynindex_http.metrics_port = $METRICS_PORT
dynindex_http.database = '$DI_DB'
dynindex_http.dev = on
dynindex_http.workers = 4
max_worker_processes = 16"
    fi
else
    di_log "dynindex_http not built (src/gateway/): no DynamoDB endpoint, SQL only"
fi

# Our settings, rewritten on every start.
di_as_owner sh -c "cat > '$DATA/dynindex_run.conf'" <<CONF
# written by test/bin/run.sh
listen_addresses = '$DI_HOST'
port = $DI_PORT
unix_socket_directories = '$RUN_DIR'
shared_preload_libraries = '$PRELOAD'
logging_collector = off
$HTTP_CONF
CONF
grep -q "^include_if_exists = 'dynindex_run.conf'" "$DATA/postgresql.conf" ||
    di_as_owner sh -c "echo \"include_if_exists = 'dynindex_run.conf'\" >> '$DATA/postgresql.conf'"

start_pg() {  # extra pg_ctl arguments
    if ! di_as_owner "$BINDIR/pg_ctl" -D "$DATA" -l "$RUN_DIR/postgresql.log" -w -t 60 "$@" start >/dev/null; then
        tail -n 30 "$RUN_DIR/postgresql.log" >&2 || true
        di_die "PostgreSQL did not start"
    fi
}
stop_pg() {
    di_as_owner "$BINDIR/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
}
db_exists() {
    [ "$("$BINDIR/psql" -X -q -h "$DI_HOST" -p "$DI_PORT" -U "$DI_SUPERUSER" -d postgres -Atc \
        "SELECT count(*) FROM pg_database WHERE datname = '$DI_DB'")" != 0 ]
}
create_db() {
    "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$DI_HOST" -p "$DI_PORT" -U "$DI_SUPERUSER" -d postgres \
        -c "CREATE DATABASE $DI_DB"
}

# dynindex_http's workers connect to the database when the server starts: a new data
# directory gets its database first, in a start without them.
if [ "$HTTP" = 1 ] && [ "$FRESH" = 1 ]; then
    di_log "creating database $DI_DB"
    start_pg -o "-c shared_preload_libraries=dynindex"
    create_db
    stop_pg
fi
di_log "starting PostgreSQL on $DI_HOST:$DI_PORT (log: $RUN_DIR/postgresql.log)"
start_pg
if ! db_exists; then
    create_db
    if [ "$HTTP" = 1 ]; then  # the workers started before their database existed
        stop_pg
        start_pg
    fi
fi

export PGHOST="$DI_HOST" PGPORT="$DI_PORT" PGUSER="$DI_SUPERUSER"
PSQL=("$BINDIR/psql" -X -q -v ON_ERROR_STOP=1)
export PGDATABASE="$DI_DB"

di_log "the example, through psql:"
DEMO_CREATE="SELECT dynindex.api('CreateTable', '{\"TableName\":\"Orders\",\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}],\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"}],\"BillingMode\":\"PAY_PER_REQUEST\"}');"
DEMO_PUT="SELECT dynindex.api('PutItem', '{\"TableName\":\"Orders\",\"Item\":{\"pk\":{\"S\":\"USER#1\"},\"sk\":{\"S\":\"ORDER#1\"},\"total\":{\"N\":\"0012.50\"}}}');"
DEMO_GET="SELECT dynindex.api('GetItem', '{\"TableName\":\"Orders\",\"Key\":{\"pk\":{\"S\":\"USER#1\"},\"sk\":{\"S\":\"ORDER#1\"}}}');"
demo_sql="CREATE EXTENSION IF NOT EXISTS dynindex;"
if [ "${DYNINDEX_KEEP_DATA:-0}" = 1 ] &&
   "${PSQL[@]}" -Atc "SELECT dynindex.api('DescribeTable', '{\"TableName\":\"Orders\"}')" >/dev/null 2>&1; then
    di_log "(table Orders exists already: skipping CreateTable)"
else
    demo_sql="$demo_sql
$DEMO_CREATE"
fi
demo_sql="$demo_sql
$DEMO_PUT
$DEMO_GET"
if ! "$BINDIR/psql" -X -v ON_ERROR_STOP=1 -e -A -t -P pager=off <<<"$demo_sql"; then
    di_warn "the example failed (see above); the server keeps running - log: $RUN_DIR/postgresql.log"
    DEMO_OK=0
else
    DEMO_OK=1
fi

# One call to the DynamoDB endpoint (its workers start once the server accepts connections).
GW_UP=0
if [ "$HTTP" = 1 ]; then
    for _ in $(seq 1 100); do
        if [ "$(curl -s --max-time 2 "http://$DI_GW_HOST:$DI_GW_PORT/" 2>/dev/null)" != "" ]; then GW_UP=1; break; fi
        sleep 0.1
    done
    if [ "$GW_UP" = 1 ]; then
        di_log "dynindex_http listening on http://$DI_GW_HOST:$DI_GW_PORT; one call to it (GetItem) with curl:"
        CURL=(curl -sS --max-time 10 -X POST "http://$DI_GW_HOST:$DI_GW_PORT/"
              -H 'Content-Type: application/x-amz-json-1.0'
              -H 'X-Amz-Target: DynamoDB_20120810.GetItem'
              -H 'Authorization: AWS4-HMAC-SHA256 Credential=dev/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-target, Signature=dev'
              -d '{"TableName":"Orders","Key":{"pk":{"S":"USER#1"},"sk":{"S":"ORDER#1"}}}')
        echo "    curl -X POST http://$DI_GW_HOST:$DI_GW_PORT/ -H 'X-Amz-Target: DynamoDB_20120810.GetItem' -H 'Content-Type: application/x-amz-json-1.0' -d '{\"TableName\":\"Orders\",\"Key\":{...}}'"
        "${CURL[@]}" || di_warn "curl failed"
        echo
    else
        di_warn "dynindex_http did not answer on $DI_GW_HOST:$DI_GW_PORT; last lines of $RUN_DIR/postgresql.log:"
        tail -n 20 "$RUN_DIR/postgresql.log" >&2 || true
    fi
fi

cat <<MSG

dynindex is running.
  PostgreSQL : $BINDIR/psql -h $DI_HOST -p $DI_PORT -U $DI_SUPERUSER $DI_DB
               (data: $DATA, log: $RUN_DIR/postgresql.log)
MSG
if [ "$GW_UP" = 1 ]; then
cat <<MSG
  DynamoDB   : http://$DI_GW_HOST:$DI_GW_PORT   (dynindex_http in the server, dev mode: no authentication)
               AWS_ACCESS_KEY_ID=dev AWS_SECRET_ACCESS_KEY=dev AWS_DEFAULT_REGION=us-east-1 \\
                 aws dynamodb list-tables --endpoint-url http://$DI_GW_HOST:$DI_GW_PORT
MSG
if [ "$METRICS_PORT" != 0 ]; then
cat <<MSG
  Metrics    : http://$DI_GW_HOST:$METRICS_PORT/metrics   (Prometheus)
MSG
fi
fi
cat <<MSG
  Stop       : make stop      (make run again restarts with a fresh database)
MSG
[ "$DEMO_OK" = 1 ] || exit 1
