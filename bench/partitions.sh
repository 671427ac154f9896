#!/usr/bin/env bash
# Storage layout benchmark: a table stored as one relation vs hash-partitioned on the
# partition key (dynindex.table_partitions = 8), PutItem / GetItem / Query of 10 items,
# same run, pgbench, 4 clients.  (pgbench takes any :name as a variable, so the
# Query script spells DynamoDB's ':v' placeholder with chr(58).)  Usage: PGHOST=... PGPORT=... PGUSER=... bench/partitions.sh
set -euo pipefail
DB=${PGDATABASE:-postgres}
SECS=${SECS:-15}
CLIENTS=${CLIENTS:-4}
ITEMS=${ITEMS:-100000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

psql -qX -d "$DB" -c "CREATE EXTENSION IF NOT EXISTS dynindex" >/dev/null
for parts in 0 8; do
  t="Part$parts"
  psql -qX -d "$DB" >/dev/null <<SQL
SELECT dynindex.api('DeleteTable', '{"TableName":"$t"}') WHERE EXISTS (SELECT 1 FROM dynindex.tables WHERE table_name = '$t');
SET dynindex.table_partitions = $parts;
SELECT dynindex.api('CreateTable', '{"TableName":"$t","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"N"}],"BillingMode":"PAY_PER_REQUEST"}');
-- ITEMS items in ITEMS/10 partitions of 10 items
SELECT count(dynindex.api('BatchWriteItem', jsonb_build_object('RequestItems', jsonb_build_object('$t',
         (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object(
            'pk', jsonb_build_object('S', 'u' || ((g * 25 + i) / 10)),
            'sk', jsonb_build_object('N', (((g * 25 + i) % 10))::text),
            'payload', jsonb_build_object('S', repeat('x', 100)))))) FROM generate_series(0, 24) i)))))
  FROM generate_series(0, $ITEMS / 25 - 1) g;
VACUUM ANALYZE;
SQL
  cat > "$tmp/put$parts.sql" <<SQL
\set k random(0, $ITEMS / 10 - 1)
\set s random(0, 9)
SELECT dynindex.api('PutItem', ('{"TableName":"$t","Item":{"pk":{"S":"u' || :k || '"},"sk":{"N":"' || :s || '"},"payload":{"S":"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"}}}')::jsonb);
SQL
  cat > "$tmp/get$parts.sql" <<SQL
\set k random(0, $ITEMS / 10 - 1)
\set s random(0, 9)
SELECT dynindex.api('GetItem', ('{"TableName":"$t","Key":{"pk":{"S":"u' || :k || '"},"sk":{"N":"' || :s || '"}}}')::jsonb);
SQL
  cat > "$tmp/query$parts.sql" <<SQL
\set k random(0, $ITEMS / 10 - 1)
SELECT dynindex.api('Query', jsonb_build_object('TableName', '$t', 'KeyConditionExpression', 'pk = ' || chr(58) || 'v',
  'ExpressionAttributeValues', jsonb_build_object(chr(58) || 'v', jsonb_build_object('S', 'u' || :k))));
SQL
done

tps() { pgbench -n -M prepared -c "$CLIENTS" -j 2 -T "$SECS" -f "$1" "$DB" 2>/dev/null | awk '/^tps/ {printf "%.0f", $3}'; }
printf "%-8s %12s %12s %8s\n" op "1 relation" "8 partitions" ratio
for op in put get query; do
  a=$(tps "$tmp/${op}0.sql"); b=$(tps "$tmp/${op}8.sql")
  printf "%-8s %12s %12s %8s\n" "$op" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b / a}')"
done
psql -qX -d "$DB" -c "SELECT dynindex.api('DeleteTable', '{\"TableName\":\"Part0\"}'), dynindex.api('DeleteTable', '{\"TableName\":\"Part8\"}')" >/dev/null
