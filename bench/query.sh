#!/bin/bash
# bench/query.sh — Query benchmarks (bench/README.md, "Query").
#  (a) a Query reading 10 items of one partition: 10,000-item vs 2,000,000-item table
#  (b) Query through dynindex.api vs a hand-written range scan on a plain table, 1 and 8 clients
# Each figure: the median of three alternating runs of [seconds per run] (default 10).
# Usage: PGHOST=/tmp/qs PGPORT=5496 PGUSER=postgres bench/query.sh [seconds per run]
# Needs a server with dynindex preloaded; creates and drops its own tables.
set -euo pipefail
T=${1:-10}
DB=${PGDATABASE:-postgres}
PSQL="psql -X -q -v ON_ERROR_STOP=1 -d $DB"
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

$PSQL -c "CREATE EXTENSION IF NOT EXISTS dynindex"

# load a table of n items: n/10 partitions p<k> of 10 items s00..s09 (about 80 bytes each)
load() {
  local name=$1 n=$2
  $PSQL <<SQL
SELECT dynindex.api('DeleteTable', '{"TableName":"$name"}') FROM dynindex.tables WHERE table_name = '$name';
SELECT dynindex.api('CreateTable', '{"TableName":"$name","BillingMode":"PAY_PER_REQUEST",
  "KeySchema":[{"AttributeName":"p","KeyType":"HASH"},{"AttributeName":"s","KeyType":"RANGE"}],
  "AttributeDefinitions":[{"AttributeName":"p","AttributeType":"S"},{"AttributeName":"s","AttributeType":"S"}]}') IS NOT NULL;
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', '$name', 'Item', jsonb_build_object(
    'p', jsonb_build_object('S', 'p' || (i / 10)), 's', jsonb_build_object('S', 's' || lpad((i % 10)::text, 2, '0')),
    'v', jsonb_build_object('N', i::text), 'name', jsonb_build_object('S', 'item number ' || i)))))
  FROM generate_series(0, $n - 1) i;
SQL
  $PSQL -c "VACUUM ANALYZE $($PSQL -Atc "SELECT storage FROM dynindex.tables WHERE table_name = '$name'")"
}

echo "loading 10,000 items";    s=$(date +%s); load qb_small 10000;   echo "  $(( $(date +%s) - s )) s"
if [ -z "${SKIP_BIG_LOAD:-}" ]; then echo "loading 2,000,000 items"; s=$(date +%s); load qb_big 2000000; echo "  $(( $(date +%s) - s )) s"; fi
$PSQL <<'SQL'
DROP TABLE IF EXISTS qb_plain;
CREATE TABLE qb_plain (pk text, sk text, item jsonb, PRIMARY KEY (pk, sk));
INSERT INTO qb_plain SELECT 'p' || (i / 10), 's' || lpad((i % 10)::text, 2, '0'),
  jsonb_build_object('p', jsonb_build_object('S', 'p' || (i / 10)), 's', jsonb_build_object('S', 's' || lpad((i % 10)::text, 2, '0')),
                     'v', jsonb_build_object('N', i::text), 'name', jsonb_build_object('S', 'item number ' || i))
  FROM generate_series(0, 9999) i;
VACUUM ANALYZE qb_plain;
SQL

# let the load's dirty pages reach disk before measuring
$PSQL -c "CHECKPOINT"

# EXPLAIN of the statement a Query runs: an Index Scan on the primary key, both directions
big_rel=$($PSQL -Atc "SELECT storage FROM dynindex.tables WHERE table_name = 'qb_big'")
for dir in "" " DESC"; do
  $PSQL -Atc "EXPLAIN SELECT pk, sk, size, item FROM $big_rel WHERE pk = '\\x70313233' AND (sk) >= ('\\x') ORDER BY sk$dir LIMIT 64" | sed 's/^/  /'
done

# pgbench -M prepared cannot type a variable inside jsonb_build_object: wrap both sides in
# SQL functions of the same shape, so both pay the same call overhead
$PSQL <<'SQL'
CREATE OR REPLACE FUNCTION qb_api(t text, k int4) RETURNS jsonb LANGUAGE sql AS $$
    SELECT dynindex.api('Query', jsonb_build_object('TableName', t, 'KeyConditionExpression', 'p = :p',
      'ExpressionAttributeValues', jsonb_build_object(':p', jsonb_build_object('S', 'p' || k))))
$$;
CREATE OR REPLACE FUNCTION qb_sql(k int4) RETURNS SETOF jsonb LANGUAGE sql AS $$
    SELECT item FROM qb_plain WHERE pk = 'p' || k ORDER BY sk
$$;
SQL
cat > "$DIR/qb_small.sql" <<'X'
\set k random(0, 999)
SELECT qb_api('qb_small', :k);
X
cat > "$DIR/qb_big.sql" <<'X'
\set k random(0, 999)
SELECT qb_api('qb_big', :k);
X
cat > "$DIR/plain.sql" <<'X'
\set k random(0, 999)
SELECT * FROM qb_sql(:k);
X

tps() {  # script clients -> tps
  pgbench -n -M prepared -T "$T" -c "$2" -j "$(( $2 < 2 ? 1 : 2 ))" -f "$DIR/$1.sql" "$DB" 2>/dev/null \
    | awk '/^tps/ {printf "%.0f", $3}'
}

# same 1,000 partitions on both tables (the same working set: this measures the cost of the
# table size, not of the cache); alternate the runs and take the median of three (shared machine)
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
s1=$(tps qb_small 1); b1=$(tps qb_big 1); s2=$(tps qb_small 1); b2=$(tps qb_big 1); s3=$(tps qb_small 1); b3=$(tps qb_big 1)
small=$(median "$s1" "$s2" "$s3"); big=$(median "$b1" "$b2" "$b3")
echo "    runs: 10k $s1 $s2 $s3; 2M $b1 $b2 $b3"
$PSQL -Atc "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT item FROM $big_rel WHERE pk = '\\x70353535' ORDER BY sk LIMIT 64" | grep -m1 Buffers | sed 's/^ */    2M table, buffers per Query: /'
echo "(a) Query of 10 items, 1 client: 10k-item table $small tps, 2M-item table $big tps, ratio $(echo "scale=2; $big / $small" | bc)"
for c in 1 8; do
  a1=$(tps qb_small $c); p1=$(tps plain $c); a2=$(tps qb_small $c); p2=$(tps plain $c); a3=$(tps qb_small $c); p3=$(tps plain $c)
  api=$(median "$a1" "$a2" "$a3"); plain=$(median "$p1" "$p2" "$p3")
  echo "(b) $c client(s): dynindex.api Query $api tps, plain SQL range scan $plain tps, ratio $(echo "scale=2; $api / $plain" | bc)"
done

[ -n "${KEEP_TABLES:-}" ] && exit 0
$PSQL <<'SQL'
SELECT dynindex.api('DeleteTable', '{"TableName":"qb_big"}') IS NOT NULL AS dropped_big;
SELECT dynindex.api('DeleteTable', '{"TableName":"qb_small"}') IS NOT NULL AS dropped_small;
DROP TABLE qb_plain;
DROP FUNCTION qb_api(text, int4);
DROP FUNCTION qb_sql(int4);
SQL
