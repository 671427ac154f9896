#!/usr/bin/env bash
# bench/security.sh [psql connection options] — the cost of the permission model
# per request (docs/security.md): GetItem, and PutItem on a table with a GSI
# (whose change capture runs in an internal section), as a superuser (checks
# short-cut) and as an application role holding the write recipe (rights
# checked at the lookup, the request run as the role, the catalog and queue
# work switched to the extension owner).  ROUNDS rounds (default 5) of N
# calls (default 5000) alternate the two roles; prints microseconds per call.
set -euo pipefail
N="${N:-5000}"; ROUNDS="${ROUNDS:-5}"
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
q -c "DROP ROLE IF EXISTS bench_sec_app" >/dev/null 2>&1 || true
q <<'SQL' >/dev/null
SELECT dynindex.api('DeleteTable', '{"TableName":"BenchSec"}') FROM dynindex.tables WHERE table_name = 'BenchSec';
SELECT dynindex.api('CreateTable', '{"TableName":"BenchSec","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"g","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
  "GlobalSecondaryIndexes":[{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"KEYS_ONLY"}}]}');
CREATE ROLE bench_sec_app NOLOGIN;
SELECT dynindex.grant_table('BenchSec', 'bench_sec_app', 'write');
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'BenchSec', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'k' || i), 'g', jsonb_build_object('S', 'g' || (i % 10))))))
  FROM generate_series(1, 1000) i;
SQL
run() {  # role op -> microseconds per call
    local role="$1" op="$2" body
    if [ "$op" = GetItem ]; then
        body="jsonb_build_object('TableName', 'BenchSec', 'Key', jsonb_build_object('pk', jsonb_build_object('S', 'k' || (i % 1000 + 1))))"
    else
        body="jsonb_build_object('TableName', 'BenchSec', 'Item', jsonb_build_object('pk', jsonb_build_object('S', 'k' || (i % 1000 + 1)), 'g', jsonb_build_object('S', 'g' || (i % 10))))"
    fi
    q -c "SET ROLE $role" -c "SELECT round(extract(epoch FROM (clock_timestamp() - s)) * 1e6 / $N, 1) FROM (SELECT clock_timestamp() s) t, LATERAL (SELECT count(dynindex.api('$op', $body)) FROM generate_series(1, $N) i) x" | tail -1
}

for op in GetItem PutItem; do
    su=(); app=()
    for r in $(seq 1 "$ROUNDS"); do
        su+=("$(run "$(q -c 'SELECT current_user')" "$op")")
        app+=("$(run bench_sec_app "$op")")
    done
    printf '%-8s superuser: %s us/call   app role (write recipe): %s us/call\n' "$op" "$(printf '%s\n' "${su[@]}" | sort -n | sed -n "$(( (ROUNDS + 1) / 2 ))p")" "$(printf '%s\n' "${app[@]}" | sort -n | sed -n "$(( (ROUNDS + 1) / 2 ))p")"
done
q -c "SELECT dynindex.api('DeleteTable', '{\"TableName\":\"BenchSec\"}')" -c "DROP OWNED BY bench_sec_app" -c "DROP ROLE bench_sec_app" >/dev/null
