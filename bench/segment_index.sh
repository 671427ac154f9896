#!/bin/bash
# bench/segment_index.sh — the write cost of the parallel-Scan segment index
# ((key_hash(pk), pk, sk) on every storage relation) and what it buys a
# parallel Scan, in one run: two tables that differ only by that index, PutItem
# of new keys (an index entry per insert) and of existing keys (an overwrite),
# 2 clients, the two tables alternating in short rounds; then the time of a
# 4-segment parallel Scan of each (with the index each segment reads its hash
# range; without it each segment reads the whole table and sorts its share).
#
# Usage: bench/segment_index.sh [psql/pgbench connection options...]
# Environment: DURATION (seconds per table and workload, default 20), ROUNDS
# (alternating runs, default 4), KEYS (items loaded per table, default 20000).
set -euo pipefail
DURATION=${DURATION:-20}
ROUNDS=${ROUNDS:-4}
KEYS=${KEYS:-20000}
CONN=("$@")
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

for t in seg_with seg_without; do
	psql -X -q -o /dev/null -v ON_ERROR_STOP=1 "${CONN[@]}" <<SQL
CREATE EXTENSION IF NOT EXISTS dynindex;
SELECT dynindex.api('DeleteTable', '{"TableName": "$t"}') WHERE EXISTS (SELECT 1 FROM dynindex.tables WHERE table_name = '$t');
SELECT dynindex.api('CreateTable', '{"TableName": "$t", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]}');
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', '$t', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'user#' || i), 'sk', '{"S": "profile"}'::jsonb,
                     'name', jsonb_build_object('S', 'name ' || i), 'age', jsonb_build_object('N', (i % 90)::text)))))
FROM generate_series(1, $KEYS) i;
SQL
done
# the table without: its segment index dropped
psql -X -q -v ON_ERROR_STOP=1 "${CONN[@]}" <<'SQL'
DO $$
DECLARE st text := (SELECT storage FROM dynindex.tables WHERE table_name = 'seg_without');
BEGIN
    EXECUTE (SELECT format('DROP INDEX %s', x.indexrelid::regclass) FROM pg_index x
              WHERE x.indrelid = st::regclass AND x.indexprs IS NOT NULL);
END $$;
SQL
for t in seg_with seg_without; do
	psql -X -q "${CONN[@]}" -c "VACUUM ANALYZE $(psql -X -At "${CONN[@]}" -c "SELECT storage FROM dynindex.tables WHERE table_name = '$t'")"
done

for t in seg_with seg_without; do
	# new keys: a fresh partition key per PutItem (an insert into every index)
	cat > "$DIR/new_$t.sql" <<SQL
\set k random(1, 1000000000)
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', '$t', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'new#' || :k || '#' || :client_id), 'sk', '{"S": "profile"}'::jsonb,
                     'name', jsonb_build_object('S', 'name ' || :k), 'age', jsonb_build_object('N', '1'))));
SQL
	# existing keys: overwrite a loaded item with another age
	cat > "$DIR/over_$t.sql" <<SQL
\set k random(1, $KEYS)
\set a random(1, 90)
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', '$t', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'user#' || :k), 'sk', '{"S": "profile"}'::jsonb,
                     'name', jsonb_build_object('S', 'name ' || :k), 'age', jsonb_build_object('N', :a::text))));
SQL
done

# One pgbench run (2 clients); prints its tps.
tps() {
	pgbench -n -M prepared -T "$2" -c 2 -j 2 -f "$DIR/$1.sql" "${CONN[@]}" 2>&1 |
		sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

printf '%-22s %14s %14s %7s\n' workload with_index without ratio
for w in new over; do
	a=0
	b=0
	for _ in $(seq "$ROUNDS"); do
		a=$(echo "$a + $(tps "${w}_seg_with" $((DURATION / ROUNDS)))" | bc -l)
		b=$(echo "$b + $(tps "${w}_seg_without" $((DURATION / ROUNDS)))" | bc -l)
	done
	printf '%-22s %14.0f %14.0f %7.2f\n' "PutItem $w keys (tps)" "$(echo "$a / $ROUNDS" | bc -l)" \
		"$(echo "$b / $ROUNDS" | bc -l)" "$(echo "$a / $b" | bc -l)"
done

# CPU cost without the commit's WAL flush: KEYS new items in one transaction
# (rolled back), each table 3 times alternately, best time
for t in seg_with seg_without; do : >"$DIR/bulk_$t"; done
for _ in 1 2 3; do
	for t in seg_with seg_without; do
		psql -X -At "${CONN[@]}" >>"$DIR/bulk_$t" <<SQL
BEGIN;
SELECT clock_timestamp() AS t0 \gset
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', '$t', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'bulk#' || i), 'sk', '{"S": "profile"}'::jsonb,
                     'name', jsonb_build_object('S', 'name ' || i), 'age', jsonb_build_object('N', '1')))))
  FROM generate_series(1, $KEYS) i \g /dev/null
SELECT round(extract(epoch FROM clock_timestamp() - :'t0'::timestamptz) * 1000);
ROLLBACK;
SQL
	done
done
a=$(grep -E '^[0-9]+$' "$DIR/bulk_seg_with" | sort -n | head -1)
b=$(grep -E '^[0-9]+$' "$DIR/bulk_seg_without" | sort -n | head -1)
printf '%-22s %11s ms %11s ms %7.2f\n' "$KEYS PutItem, 1 xact" "$a" "$b" "$(echo "$b / $a" | bc -l)"

# A 4-segment parallel Scan of each table (the segments one after another;
# milliseconds for all four, best of 3)
for t in seg_with seg_without; do
	ms=$(psql -X -At "${CONN[@]}" <<SQL | tail -1
DO \$\$
DECLARE t0 timestamptz; best float8 := 1e9; n bigint;
BEGIN
    FOR r IN 1..3 LOOP
        t0 := clock_timestamp();
        SELECT sum((SELECT count(*) FROM dynindex.scan('$t', segment => s, total_segments => 4))) INTO n FROM generate_series(0, 3) s;
        best := least(best, extract(epoch FROM clock_timestamp() - t0) * 1000);
    END LOOP;
    RAISE NOTICE '% items, % ms', n, round(best::numeric);
    PERFORM set_config('bench.ms', round(best::numeric)::text, false);
END \$\$;
SELECT current_setting('bench.ms');
SQL
)
	printf '%-22s %s ms\n' "Scan 4 segments $t" "$ms"
done
