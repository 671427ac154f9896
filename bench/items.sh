#!/bin/bash
# bench/items.sh — PutItem and GetItem through dynindex.api against hand-written
# SQL on an equivalent jsonb table (pk text, sk text, item jsonb, PRIMARY KEY (pk, sk)),
# in one run: 1 and 8 clients, -M prepared on both sides.
#
# Usage: bench/items.sh [psql/pgbench connection options...]
#   e.g. bench/items.sh -h /tmp -p 5432 -d bench
# Environment: DURATION (seconds per side and configuration, default 20), ROUNDS
# (alternating runs, default 4), KEYS (default 20000).
set -euo pipefail
DURATION=${DURATION:-20}
KEYS=${KEYS:-20000}
CONN=("$@")
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

psql -X -q -o /dev/null -v ON_ERROR_STOP=1 "${CONN[@]}" <<SQL
CREATE EXTENSION IF NOT EXISTS dynindex;
SELECT dynindex.api('DeleteTable', '{"TableName": "bench_items"}')
  WHERE EXISTS (SELECT 1 FROM dynindex.tables WHERE table_name = 'bench_items');
SELECT dynindex.api('CreateTable', '{"TableName": "bench_items", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]}');
DROP TABLE IF EXISTS bench_plain;
CREATE TABLE bench_plain (pk text, sk text, item jsonb, PRIMARY KEY (pk, sk));
-- the same items on both sides
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'bench_items', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'user#' || i), 'sk', '{"S": "profile"}'::jsonb,
                     'name', jsonb_build_object('S', 'name ' || i), 'age', jsonb_build_object('N', (i % 90)::text),
                     'tags', '{"SS": ["a", "b"]}'::jsonb))))
FROM generate_series(1, $KEYS) i;
INSERT INTO bench_plain
SELECT 'user#' || i, 'profile', jsonb_build_object('pk', jsonb_build_object('S', 'user#' || i), 'sk', '{"S": "profile"}'::jsonb,
                     'name', jsonb_build_object('S', 'name ' || i), 'age', jsonb_build_object('N', (i % 90)::text),
                     'tags', '{"SS": ["a", "b"]}'::jsonb)
FROM generate_series(1, $KEYS) i;
VACUUM ANALYZE bench_plain;
SQL
STORAGE=$(psql -X -At "${CONN[@]}" -c "SELECT storage FROM dynindex.tables WHERE table_name = 'bench_items'")
psql -X -q "${CONN[@]}" -c "VACUUM ANALYZE $STORAGE"

cat > "$DIR/put_api.sql" <<SQL
\set k random(1, $KEYS)
\set a random(1, 90)
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'bench_items', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'user#' || :k), 'sk', '{"S": "profile"}'::jsonb,
                     'name', jsonb_build_object('S', 'name ' || :k), 'age', jsonb_build_object('N', :a::text),
                     'tags', '{"SS": ["a", "b"]}'::jsonb)));
SQL
cat > "$DIR/put_sql.sql" <<SQL
\set k random(1, $KEYS)
\set a random(1, 90)
INSERT INTO bench_plain VALUES ('user#' || :k, 'profile',
  jsonb_build_object('pk', jsonb_build_object('S', 'user#' || :k), 'sk', '{"S": "profile"}'::jsonb,
                     'name', jsonb_build_object('S', 'name ' || :k), 'age', jsonb_build_object('N', :a::text),
                     'tags', '{"SS": ["a", "b"]}'::jsonb))
ON CONFLICT (pk, sk) DO UPDATE SET item = EXCLUDED.item;
SQL
cat > "$DIR/get_api.sql" <<SQL
\set k random(1, $KEYS)
SELECT dynindex.api('GetItem', jsonb_build_object('TableName', 'bench_items',
  'Key', jsonb_build_object('pk', jsonb_build_object('S', 'user#' || :k), 'sk', '{"S": "profile"}'::jsonb)));
SQL
cat > "$DIR/get_sql.sql" <<SQL
\set k random(1, $KEYS)
SELECT item FROM bench_plain WHERE pk = 'user#' || :k AND sk = 'profile';
SQL

# One pgbench run; prints its tps.
tps() {
	pgbench -n -M prepared -T "$3" -c "$2" -j "$2" -f "$DIR/$1.sql" "${CONN[@]}" 2>&1 |
		sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

# The two sides alternate in ROUNDS short runs (DURATION seconds per side in
# all), so that both see the same background load on a shared machine.
ROUNDS=${ROUNDS:-4}
printf '%-5s %-7s %12s %12s %7s\n' op clients api_tps sql_tps ratio
for op in put get; do
	for c in 1 8; do
		a=0
		s=0
		for _ in $(seq "$ROUNDS"); do
			a=$(echo "$a + $(tps "${op}_api" "$c" $((DURATION / ROUNDS)))" | bc -l)
			s=$(echo "$s + $(tps "${op}_sql" "$c" $((DURATION / ROUNDS)))" | bc -l)
		done
		printf '%-5s %-7s %12.0f %12.0f %7.2f\n' "$op" "$c" "$(echo "$a / $ROUNDS" | bc -l)" \
			"$(echo "$s / $ROUNDS" | bc -l)" "$(echo "$a / $s" | bc -l)"
	done
done
