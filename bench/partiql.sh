#!/bin/bash
# bench/partiql.sh — PartiQL through dynindex.api against the equivalent JSON operation,
# in one run: a SELECT by full primary key vs GetItem, and a SELECT that pins the
# partition key (a Query of 10 items) vs the JSON Query; 1 and 2 clients, -M prepared.
#
# Usage: bench/partiql.sh [psql/pgbench connection options...]
#   e.g. bench/partiql.sh -h /tmp -p 5432 -d bench
# Environment: DURATION (seconds per side and configuration, default 20), ROUNDS
# (alternating runs, default 4), KEYS (partition keys, default 2000; 10 items each),
# CPU_CALLS (calls per side and round of the CPU-time comparison, 6 rounds; default 10000).
set -euo pipefail
DURATION=${DURATION:-20}
ROUNDS=${ROUNDS:-4}
KEYS=${KEYS:-2000}
CLIENTS=${CLIENTS:-"1 2"}
CPU_CALLS=${CPU_CALLS:-10000}
CONN=("$@")
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

psql -X -q -o /dev/null -v ON_ERROR_STOP=1 "${CONN[@]}" <<SQL
CREATE EXTENSION IF NOT EXISTS dynindex;
SELECT dynindex.api('DeleteTable', '{"TableName": "bench_pq"}')
  WHERE EXISTS (SELECT 1 FROM dynindex.tables WHERE table_name = 'bench_pq');
SELECT dynindex.api('CreateTable', '{"TableName": "bench_pq", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]}');
SELECT count(dynindex.api('BatchWriteItem', jsonb_build_object('RequestItems', jsonb_build_object('bench_pq',
  (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
     jsonb_build_object('pk', jsonb_build_object('S', 'user#' || i), 'sk', jsonb_build_object('N', j::text),
                        'name', jsonb_build_object('S', 'name ' || i), 'age', jsonb_build_object('N', (i % 90)::text),
                        'tags', '{"SS": ["a", "b"]}'::jsonb)))) FROM generate_series(1, 10) j)))))
FROM generate_series(1, $KEYS) i;
SQL
STORAGE=$(psql -X -At "${CONN[@]}" -c "SELECT storage FROM dynindex.tables WHERE table_name = 'bench_pq'")
psql -X -q "${CONN[@]}" -c "VACUUM ANALYZE $STORAGE"

cat > "$DIR/get_pq.sql" <<SQL
\set k random(1, $KEYS)
\set s random(1, 10)
SELECT dynindex.api('ExecuteStatement', jsonb_build_object('Statement', 'SELECT * FROM "bench_pq" WHERE pk = ? AND sk = ?',
  'Parameters', jsonb_build_array(jsonb_build_object('S', 'user#' || :k), jsonb_build_object('N', :s::text))));
SQL
cat > "$DIR/get_json.sql" <<SQL
\set k random(1, $KEYS)
\set s random(1, 10)
SELECT dynindex.api('GetItem', jsonb_build_object('TableName', 'bench_pq',
  'Key', jsonb_build_object('pk', jsonb_build_object('S', 'user#' || :k), 'sk', jsonb_build_object('N', :s::text))));
SQL
cat > "$DIR/query_pq.sql" <<SQL
\set k random(1, $KEYS)
SELECT dynindex.api('ExecuteStatement', jsonb_build_object('Statement', 'SELECT * FROM "bench_pq" WHERE pk = ? AND sk > ?',
  'Parameters', jsonb_build_array(jsonb_build_object('S', 'user#' || :k), '{"N": "0"}'::jsonb)));
SQL
cat > "$DIR/query_json.sql" <<SQL
\set k random(1, $KEYS)
SELECT dynindex.api('Query', jsonb_build_object('TableName', 'bench_pq',
  'KeyConditionExpression', 'pk = ' || chr(58) || 'p AND sk > ' || chr(58) || 's',
  'ExpressionAttributeValues', jsonb_build_object(chr(58) || 'p', jsonb_build_object('S', 'user#' || :k),
                                                  chr(58) || 's', '{"N": "0"}'::jsonb)));
SQL

# (':p' is written chr(58) || 'p': pgbench -M prepared would take ':p' for a variable.)

# One pgbench run; prints its tps.
tps() {
	pgbench -n -M prepared -T "$3" -c "$2" -j "$2" -f "$DIR/$1.sql" "${CONN[@]}" 2>&1 |
		sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

# The two sides alternate in ROUNDS short runs (DURATION seconds per side in all),
# so that both see the same background load on a shared machine.
printf '%-6s %-7s %12s %12s %7s\n' op clients partiql_tps json_tps ratio
for op in get query; do
	for c in $CLIENTS; do
		a=0
		s=0
		for _ in $(seq "$ROUNDS"); do
			a=$(echo "$a + $(tps "${op}_pq" "$c" $((DURATION / ROUNDS)))" | bc -l)
			s=$(echo "$s + $(tps "${op}_json" "$c" $((DURATION / ROUNDS)))" | bc -l)
		done
		printf '%-6s %-7s %12.0f %12.0f %7.2f\n' "$op" "$c" "$(echo "$a / $ROUNDS" | bc -l)" \
			"$(echo "$s / $ROUNDS" | bc -l)" "$(echo "$a / $s" | bc -l)"
	done
done

# The same comparison in CPU time of one backend (not wall time: on a loaded shared
# machine throughput swings with the neighbours, a backend's own CPU time much less).
echo
echo "CPU time of one backend, $((CPU_CALLS * 6)) calls per side (clock ticks; ratio = json / partiql):"
psql -X -q "${CONN[@]}" -f "$(dirname "$0")/partiql_cpu.sql" -c "SELECT * FROM pq_micro_cpu($CPU_CALLS, 6)"
