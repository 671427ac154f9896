#!/bin/bash
# Point-in-time recovery cost and restore speed (docs/backups.md), against a
# running server with dynindex in shared_preload_libraries:
#   1. PutItem overwriting existing items and UpdateItem, on a table with PITR
#      against the same table without, 1 and 8 clients, alternating the two in
#      ROUNDS short runs so both see the same background load (target: >= 0.8);
#   2. RestoreTableToPointInTime of an ITEMS-item table (default 1,000,000) to a
#      time one hour ago, against a plain bulk INSERT ... SELECT of the same rows
#      into a table like the storage (no import exists yet; target >= 0.3 of its
#      speed).  The hour is simulated: the items are loaded with PITR on, then the
#      history and the window are moved two hours back (superuser), then 1% of the
#      items are updated;
#   3. a key with VERSIONS versions (default 100,000, real writes): the probe for
#      its version at T against the probe of a key with one version in the same
#      history, and the restore of a table holding it against the same table without
#      its history.
# Usage: bench/pitr.sh [-h host] [-p port] [dbname]   (options common to psql and pgbench)
# Environment: SECONDS_PER_RUN (default 5), ROUNDS (default 3), ITEMS, VERSIONS, PARTS (default
#   "1 2 3"), COMMIT_MODES (synchronous_commit values for part 1, default "on off": durable
#   commits are bound by the disk's flushes, "off" shows the CPU cost).  The VERSIONS writes of
#   part 3 commit with synchronous_commit = off (they only make the history).
set -euo pipefail
T=${SECONDS_PER_RUN:-5}
R=${ROUNDS:-3}
N=${ITEMS:-1000000}
V=${VERSIONS:-100000}
PARTS=${PARTS:-1 2 3}
MODES=${COMMIT_MODES:-on off}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1 "$@")
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

api() { "${PSQL[@]}" -c "SELECT dynindex.api('$1', '$2') IS NOT NULL" >/dev/null; }
drop() { "${PSQL[@]}" -c "SELECT dynindex.api('DeleteTable', '{\"TableName\":\"$1\"}')" >/dev/null 2>&1 || true; }
create() {   # create <table> <pitr: on|off>
	drop "$1"
	api CreateTable "{\"TableName\":\"$1\",\"BillingMode\":\"PAY_PER_REQUEST\",
	  \"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"}],
	  \"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}]}"
	[ "$2" = on ] && api UpdateContinuousBackups "{\"TableName\":\"$1\",\"PointInTimeRecoverySpecification\":{\"PointInTimeRecoveryEnabled\":true}}"
	return 0
}
load() {   # load <table> <first> <count>: items P<i % 1000>/S<i>, ~200 bytes, 25 per BatchWriteItem
	"${PSQL[@]}" -c "SELECT count(dynindex.api('BatchWriteItem', jsonb_build_object('RequestItems', jsonb_build_object('$1',
	  (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object(
	     'pk', jsonb_build_object('S', 'P' || ((b * 25 + i) % 1000)), 'sk', jsonb_build_object('S', 'S' || (b * 25 + i)),
	     'v', jsonb_build_object('N', '0'), 'body', jsonb_build_object('S', repeat('b', 150))))))
	   FROM generate_series(0, 24) i)))))
	  FROM generate_series($2 / 25, ($2 + $3) / 25 - 1) b" >/dev/null
}
ms() { "${PSQL[@]}" -c "\\timing on" -c "$1" | awk '/^Time:/ { print $2 }' | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
pgb() {   # pgb <script> <clients> [synchronous_commit] -> tps
	local f=$1 c=$2 m=${3:-on}; shift 3; PGOPTIONS="-c synchronous_commit=$m" pgbench -n -T "$T" -c "$c" -j "$c" -f "$f" "$@" 2>/dev/null | awk '/^tps/ { print int($3); exit }'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# ---- 1. overwrites with and without PITR ----
if part 1; then
create BenchPitrOff off
create BenchPitrOn on
load BenchPitrOff 0 10000
load BenchPitrOn 0 10000
for t in Off On; do
	cat > "$DIR/put$t.sql" <<SQL
\\set i random(0, 9999)
\\set r random(1, 1000000)
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'BenchPitr$t', 'Item', jsonb_build_object(
  'pk', jsonb_build_object('S', 'P' || (:i % 1000)), 'sk', jsonb_build_object('S', 'S' || :i),
  'v', jsonb_build_object('N', :r::text), 'body', jsonb_build_object('S', repeat('b', 150)))));
SQL
	cat > "$DIR/upd$t.sql" <<SQL
\\set i random(0, 9999)
\\set r random(1, 1000000)
SELECT dynindex.api('UpdateItem', jsonb_build_object('TableName', 'BenchPitr$t', 'Key', jsonb_build_object(
  'pk', jsonb_build_object('S', 'P' || (:i % 1000)), 'sk', jsonb_build_object('S', 'S' || :i)),
  'UpdateExpression', 'SET v = :v', 'ExpressionAttributeValues', jsonb_build_object(':v', jsonb_build_object('N', :r::text))));
SQL
done
declare -A sum
for m in $MODES; do for op in put upd; do for c in 1 8; do
	sum[$m$op$c Off]=0; sum[$m$op$c On]=0
	for ((i = 1; i <= R; i++)); do
		a=$(pgb "$DIR/${op}Off.sql" "$c" "$m" "$@"); b=$(pgb "$DIR/${op}On.sql" "$c" "$m" "$@")
		echo "synchronous_commit=$m, $op, $c client(s), round $i: PITR off $a tps, on $b tps" >&2
		sum[$m$op$c Off]=$((${sum[$m$op$c Off]} + a)); sum[$m$op$c On]=$((${sum[$m$op$c On]} + b))
	done
done; done; done
hist=$("${PSQL[@]}" -c "SELECT count(*) FROM dynindex_history.h$("${PSQL[@]}" -c "SELECT num FROM dynindex.tables WHERE table_name = 'BenchPitrOn'")")
drop BenchPitrOff; drop BenchPitrOn
fi

# ---- 2. restore of ITEMS items to an hour ago vs a bulk INSERT ... SELECT ----
if part 2; then
create BenchPitrBig on
t0=$(date +%s)
load BenchPitrBig 0 "$N"
echo "loaded $N items with PITR on in $(( $(date +%s) - t0 )) s" >&2
num=$("${PSQL[@]}" -c "SELECT num FROM dynindex.tables WHERE table_name = 'BenchPitrBig'")
"${PSQL[@]}" -c "UPDATE dynindex_history.h$num SET valid_to = valid_to - interval '2 hours'" \
	-c "UPDATE dynindex.pitr SET enabled_at = enabled_at - interval '2 hours' WHERE table_num = $num" \
	-c "VACUUM ANALYZE dynindex_history.h$num" -c "VACUUM ANALYZE dynindex_data.t$num"
# 1% of the items written in the last hour (after the restore time)
"${PSQL[@]}" -c "SELECT count(dynindex.api('UpdateItem', jsonb_build_object('TableName', 'BenchPitrBig', 'Key', jsonb_build_object(
  'pk', jsonb_build_object('S', 'P' || (i % 1000)), 'sk', jsonb_build_object('S', 'S' || i)),
  'UpdateExpression', 'SET v = :v', 'ExpressionAttributeValues', jsonb_build_object(':v', jsonb_build_object('N', '1')))))
  FROM generate_series(0, $N - 1, 100) i" >/dev/null
rows=$("${PSQL[@]}" -c "SELECT count(*) FROM dynindex_history.h$num")
declare -a rest base
for ((i = 1; i <= 2; i++)); do
	drop BenchPitrBigR
	"${PSQL[@]}" -c "DROP TABLE IF EXISTS bench_pitr_copy" -c "CREATE TABLE bench_pitr_copy (LIKE dynindex_data.t$num INCLUDING ALL)"
	base+=("$(ms "INSERT INTO bench_pitr_copy SELECT * FROM dynindex_data.t$num")")
	rest+=("$(ms "SELECT dynindex.restore_table_to_point_in_time('BenchPitrBig', 'BenchPitrBigR', now() - interval '1 hour') IS NOT NULL")")
	echo "round $i: bulk INSERT ... SELECT ${base[-1]} ms, restore to an hour ago ${rest[-1]} ms" >&2
done
got=$("${PSQL[@]}" -c "SELECT count(*) FROM dynindex_data.t$("${PSQL[@]}" -c "SELECT num FROM dynindex.tables WHERE table_name = 'BenchPitrBigR'")")
changed=$("${PSQL[@]}" -c "SELECT count(*) FROM dynindex_data.t$("${PSQL[@]}" -c "SELECT num FROM dynindex.tables WHERE table_name = 'BenchPitrBigR'") WHERE item->'v'->>'N' <> '0'")
"${PSQL[@]}" -c "DROP TABLE IF EXISTS bench_pitr_copy"
drop BenchPitrBigR; drop BenchPitrBig
fi

# ---- 3. a key with VERSIONS versions ----
if part 3; then
create BenchPitrHot on
create BenchPitrCold on
load BenchPitrHot 0 1000
load BenchPitrCold 0 1000
cat > "$DIR/hot.sql" <<SQL
\\set r random(1, 1000000000)
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'BenchPitrHot', 'Item', jsonb_build_object(
  'pk', jsonb_build_object('S', 'P0'), 'sk', jsonb_build_object('S', 'S0'), 'v', jsonb_build_object('N', :r::text))));
SQL
t0=$(date +%s)
PGOPTIONS="-c synchronous_commit=off" pgbench -n -c 1 -t "$V" -f "$DIR/hot.sql" "$@" >/dev/null 2>&1
echo "$V versions of one key written in $(( $(date +%s) - t0 )) s" >&2
hot=$("${PSQL[@]}" -c "SELECT num FROM dynindex.tables WHERE table_name = 'BenchPitrHot'")
cold=$("${PSQL[@]}" -c "SELECT num FROM dynindex.tables WHERE table_name = 'BenchPitrCold'")
"${PSQL[@]}" -c "VACUUM ANALYZE dynindex_history.h$hot" -c "VACUUM ANALYZE dynindex_history.h$cold"
hv=$("${PSQL[@]}" -c "SELECT count(*) FROM dynindex_history.h$hot WHERE pk = dynindex.encode_key('{\"S\": \"P0\"}')")
# the middle of the hot key's history
mid=$("${PSQL[@]}" -c "SELECT valid_to FROM dynindex_history.h$hot WHERE pk = dynindex.encode_key('{\"S\": \"P0\"}') ORDER BY valid_to OFFSET $V / 2 LIMIT 1")
# the probe of the hot key (P0/S0) and of a key with one version (P1/S1) in the same history
# relation (so that both descend the same btree), at a time up to a second before the middle
# (a constant to the planner: pgbench substitutes :us)
for k in hot cold; do
	if [ $k = hot ]; then p=P0; s=S0; else p=P1; s=S1; fi
	cat > "$DIR/probe$k.sql" <<SQL
\\set us random(0, 1000000)
SELECT count(*) FROM (SELECT 1 FROM dynindex_history.h$hot WHERE pk = dynindex.encode_key('{"S": "$p"}')
  AND sk = dynindex.encode_key('{"S": "$s"}') AND valid_to > '$mid'::timestamptz - interval '1 microsecond' * :us
  ORDER BY valid_to LIMIT 1) x;
SQL
done
declare -A probe restore
probe[hot]=0; probe[cold]=0
for ((i = 1; i <= R; i++)); do
	a=$(pgb "$DIR/probehot.sql" 1 on "$@"); b=$(pgb "$DIR/probecold.sql" 1 on "$@")
	echo "probe round $i: key with $hv versions $a/s, key with 1 version $b/s" >&2
	probe[hot]=$((${probe[hot]} + a)); probe[cold]=$((${probe[cold]} + b))
done
restore[hot]=$(ms "SELECT dynindex.restore_table_to_point_in_time('BenchPitrHot', 'BenchPitrHotR', '$mid') IS NOT NULL")
restore[cold]=$(ms "SELECT dynindex.restore_table_to_point_in_time('BenchPitrCold', 'BenchPitrColdR', '$mid') IS NOT NULL")
hot_item=$("${PSQL[@]}" -c "SELECT dynindex.api('GetItem', '{\"TableName\": \"BenchPitrHotR\", \"Key\": {\"pk\": {\"S\": \"P0\"}, \"sk\": {\"S\": \"S0\"}}}') -> 'Item' -> 'v' ->> 'N'")
want=$("${PSQL[@]}" -c "SELECT item->'v'->>'N' FROM dynindex_history.h$hot WHERE pk = dynindex.encode_key('{\"S\": \"P0\"}') AND valid_to > '$mid' ORDER BY valid_to LIMIT 1")
for t in BenchPitrHotR BenchPitrColdR BenchPitrHot BenchPitrCold; do drop $t; done
fi

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
if part 1; then
for m in $MODES; do for op in put upd; do for c in 1 8; do
	echo "synchronous_commit=$m $op $c client(s): PITR off $((${sum[$m$op$c Off]} / R)) tps, on $((${sum[$m$op$c On]} / R)) tps, on/off $(ratio "${sum[$m$op$c On]}" "${sum[$m$op$c Off]}")"
done; done; done
echo "history rows written by those runs: $hist"
fi
if part 2; then echo "restore of $N items to an hour ago ($rows history rows, $changed items changed since): ${rest[*]} ms; bulk INSERT ... SELECT of the same rows: ${base[*]} ms; restore speed / insert speed $(ratio "${base[-1]}" "${rest[-1]}") (restored $got items)"; fi
if part 3; then echo "key with $hv versions: probe $((${probe[hot]} / R))/s vs key with 1 version $((${probe[cold]} / R))/s (ratio $(ratio "${probe[hot]}" "${probe[cold]}")); restore of 1,001 keys to the middle of its history ${restore[hot]} ms vs without the history ${restore[cold]} ms; restored version correct: $([ "$hot_item" = "$want" ] && echo yes || echo "NO ($hot_item vs $want)")"; fi
