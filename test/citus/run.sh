#!/usr/bin/env bash
# The distributed suite: dynindex on a real Citus cluster (a coordinator and two
# workers on loopback ports, started here), running the regression tests listed in
# test/citus/schedule with the same expected output as on one server.
# Usage: test/citus/run.sh TREE   (run as an unprivileged user; PATH has the bindir)
# Then DynamoDB clients through the gateway against the coordinator: the AWS SDK for
# JavaScript v3, lib-dynamodb, ElectroDB and boto3 tests of test/clients, unchanged, on
# distributed tables.
# Prints "citus: SKIPPED (...)" and exits 3 when Citus is not installed.
set -uo pipefail
TREE="$(cd "${1:?usage: run.sh TREE}" && pwd)"
PGC="${PG_CONFIG:-pg_config}"
BINDIR="$("$PGC" --bindir)"
LIBDIR="$("$PGC" --pkglibdir)"
# The vendored Citus 13.2 supports PostgreSQL 15, 16 and 17 (docs/scaling.md#tests)
MAJOR="$("$PGC" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')"
case "$MAJOR" in
    15|16|17) ;;
    *) echo "citus: SKIPPED: Citus 13.2 supports PostgreSQL 15, 16 and 17, not $MAJOR"; exit 3 ;;
esac
if [ ! -f "$LIBDIR/citus.so" ]; then
    echo "citus: SKIPPED: Citus is not installed in $LIBDIR (bash ../shared/vendor/citus/build.sh installs it; .ci/run does)"
    exit 3
fi
W="${CITUS_DIR:-$TREE/tmp_check_citus}"
rm -rf "$W"; mkdir -p "$W"
# three free ports
ports=()
for p in $(seq "${CITUS_PORT_BASE:-57300}" $(( ${CITUS_PORT_BASE:-57300} + 99 ))); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
    ports+=("$p"); [ "${#ports[@]}" -eq 3 ] && break
done
GW_PID=""
stop_all() {
    [ -n "$GW_PID" ] && { kill "$GW_PID" 2>/dev/null; wait "$GW_PID" 2>/dev/null; }
    for i in 0 1 2; do "$BINDIR/pg_ctl" -D "$W/n$i" -m immediate -w stop >/dev/null 2>&1 || true; done
}
[ "${CITUS_KEEP:-0}" = 1 ] || trap stop_all EXIT   # CITUS_KEEP=1: leave the cluster running
psqln() { local port="$1"; shift; "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres "$@"; }
for i in 0 1 2; do
    "$BINDIR/initdb" -D "$W/n$i" -U postgres -A trust -E UTF8 --locale=C >"$W/initdb$i.log" 2>&1 || { cat "$W/initdb$i.log"; exit 1; }
    { grep -v '^shared_preload_libraries' "$TREE/test/dynindex.conf"
      echo "shared_preload_libraries = 'citus,dynindex'"
      echo "listen_addresses = '127.0.0.1'"; echo "port = ${ports[$i]}"
      echo "unix_socket_directories = '$W'"
      echo "max_prepared_transactions = 50"
      echo "citus.shard_count = 4"
      echo "dynindex.distributed = on"; } >> "$W/n$i/postgresql.conf"
    # a port found free may be taken meanwhile (any connection's local end on this shared
    # machine): start on the next free port instead, a few times
    for try in 1 2 3 4 5; do
        "$BINDIR/pg_ctl" -D "$W/n$i" -l "$W/n$i.log" -w -t 60 start >/dev/null && break
        grep -q 'Address already in use' "$W/n$i.log" && [ "$try" -lt 5 ] || { tail -20 "$W/n$i.log"; exit 1; }
        p=$(( ${ports[2]} > ${ports[$i]} ? ${ports[2]} : ${ports[$i]} ))
        while p=$((p + 1)); (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do :; done
        echo "port ${ports[$i]} was taken meanwhile: node $i on $p"
        ports[$i]=$p
        echo "port = $p" >> "$W/n$i/postgresql.conf"
        : > "$W/n$i.log"
    done
    for db in regression cluster clients; do
        psqln "${ports[$i]}" -d postgres -c "CREATE DATABASE $db" || exit 1
        psqln "${ports[$i]}" -d $db -c "CREATE EXTENSION citus" || exit 1
    done
done
for db in regression cluster clients; do
    psqln "${ports[0]}" -d $db -c "SELECT citus_set_coordinator_host('127.0.0.1', ${ports[0]})" \
        -c "SELECT citus_add_node('127.0.0.1', ${ports[1]})" -c "SELECT citus_add_node('127.0.0.1', ${ports[2]})" \
        -c "CREATE EXTENSION dynindex" >/dev/null || exit 1
done
echo "Citus cluster: coordinator 127.0.0.1:${ports[0]}, workers :${ports[1]} :${ports[2]}"
cd "$TREE" || exit 1
REG=("$("$PGC" --pkglibdir)/pgxs/src/test/regress/pg_regress" --use-existing --host=127.0.0.1
     --port="${ports[0]}" --user=postgres --bindir="$BINDIR")
rc=0
# 1. the cluster's own test (in a database of its own, so shard ids are stable)
"${REG[@]}" --dbname=cluster --inputdir="$TREE/test/citus" --outputdir="$W/cluster" citus_cluster citus_security || rc=1
# 2. the single-server regression tests that hold cluster-wide, same expected output
tests=$(grep -v '^#' "$TREE/test/citus/schedule" | tr '\n' ' ')
"${REG[@]}" --dbname=regression --inputdir="$TREE" --outputdir="$W/shared" $tests || rc=1

# 3. DynamoDB clients through the gateway, against the coordinator (database "clients"):
#    the client tests of test/clients, unchanged, on distributed tables.
GW="$TREE/src/gateway/dynindex-gateway"
[ -x "$GW" ] || GW="$BINDIR/dynindex-gateway"
CL="$TREE/test/clients"
PY=python3
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import boto3' 2>/dev/null && PY=/usr/bin/python3
if [ ! -x "$GW" ]; then
    echo "citus clients: FAILED: no dynindex-gateway (build it first)"; rc=1
else
    "$GW" --dev --host 127.0.0.1 --port 0 --pool-size 4 \
        --dbname "host=127.0.0.1 port=${ports[0]} user=postgres dbname=clients" >"$W/gateway.out" 2>"$W/gateway.err" &
    GW_PID=$!
    GW_URL=""
    for _ in $(seq 1 100); do
        GW_URL="$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$W/gateway.out" 2>/dev/null | head -1)"
        [ -n "$GW_URL" ] && break
        sleep 0.05
    done
    if [ -z "$GW_URL" ]; then
        echo "citus clients: FAILED: the gateway did not start"; cat "$W/gateway.err"; rc=1
    else
        echo "gateway on the coordinator: $GW_URL"
        export PGHOST=127.0.0.1 PGPORT="${ports[0]}" PGUSER=postgres PGDATABASE=clients GATEWAY_URL="$GW_URL"
        # a table created through the gateway: its table, LSI and GSI relations are distributed
        ndist=""
        if "$PY" "$TREE/test/citus/gateway_probe.py"; then
            ndist="$(psqln "${ports[0]}" -d clients -At -c "
                SELECT count(*) FROM (SELECT storage FROM dynindex.tables WHERE table_name = 'CitusGatewayProbe'
                                      UNION ALL SELECT storage FROM dynindex.indexes WHERE table_name = 'CitusGatewayProbe') r
                  JOIN pg_dist_partition p ON p.logicalrelid = r.storage::regclass")"
        fi
        if [ "$ndist" = 3 ]; then echo "ok - CitusGatewayProbe's table, LSI and GSI relations are distributed"
        else echo "not ok - CitusGatewayProbe's relations are distributed (${ndist:-probe failed} of 3)"; rc=1; fi
        if command -v node >/dev/null; then
            if [ ! -d "$CL/node_modules/@aws-sdk/client-dynamodb" ] || [ ! -d "$CL/node_modules/electrodb" ]; then
                (cd "$CL" && npm ci --no-audit --no-fund >"$W/npm.log" 2>&1) || cat "$W/npm.log"
            fi
            (cd "$CL" && node --test --test-reporter=spec --test-concurrency=1 \
                node/sdk.test.js node/query_scan.test.js node/electrodb.test.js node/electrodb_orders.test.js \
                node/partiql.test.js) >"$W/node.out" 2>&1
            nst=$?
            cat "$W/node.out"
            np="$(sed -n 's/^ℹ pass \([0-9]*\)$/\1/p' "$W/node.out" | tail -1)"
            nf="$(sed -n 's/^ℹ fail \([0-9]*\)$/\1/p' "$W/node.out" | tail -1)"
            echo "citus clients (node): ${np:-0} passed, ${nf:-?} failed"
            { [ "$nst" -eq 0 ] && [ "${nf:-1}" = 0 ] && [ "${np:-0}" -gt 0 ]; } || rc=1
        else
            echo "citus clients: node not found: FAILED to run"; rc=1
        fi
        if "$PY" -c 'import boto3' 2>/dev/null; then
            "$PY" "$CL/boto3_smoke.py" >"$W/boto3.out" 2>&1
            bst=$?
            cat "$W/boto3.out"
            { [ "$bst" -eq 0 ] && grep -q '^# boto3: [0-9]* passed, 0 failed$' "$W/boto3.out"; } || rc=1
        else
            echo "citus clients: python3-boto3 not installed: FAILED to run"; rc=1
        fi
        unset PGHOST PGPORT PGUSER PGDATABASE GATEWAY_URL
    fi
    kill "$GW_PID" 2>/dev/null; wait "$GW_PID" 2>/dev/null; GW_PID=""
fi
exit $rc
