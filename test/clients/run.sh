#!/usr/bin/env bash
# Client tests of dynindex-gateway: unit self-test, AWS SDK for JS v3, ElectroDB,
# raw protocol checks, SigV4 (auth mode) and a boto3 smoke test.
#
# Needs a running PostgreSQL with the dynindex extension (PGHOST, PGPORT,
# PGDATABASE, PGUSER), node >= 18 with npm, and python3-boto3.  Starts two
# gateways on free ports (one --dev, one with SigV4 and freshly created access
# keys), runs everything, stops them, and exits non-zero if anything failed.
# Prints "N passed, M failed" last.
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/dynindex-clients.XXXXXX")"
PASS=0; FAIL=0; SKIP=0
GW_PIDS=()
NOACCESS_ROLE=dynindex_gw_test_noaccess
GONE_ROLE=dynindex_gw_test_gone
READER_ROLE=dynindex_gw_test_reader
KEYS=()

log() { printf '==> %s\n' "$*"; }
psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

cleanup() {
    for pid in "${GW_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${GW_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    for k in "${KEYS[@]}"; do psql_q -c "SELECT dynindex.delete_access_key('$k')" >/dev/null 2>&1; done
    psql_q -c "DROP ROLE IF EXISTS $NOACCESS_ROLE" >/dev/null 2>&1
    psql_q -c "DROP OWNED BY $READER_ROLE" -c "DROP ROLE IF EXISTS $READER_ROLE" >/dev/null 2>&1
    [ -n "${SEC_KEYS:-}" ] && bash "$HERE/security_setup.sh" cleanup >/dev/null 2>&1
    rm -rf "$WORK"
}
trap cleanup EXIT

# ---- the binary: the tree's build, else the installed one ----
GW="$ROOT/src/gateway/dynindex-gateway"
if [ ! -x "$GW" ] || [ -n "$(find "$ROOT/src/gateway" -name '*.[ch]' -newer "$GW" 2>/dev/null)" ]; then
    make -C "$ROOT" src/gateway/dynindex-gateway >/dev/null || GW=""
fi
if [ -z "$GW" ] || [ ! -x "$GW" ]; then
    GW="$(pg_config --bindir 2>/dev/null)/dynindex-gateway"
fi
[ -x "$GW" ] || { echo "dynindex-gateway not found (make it first)"; echo "0 passed, 1 failed"; exit 1; }
log "gateway binary: $GW"

# ---- 1. unit tests (SigV4 vector, error mapping) ----
if "$GW" --self-test; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); fi

psql_q -c "SELECT 1" >/dev/null || { echo "PostgreSQL is not reachable (PGHOST=${PGHOST:-} PGPORT=${PGPORT:-})"; echo "$PASS passed, $((FAIL + 1)) failed"; exit 1; }

# Start a gateway and set STARTED_URL.  --port 0 picks a free port; the gateway
# prints the one it got on its first line of stdout.  (Not run in a subshell:
# GW_PIDS must reach the cleanup trap.)
start_gateway() {
    local name="$1"; shift
    STARTED_URL=""
    "$GW" --host 127.0.0.1 --port 0 --pool-size 4 "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
    GW_PIDS+=("$!")
    for _ in $(seq 1 100); do
        if grep -q 'listening on' "$WORK/$name.out" 2>/dev/null; then
            STARTED_URL="$(sed -n 's/.*listening on \(https\{0,1\}:[^ ]*\).*/\1/p' "$WORK/$name.out" | head -1)"
            return 0
        fi
        sleep 0.05
    done
    echo "gateway $name did not start:" >&2; cat "$WORK/$name.err" >&2
    return 1
}

start_gateway dev --dev --metrics-port 0 || { echo "$PASS passed, $((FAIL + 1)) failed"; exit 1; }
DEV_URL="$STARTED_URL"
for _ in $(seq 1 50); do grep -q 'metrics on' "$WORK/dev.out" && break; sleep 0.05; done
METRICS_URL="$(sed -n 's/.*metrics on \(http:[^ ]*\).*/\1/p' "$WORK/dev.out" | head -1)"
export GATEWAY_METRICS_URL="$METRICS_URL"
log "dev-mode gateway: $DEV_URL"
# a gateway whose GSI reads wait for the writes before them (node/gsi_read_your_writes.test.js)
RYW_URL=""
start_gateway ryw --dev --gsi-read-your-writes && RYW_URL="$STARTED_URL"
export GATEWAY_RYW_URL="$RYW_URL"
log "read-your-writes gateway: ${RYW_URL:-(did not start)}"

# ---- access keys for the auth-mode gateway ----
AUTH_URL=""; TLS_URL=""; SEC_KEYS=""; KEY_ID=""; SECRET=""; NA_ID=""; NA_SECRET=""; GONE_ID=""; GONE_SECRET=""; RD_ID=""; RD_SECRET=""
if [ "$(psql_q -c "SELECT to_regclass('dynindex.access_keys') IS NOT NULL")" = t ]; then
    read -r KEY_ID SECRET < <(psql_q -F ' ' -c "SELECT * FROM dynindex.create_access_key(current_user)")
    KEYS+=("$KEY_ID")
    psql_q -c "DROP ROLE IF EXISTS $NOACCESS_ROLE" -c "CREATE ROLE $NOACCESS_ROLE NOLOGIN" \
           -c "GRANT $NOACCESS_ROLE TO current_user" >/dev/null 2>&1 || true
    read -r NA_ID NA_SECRET < <(psql_q -F ' ' -c "SELECT * FROM dynindex.create_access_key('$NOACCESS_ROLE')" 2>/dev/null)
    [ -n "$NA_ID" ] && KEYS+=("$NA_ID")
    # a key whose role may list tables and nothing else
    psql_q -c "DROP OWNED BY $READER_ROLE" -c "DROP ROLE IF EXISTS $READER_ROLE" >/dev/null 2>&1
    psql_q -c "CREATE ROLE $READER_ROLE NOLOGIN" -c "GRANT $READER_ROLE TO current_user" \
           -c "GRANT USAGE ON SCHEMA dynindex TO $READER_ROLE" -c "GRANT SELECT ON dynindex.tables TO $READER_ROLE" >/dev/null 2>&1 || true
    read -r RD_ID RD_SECRET < <(psql_q -F ' ' -c "SELECT * FROM dynindex.create_access_key('$READER_ROLE')" 2>/dev/null)
    [ -n "$RD_ID" ] && KEYS+=("$RD_ID")
    # a key whose role is dropped after the key was made (a misconfiguration)
    psql_q -c "DROP ROLE IF EXISTS $GONE_ROLE" -c "CREATE ROLE $GONE_ROLE NOLOGIN" >/dev/null 2>&1 || true
    read -r GONE_ID GONE_SECRET < <(psql_q -F ' ' -c "SELECT * FROM dynindex.create_access_key('$GONE_ROLE')" 2>/dev/null)
    [ -n "$GONE_ID" ] && KEYS+=("$GONE_ID")
    psql_q -c "DROP ROLE IF EXISTS $GONE_ROLE" >/dev/null 2>&1 || true
    # roles, tables and keys of the authorization tests (node/security.test.js)
    SEC_KEYS="$(bash "$HERE/security_setup.sh" setup 2>"$WORK/security_setup.err")" || SEC_KEYS=""
    start_gateway auth --account-id 123456789012 && AUTH_URL="$STARTED_URL"
    log "auth-mode gateway: ${AUTH_URL:-(did not start)}"
    # HTTPS: a throwaway CA and a server certificate for 127.0.0.1/localhost
    if command -v openssl >/dev/null; then
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$WORK/ext.cnf"
        if openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/ca.key" -out "$WORK/ca.pem" -days 2 \
               -subj "/CN=dynindex test CA" >/dev/null 2>&1 &&
           openssl req -newkey rsa:2048 -nodes -keyout "$WORK/server.key" -out "$WORK/server.csr" \
               -subj "/CN=localhost" >/dev/null 2>&1 &&
           openssl x509 -req -in "$WORK/server.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial \
               -out "$WORK/server.pem" -days 2 -extfile "$WORK/ext.cnf" >/dev/null 2>&1; then
            start_gateway tls --tls-cert "$WORK/server.pem" --tls-key "$WORK/server.key" && TLS_URL="$STARTED_URL"
            log "TLS gateway: ${TLS_URL:-(did not start)}"
        fi
    fi
else
    log "dynindex.access_keys does not exist: SigV4 tests skipped"
    SKIP=$((SKIP + 1))
fi
export GATEWAY_URL="$DEV_URL" GATEWAY_AUTH_URL="$AUTH_URL" GATEWAY_KEY_ID="$KEY_ID" GATEWAY_SECRET="$SECRET"
export GATEWAY_TLS_URL="$TLS_URL" GATEWAY_TLS_CA="$WORK/ca.pem"
export GATEWAY_NOACCESS_KEY_ID="$NA_ID" GATEWAY_NOACCESS_SECRET="$NA_SECRET"
export GATEWAY_GONE_KEY_ID="$GONE_ID" GATEWAY_GONE_SECRET="$GONE_SECRET"
export GATEWAY_READER_KEY_ID="$RD_ID" GATEWAY_READER_SECRET="$RD_SECRET"
export GATEWAY_SEC_KEYS="${SEC_KEYS:-}"

# ---- 2. node tests (SDK v3, lib-dynamodb, ElectroDB, protocol, auth) ----
if command -v node >/dev/null && command -v npm >/dev/null; then
    if [ ! -d "$HERE/node_modules/@aws-sdk/client-dynamodb" ] || [ ! -d "$HERE/node_modules/electrodb" ]; then
        log "npm ci"
        (cd "$HERE" && npm ci --no-audit --no-fund >"$WORK/npm.log" 2>&1) || { cat "$WORK/npm.log"; }
    fi
    log "node --test"
    (cd "$HERE" && node --test --test-reporter=spec --test-concurrency=1 node/*.test.js) 2>&1 | tee "$WORK/node.out"
    np="$(sed -n 's/^ℹ pass \([0-9]*\)$/\1/p' "$WORK/node.out" | tail -1)"
    nf="$(sed -n 's/^ℹ fail \([0-9]*\)$/\1/p' "$WORK/node.out" | tail -1)"
    ns="$(sed -n 's/^ℹ skipped \([0-9]*\)$/\1/p' "$WORK/node.out" | tail -1)"
    [ -z "$np" ] && [ -z "$nf" ] && nf=1
    PASS=$((PASS + ${np:-0})); FAIL=$((FAIL + ${nf:-0})); SKIP=$((SKIP + ${ns:-0}))
else
    echo "node/npm not found: node tests FAILED to run"; FAIL=$((FAIL + 1))
fi

# ---- 2b. the SDK and ElectroDB suites again, through the SigV4 gateway ----
# (the same tests, signed with a real access key: the client suite runs once in
# --dev mode and once with authentication on)
if [ -n "$AUTH_URL" ] && [ -n "$KEY_ID" ] && command -v node >/dev/null; then
    log "node --test (SigV4 gateway)"
    (cd "$HERE" && GATEWAY_URL="$AUTH_URL" GATEWAY_CLIENT_KEY_ID="$KEY_ID" GATEWAY_CLIENT_SECRET="$SECRET" \
        GATEWAY_ACCOUNT_ID=123456789012 node --test --test-reporter=spec --test-concurrency=1 \
        node/arn.test.js node/sdk.test.js node/query_scan.test.js node/electrodb.test.js node/electrodb_orders.test.js) 2>&1 | tee "$WORK/node-sigv4.out"
    np="$(sed -n 's/^ℹ pass \([0-9]*\)$/\1/p' "$WORK/node-sigv4.out" | tail -1)"
    nf="$(sed -n 's/^ℹ fail \([0-9]*\)$/\1/p' "$WORK/node-sigv4.out" | tail -1)"
    [ -z "$np" ] && [ -z "$nf" ] && nf=1
    PASS=$((PASS + ${np:-0})); FAIL=$((FAIL + ${nf:-0}))
fi

# ---- 2c. the same suites through the in-server endpoint (dynindex_http, SigV4) ----
# DYNINDEX_HTTP_URL: the server was started with dynindex_http in
# shared_preload_libraries (test/bin/suites.sh).  The access-key, role and
# authorization tests run there too: every request runs as its key's role in
# a background worker that serves all roles one after the other.
if [ -n "${DYNINDEX_HTTP_URL:-}" ] && [ -n "$KEY_ID" ] && command -v node >/dev/null; then
    for _ in $(seq 1 100); do curl -sf -o /dev/null "$DYNINDEX_HTTP_URL/" && break; sleep 0.1; done
    # fresh tables, roles and keys for the authorization tests (they count items)
    HTTP_SEC_KEYS=""
    [ -n "$SEC_KEYS" ] && HTTP_SEC_KEYS="$(bash "$HERE/security_setup.sh" setup 2>>"$WORK/security_setup.err")"
    log "node --test (dynindex_http at $DYNINDEX_HTTP_URL)"
    (cd "$HERE" && GATEWAY_URL="$DYNINDEX_HTTP_URL" GATEWAY_AUTH_URL="$DYNINDEX_HTTP_URL" GATEWAY_SEC_KEYS="$HTTP_SEC_KEYS" \
        GATEWAY_CLIENT_KEY_ID="$KEY_ID" GATEWAY_CLIENT_SECRET="$SECRET" node --test --test-reporter=spec --test-concurrency=1 \
        node/arn.test.js node/sdk.test.js node/query_scan.test.js node/electrodb.test.js node/electrodb_orders.test.js \
        node/partiql.test.js node/auth.test.js node/security.test.js node/gsi_read_your_writes.test.js) 2>&1 | tee "$WORK/node-http.out"
    np="$(sed -n 's/^ℹ pass \([0-9]*\)$/\1/p' "$WORK/node-http.out" | tail -1)"
    nf="$(sed -n 's/^ℹ fail \([0-9]*\)$/\1/p' "$WORK/node-http.out" | tail -1)"
    [ -z "$np" ] && [ -z "$nf" ] && nf=1
    PASS=$((PASS + ${np:-0})); FAIL=$((FAIL + ${nf:-0}))
fi

# ---- 3. boto3 ----
PY=python3
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import boto3' 2>/dev/null && PY=/usr/bin/python3
# boto3_run LABEL SCRIPT TAG OUT [VAR=VALUE...]: run a boto3 script (with those variables)
# and count its last line "# TAG: N passed, M failed"
boto3_run() {
    local label="$1" script="$2" tag="$3" out="$WORK/$4" bp bf
    shift 4
    log "$label"
    env "$@" "$PY" "$HERE/$script" 2>&1 | tee "$out"
    bp="$(sed -n "s/^# $tag: \([0-9]*\) passed, \([0-9]*\) failed\$/\1/p" "$out")"
    bf="$(sed -n "s/^# $tag: \([0-9]*\) passed, \([0-9]*\) failed\$/\2/p" "$out")"
    [ -z "$bp" ] && bf=1
    PASS=$((PASS + ${bp:-0})); FAIL=$((FAIL + ${bf:-0}))
}
if "$PY" -c 'import boto3' 2>/dev/null; then
    boto3_run "boto3 smoke test" boto3_smoke.py boto3 boto3.out
    boto3_run "boto3 PartiQL test" boto3_partiql.py boto3-partiql boto3_partiql.out
    boto3_run "boto3 throttling test" boto3_throttle.py boto3-throttle boto3_throttle.out
    # ImportTable: a directory store with two gzip objects (needs dynindex.exchange_directory)
    if [ "$(psql_q -c "SELECT to_regclass('dynindex.imports') IS NOT NULL AND current_setting('dynindex.exchange_directory', true) <> ''")" = t ]; then
        if psql_q -c "DO \$\$ BEGIN EXECUTE format('COPY (SELECT 1) TO PROGRAM %L', 'mkdir -p ' || current_setting('dynindex.exchange_directory') || '/client-imports'); END \$\$" \
            -c "SELECT dynindex.set_object_store('client-imports', 'directory', directory => current_setting('dynindex.exchange_directory') || '/client-imports')" \
            -c "SELECT dynindex.write_object('client-imports', 'data/1.json.gz', decode('$(printf '{"Item": {"pk": {"S": "a"}, "n": {"N": "1"}}}\n{"Item": {"pk": {"S": "b"}}}\n' | gzip -c | base64 -w0)', 'base64'))" \
            -c "SELECT dynindex.write_object('client-imports', 'data/2.json.gz', decode('$(printf '{"Item": {"pk": {"S": "c"}}}\nnot json\n' | gzip -c | base64 -w0)', 'base64'))" >/dev/null; then
            boto3_run "boto3 import test" boto3_import.py boto3-import boto3_import.out
        else
            echo "boto3 import test: the directory store could not be set up"; FAIL=$((FAIL + 1))
        fi
    else
        log "boto3 import test: skipped (no dynindex.imports or no dynindex.exchange_directory)"; SKIP=$((SKIP + 1))
    fi
    if [ -n "$AUTH_URL" ] && [ -n "$KEY_ID" ]; then
        boto3_run "boto3 smoke test (SigV4 gateway)" boto3_smoke.py boto3 boto3-sigv4.out \
            GATEWAY_URL="$AUTH_URL" GATEWAY_CLIENT_KEY_ID="$KEY_ID" GATEWAY_CLIENT_SECRET="$SECRET"
    fi
    if [ -n "${DYNINDEX_HTTP_URL:-}" ] && [ -n "$KEY_ID" ]; then
        boto3_run "boto3 smoke test (dynindex_http)" boto3_smoke.py boto3 boto3-http.out \
            GATEWAY_URL="$DYNINDEX_HTTP_URL" GATEWAY_CLIENT_KEY_ID="$KEY_ID" GATEWAY_CLIENT_SECRET="$SECRET"
    fi
else
    echo "python3-boto3 not installed: boto3 smoke test FAILED to run"; FAIL=$((FAIL + 1))
fi

if [ "$FAIL" -ne 0 ]; then
    for f in "$WORK"/*.err; do echo "----- $f"; tail -n 20 "$f"; done
fi
echo "skipped: $SKIP"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
