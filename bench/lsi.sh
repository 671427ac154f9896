#!/bin/bash
# LSI write and read cost, with pgbench against a running server:
#   PutItem on tables with 0, 1 and 5 LSIs (projection ALL, every item indexed),
#   and Query on an LSI against the same Query on the base table.
# Usage: bench/lsi.sh [-h host] [-p port] [dbname]   (options common to psql and pgbench)
# Environment: SECONDS_PER_RUN (default 10), CLIENTS (default 2).
set -euo pipefail
T=${SECONDS_PER_RUN:-10}
C=${CLIENTS:-2}
PSQL=(psql -X -q -v ON_ERROR_STOP=1 "$@")
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

lsis() {   # JSON list of n LSIs on attributes a1..an
	local n=$1 i out=""
	for ((i = 1; i <= n; i++)); do
		out+="${out:+,}{\"IndexName\":\"lsi$i\",\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"a$i\",\"KeyType\":\"RANGE\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}"
	done
	echo "$out"
}
defs() {
	local n=$1 i out=""
	for ((i = 1; i <= n; i++)); do out+=",{\"AttributeName\":\"a$i\",\"AttributeType\":\"S\"}"; done
	echo "$out"
}
for n in 0 1 5; do
	"${PSQL[@]}" -c "SELECT dynindex.api('DeleteTable', '{\"TableName\":\"BenchLsi$n\"}')" >/dev/null 2>&1 || true
	req="{\"TableName\":\"BenchLsi$n\",\"BillingMode\":\"PAY_PER_REQUEST\",\"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"}$(defs $n)],\"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}]"
	[ "$n" -gt 0 ] && req+=",\"LocalSecondaryIndexes\":[$(lsis $n)]"
	"${PSQL[@]}" -c "SELECT dynindex.api('CreateTable', '$req}') IS NOT NULL" >/dev/null
	# PutItem: 1000 partitions x 1000 sort keys, ~200-byte items with a1..a5 always present;
	# a1..a5 are random on every put, so every put inserts or moves every LSI entry
	cat > "$DIR/put$n.sql" <<SQL
\\set p random(1, 1000)
\\set s random(1, 1000)
\\set r random(1, 1000000)
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'BenchLsi$n', 'Item', jsonb_build_object(
  'pk', jsonb_build_object('S', 'P' || :p), 'sk', jsonb_build_object('S', 'S' || :s),
  'a1', jsonb_build_object('S', 'x' || :r), 'a2', jsonb_build_object('S', 'y' || :r), 'a3', jsonb_build_object('S', 'z' || :r),
  'a4', jsonb_build_object('S', 'u' || :r), 'a5', jsonb_build_object('S', 'v' || :r),
  'body', jsonb_build_object('S', repeat('b', 120)))));
SQL
	# the same PutItem through the full write path (read under lock): ReturnConsumedCapacity
	sed 's/)))));$/))), '"'"'ReturnConsumedCapacity'"'"', '"'"'TOTAL'"'"'));/' "$DIR/put$n.sql" > "$DIR/putcap$n.sql"
done

pgb() {   # pgb <script> <connection options> -> tps
	local f=$1; shift; pgbench -n -T "$T" -c "$C" -j "$C" -f "$f" "$@" 2>/dev/null | awk '/^tps/ { print int($3); exit }'; }

declare -A tps
for n in 0 1 5; do
	tps[put$n]=$(pgb "$DIR/put$n.sql" "$@")
	tps[putcap$n]=$(pgb "$DIR/putcap$n.sql" "$@")
done

# Query: one partition of 1000 items, 25 items per page, base table vs LSI (ALL) vs KEYS_ONLY LSI fetching from the base
cat > "$DIR/qbase.sql" <<'SQL'
\set part random(1, 1000)
SELECT dynindex.api('Query', jsonb_build_object('TableName', 'BenchLsi1', 'Limit', 25, 'ConsistentRead', true,
  'KeyConditionExpression', 'pk = :pv', 'ExpressionAttributeValues', jsonb_build_object(':pv', jsonb_build_object('S', 'P' || :part))));
SQL
sed "s/'Limit'/'IndexName', 'lsi1', 'Limit'/" "$DIR/qbase.sql" > "$DIR/qlsi.sql"
tps[qbase]=$(pgb "$DIR/qbase.sql" "$@")
tps[qlsi]=$(pgb "$DIR/qlsi.sql" "$@")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo "| workload | tps | relative |"
echo "|---|---|---|"
echo "| PutItem, 0 LSIs (fast path: one upsert) | ${tps[put0]} | 1.00 |"
echo "| PutItem, 1 LSI | ${tps[put1]} | $(ratio "${tps[put1]}" "${tps[put0]}") |"
echo "| PutItem, 5 LSIs | ${tps[put5]} | $(ratio "${tps[put5]}" "${tps[put0]}") |"
echo "| PutItem + ReturnConsumedCapacity, 0 LSIs (full write path) | ${tps[putcap0]} | 1.00 |"
echo "| PutItem + ReturnConsumedCapacity, 1 LSI | ${tps[putcap1]} | $(ratio "${tps[putcap1]}" "${tps[putcap0]}") |"
echo "| PutItem + ReturnConsumedCapacity, 5 LSIs | ${tps[putcap5]} | $(ratio "${tps[putcap5]}" "${tps[putcap0]}") |"
echo "| Query base table, 25 items | ${tps[qbase]} | 1.00 |"
echo "| Query LSI (ALL), 25 items | ${tps[qlsi]} | $(ratio "${tps[qlsi]}" "${tps[qbase]}") |"
