#!/usr/bin/env bash
# GSI lag of fresh tables, indexes and databases, and read-your-writes GSI reads
# (issue #25 item 3).  See bench/README.md, "GSI lag and read-your-writes".
# Usage: PGHOST=... PGPORT=... [PGUSER=...] [HTTP_URL=http://127.0.0.1:8000] bench/gsi_lag.sh [dbname]
#   TABLES (20) fresh tables, DBS (3) fresh databases, INDEXES (5) indexes added by
#   UpdateTable, ROUNDS (2000) write-then-read rounds per path.  Needs
#   track_commit_timestamp = on; HTTP_URL: dynindex_http or the gateway in --dev mode
#   (read-your-writes through the X-Dynindex-Gsi-Consistency header), else skipped.
# 1. lag = commit time of the GSI entry - commit time of the item (track_commit_timestamp)
#    of the first write to a table created just before, and of later writes to it
#    (each 30 ms after the previous: the worker idle, as between a test's steps);
# 2. the same in a database created just before (its worker starts then);
# 3. an index added by UpdateTable to a table with one item: UpdateTable's return to ACTIVE;
# 4. PutItem, then at once a Query of the GSI under dynindex.gsi_read_your_writes (SQL,
#    timed in the server around the call) or with the header (HTTP, timed by the client):
#    p50/p99/max of the Query alone, and how many saw the write.
set -euo pipefail
DB=${1:-${PGDATABASE:-postgres}}
TABLES=${TABLES:-20}
DBS=${DBS:-3}
INDEXES=${INDEXES:-5}
ROUNDS=${ROUNDS:-2000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
q() { psql -qAtX -v ON_ERROR_STOP=1 "$@"; }

if [ "$(q -d "$DB" -c "SHOW track_commit_timestamp")" != on ]; then
  echo "needs track_commit_timestamp = on (ALTER SYSTEM SET track_commit_timestamp = on; restart)" >&2; exit 1
fi
q -d "$DB" -c "CREATE EXTENSION IF NOT EXISTS dynindex" >/dev/null
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"

create() { # table
  echo "SELECT dynindex.api('CreateTable', '{\"TableName\":\"$1\",\"BillingMode\":\"PAY_PER_REQUEST\",\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}],\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"g\",\"AttributeType\":\"S\"}],\"GlobalSecondaryIndexes\":[{\"IndexName\":\"byG\",\"KeySchema\":[{\"AttributeName\":\"g\",\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}]}') \\g /dev/null"
}
put() { # table key
  echo "SELECT dynindex.api('PutItem', '{\"TableName\":\"$1\",\"Item\":{\"pk\":{\"S\":\"$2\"},\"g\":{\"S\":\"x\"}}}') \\g /dev/null"
}
# the lags of table $1's items into lags(kind): 'first' for key a0, else 'warm'
collect() {
  echo "SELECT dynindex.wait_for_indexes('$1', '30 s') \\g /dev/null"
  echo "SELECT t.storage AS ts, i.storage AS gs FROM dynindex.tables t JOIN dynindex.indexes i USING (table_name) WHERE table_name = '$1' \\gset"
  echo "INSERT INTO lags SELECT CASE WHEN b.pk = g.pk AND b.item -> 'pk' ->> 'S' = 'a0' THEN '$2 first' ELSE '$2 later' END,"
  echo "  extract(epoch FROM pg_xact_commit_timestamp(g.xmin) - pg_xact_commit_timestamp(b.xmin)) * 1000 FROM :ts b JOIN :gs g ON g.pk = b.pk;"
}
report() {
  echo "SELECT rpad(kind, 22), count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1), round(percentile_cont(0.9) WITHIN GROUP (ORDER BY ms)::numeric, 1), round(max(ms)::numeric, 1) FROM lags GROUP BY kind ORDER BY kind;"
}

echo
echo "## 1-2. Lag (ms) of the first write to a fresh table / database, and of later writes (30 ms apart)"
echo "kind                  |n  |p50|p90|max"
{
  echo "CREATE TEMP TABLE lags (kind text, ms float8);"
  for ((i = 1; i <= TABLES; i++)); do
    create "LagFresh$i"; put "LagFresh$i" a0; echo "SELECT pg_sleep(0.03) \\g /dev/null"
    for w in 1 2 3; do put "LagFresh$i" "a$w"; echo "SELECT pg_sleep(0.03) \\g /dev/null"; done
    collect "LagFresh$i" table
    echo "SELECT dynindex.api('DeleteTable', '{\"TableName\":\"LagFresh$i\"}') \\g /dev/null"
  done
  echo "\\copy lags TO '$tmp/lags.tsv'"
} > "$tmp/tables.sql"
q -d "$DB" -f "$tmp/tables.sql"
: > "$tmp/dblags.tsv"
for ((i = 1; i <= DBS; i++)); do
  d="dynindex_lag_$$_$i"
  q -d "$DB" -c "CREATE DATABASE $d" >/dev/null
  {
    echo "CREATE EXTENSION dynindex;"
    echo "CREATE TEMP TABLE lags (kind text, ms float8);"
    create LagDb; put LagDb a0; echo "SELECT pg_sleep(0.03) \\g /dev/null"
    for w in 1 2 3; do put LagDb "a$w"; echo "SELECT pg_sleep(0.03) \\g /dev/null"; done
    collect LagDb database
    echo "\\copy lags TO '$tmp/dblag$i.tsv'"
  } > "$tmp/db.sql"
  q -d "$d" -f "$tmp/db.sql"
  cat "$tmp/dblag$i.tsv" >> "$tmp/dblags.tsv"
  # DROP DATABASE waits for the database's worker to leave (5 s at most)
  q -d "$DB" -c "SET statement_timeout = '20s'" -c "DROP DATABASE $d" >/dev/null || echo "(could not drop database $d)" >&2
done
{
  echo "CREATE TEMP TABLE lags (kind text, ms float8);"
  echo "\\copy lags FROM '$tmp/lags.tsv'"
  echo "\\copy lags FROM '$tmp/dblags.tsv'"
  report
} > "$tmp/report.sql"
q -d "$DB" -f "$tmp/report.sql"

echo
echo "## 3. An index added by UpdateTable (table with one item): from UpdateTable's return to ACTIVE (ms)"
for ((i = 1; i <= INDEXES; i++)); do
  q -d "$DB" <<SQL
SELECT dynindex.api('DeleteTable', '{"TableName":"LagIndex"}') WHERE EXISTS (SELECT 1 FROM dynindex.tables WHERE table_name = 'LagIndex') \g /dev/null
SELECT dynindex.api('CreateTable', '{"TableName":"LagIndex","BillingMode":"PAY_PER_REQUEST","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}]}') \g /dev/null
$(put LagIndex a0)
SELECT dynindex.api('UpdateTable', '{"TableName":"LagIndex","AttributeDefinitions":[{"AttributeName":"g","AttributeType":"S"}],"GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"byG","KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],"Projection":{"ProjectionType":"ALL"}}}]}') \g /dev/null
SELECT clock_timestamp() AS t1 \gset
DO \$\$ BEGIN FOR i IN 1..30000 LOOP EXIT WHEN (SELECT status FROM dynindex.indexes WHERE table_name = 'LagIndex') = 'ACTIVE'; PERFORM pg_sleep(0.0005); END LOOP; END \$\$;
SELECT round(extract(epoch FROM clock_timestamp() - :'t1'::timestamptz) * 1000, 1);
SQL
done | paste -sd' '
q -d "$DB" -c "SELECT dynindex.api('DeleteTable', '{\"TableName\":\"LagIndex\"}') WHERE EXISTS (SELECT 1 FROM dynindex.tables WHERE table_name = 'LagIndex')" >/dev/null

echo
echo "## 4. Read-your-writes: PutItem, then at once a Query of the GSI ($ROUNDS rounds, warm table)"
echo "path | rounds | saw the write | p50 ms | p99 ms | max ms"
q -d "$DB" <<SQL
SELECT dynindex.api('DeleteTable', '{"TableName":"LagRyw"}') WHERE EXISTS (SELECT 1 FROM dynindex.tables WHERE table_name = 'LagRyw') \g /dev/null
$(create LagRyw)
SQL
q -d "$DB" <<SQL
CREATE TEMP TABLE ryw (ms float8, saw boolean);
CREATE PROCEDURE pg_temp.rounds(n int, tag text) LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz; r jsonb;
BEGIN
  FOR i IN 1..n LOOP
    PERFORM dynindex.api('PutItem', jsonb_build_object('TableName', 'LagRyw', 'Item', jsonb_build_object(
      'pk', jsonb_build_object('S', tag || i), 'g', jsonb_build_object('S', tag || i))));
    COMMIT;
    t0 := clock_timestamp();
    r := dynindex.api('Query', jsonb_build_object('TableName', 'LagRyw', 'IndexName', 'byG', 'KeyConditionExpression', 'g = :g',
      'ExpressionAttributeValues', jsonb_build_object(':g', jsonb_build_object('S', tag || i))));
    INSERT INTO ryw VALUES (extract(epoch FROM clock_timestamp() - t0) * 1000, (r ->> 'Count')::int = 1);
    COMMIT;
  END LOOP;
END \$\$;
SET dynindex.gsi_read_your_writes = on;
CALL pg_temp.rounds(100, 'w');  -- warm-up
TRUNCATE ryw;
CALL pg_temp.rounds($ROUNDS, 's');
SELECT 'SQL (in the server) | ' || count(*) || ' | ' || count(*) FILTER (WHERE saw) || ' | ' ||
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) || ' | ' ||
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2) || ' | ' || round(max(ms)::numeric, 2) FROM ryw;
TRUNCATE ryw;
SET dynindex.gsi_read_your_writes = off;
CALL pg_temp.rounds($ROUNDS, 'e');
SELECT 'SQL, without (eventual) | ' || count(*) || ' | ' || count(*) FILTER (WHERE saw) || ' | ' ||
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) || ' | ' ||
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2) || ' | ' || round(max(ms)::numeric, 2) FROM ryw;
SQL
if [ -n "${HTTP_URL:-}" ]; then
  python3 - "$HTTP_URL" "$ROUNDS" <<'PY'
import http.client, json, sys, time, urllib.parse
url = urllib.parse.urlparse(sys.argv[1]); n = int(sys.argv[2])
conn = http.client.HTTPConnection(url.hostname, url.port or 80)
def call(op, body, headers={}):
    h = {'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'DynamoDB_20120810.' + op, **headers}
    conn.request('POST', '/', json.dumps(body), h)
    r = conn.getresponse(); data = r.read()
    if r.status != 200: raise SystemExit(f'{op}: HTTP {r.status} {data[:200]!r}')
    return json.loads(data)
for label, hdr in (('HTTP with the header', {'X-Dynindex-Gsi-Consistency': 'read-your-writes'}), ('HTTP, without (eventual)', {})):
    times = []; saw = 0
    for i in range(100 + n):
        k = f'h{label[:6]}{i}'
        call('PutItem', {'TableName': 'LagRyw', 'Item': {'pk': {'S': k}, 'g': {'S': k}}})
        t0 = time.perf_counter()
        r = call('Query', {'TableName': 'LagRyw', 'IndexName': 'byG', 'KeyConditionExpression': 'g = :g',
                           'ExpressionAttributeValues': {':g': {'S': k}}}, hdr)
        if i >= 100:
            times.append((time.perf_counter() - t0) * 1000); saw += r['Count'] == 1
    times.sort()
    print(f"{label} | {n} | {saw} | {times[n // 2]:.2f} | {times[int(n * 0.99)]:.2f} | {times[-1]:.2f}")
PY
else
  echo "(HTTP_URL not set: the endpoint rounds are skipped)"
fi
q -d "$DB" -c "SELECT dynindex.api('DeleteTable', '{\"TableName\":\"LagRyw\"}')" >/dev/null
