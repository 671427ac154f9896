#!/bin/bash
# bench/storage_alt.sh — an LSI as its own relation (what dynindex does) against the
# closest alternative to a custom index access method: an expression btree on the
# table's own storage relation that reproduces the LSI's key order.  One server, the
# same items on every side, in one run:
#
#   L_all   dynindex table with LSI lsi1 on a1, projection ALL       (dynindex.api)
#   L_keys  dynindex table with LSI lsi1 on a1, projection KEYS_ONLY (dynindex.api)
#   X_expr  dynindex table without an LSI, plus, by hand on its storage relation,
#             CREATE INDEX ... (pk, dynindex.encode_key(item->'a1'), sk) WHERE item ? 'a1'
#           (the LSI's ipk is the table's pk encoding, its isk is encode_key of the
#           attribute: the same bytes, so the same order; sparse through the predicate)
#
# It reports
#   - write cost: PutItem that moves the LSI entry (a1 new on every put) and UpdateItem
#     of a non-key attribute (body), pgbench, the sides alternating in short rounds;
#   - space: heap and index sizes of every relation after the load, and again after the
#     write runs (dead tuples not yet vacuumed included), plus the HOT share of updates;
#   - Query speed: 25 items of one partition in LSI order, with each projection, in plain
#     SQL on both layouts (the LSI relation vs the expression index on the base), and
#     through dynindex.api on the real LSIs for reference; buffers per Query (EXPLAIN).
#
# Starts its own server (initdb in a temporary directory, a free port, the dynindex
# installed in that PostgreSQL) and stops it at the end.  Run as a user that may run
# initdb (not root: `runuser -u postgres -- bench/storage_alt.sh`).
# Environment: PG_CONFIG (default: pg_config on PATH) or BINDIR; PORT (default: the
# first free port from 56300); DURATION (seconds per pgbench run, default 4); ROUNDS
# (alternating rounds, median reported, default 3); CLIENTS (default 2); PARTS x PER
# (items per table, default 200 x 100); SYNC (synchronous_commit, default off: the index
# work, not the commit's WAL flush, is what differs between the layouts); KEEP=1 keeps
# the data directory.
set -euo pipefail
DURATION=${DURATION:-4}
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-2}
PARTS=${PARTS:-200}
PER=${PER:-100}
SYNC=${SYNC:-off}
if [ -z "${BINDIR:-}" ]; then BINDIR=$("${PG_CONFIG:-pg_config}" --bindir); fi
if [ "$(id -u)" = 0 ]; then echo "run as a non-root user (runuser -u postgres -- $0)" >&2; exit 1; fi
W=$(mktemp -d /tmp/storage_alt.XXXXXX)
stop_all() {
	"$BINDIR/pg_ctl" -D "$W/data" -m fast -w stop >/dev/null 2>&1 || true
	[ "${KEEP:-0}" = 1 ] || rm -rf "$W"
}
trap stop_all EXIT

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT=${PORT:-}
if [ -z "$PORT" ]; then
	for PORT in $(seq 56300 56399); do port_free "$PORT" && break; done
fi
"$BINDIR/initdb" -D "$W/data" -U postgres -A trust -E UTF8 --locale=C >/dev/null
{
	echo "shared_preload_libraries = 'dynindex'"
	echo "listen_addresses = ''"; echo "port = $PORT"; echo "unix_socket_directories = '$W'"
	echo "shared_buffers = 256MB"; echo "synchronous_commit = $SYNC"
	echo "max_wal_size = 2GB"; echo "checkpoint_timeout = 30min"
} >>"$W/data/postgresql.conf"
"$BINDIR/pg_ctl" -D "$W/data" -l "$W/server.log" -w start >/dev/null
CONN=(-h "$W" -p "$PORT" -U postgres -d postgres)
psql() { "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 "${CONN[@]}" "$@"; }
q() { psql -At -c "$1"; }

# ------------------------------------------------------------------ the three tables
lsi_table() {  # name projection-type
	echo "{\"TableName\": \"$1\", \"BillingMode\": \"PAY_PER_REQUEST\",
	  \"AttributeDefinitions\": [{\"AttributeName\": \"pk\", \"AttributeType\": \"S\"}, {\"AttributeName\": \"sk\", \"AttributeType\": \"S\"},
	                           {\"AttributeName\": \"a1\", \"AttributeType\": \"S\"}],
	  \"KeySchema\": [{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}, {\"AttributeName\": \"sk\", \"KeyType\": \"RANGE\"}],
	  \"LocalSecondaryIndexes\": [{\"IndexName\": \"lsi1\",
	      \"KeySchema\": [{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}, {\"AttributeName\": \"a1\", \"KeyType\": \"RANGE\"}],
	      \"Projection\": {\"ProjectionType\": \"$2\"}}]}"
}
psql -o /dev/null <<SQL
CREATE EXTENSION dynindex;
SELECT dynindex.api('CreateTable', '$(lsi_table L_all ALL)');
SELECT dynindex.api('CreateTable', '$(lsi_table L_keys KEYS_ONLY)');
SELECT dynindex.api('CreateTable', '{"TableName": "X_expr", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]}');
-- the same items everywhere: ~200 bytes, a1 a function of the key, every item in the LSI
CREATE FUNCTION bench_item(p int, s int, r int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS \$\$
  SELECT jsonb_build_object('pk', jsonb_build_object('S', 'P' || p), 'sk', jsonb_build_object('S', 'S' || lpad(s::text, 4, '0')),
    'a1', jsonb_build_object('S', 'x' || lpad(r::text, 7, '0')), 'n', jsonb_build_object('N', (p * s)::text),
    'body', jsonb_build_object('S', repeat('b', 120)))
\$\$;
-- requests built by functions: pgbench -M prepared would take ':pv' inside a literal for a variable
CREATE FUNCTION upd_req(t text, p int, s int, r int) RETURNS jsonb LANGUAGE sql IMMUTABLE AS \$\$
  SELECT jsonb_build_object('TableName', t,
    'Key', jsonb_build_object('pk', jsonb_build_object('S', 'P' || p), 'sk', jsonb_build_object('S', 'S' || lpad(s::text, 4, '0'))),
    'UpdateExpression', 'SET body = :b', 'ExpressionAttributeValues', jsonb_build_object(':b', jsonb_build_object('S', lpad(r::text, 120, 'c'))))
\$\$;
CREATE FUNCTION query_req(t text, p int, extra jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS \$\$
  SELECT jsonb_build_object('TableName', t, 'IndexName', 'lsi1', 'Limit', 25, 'ConsistentRead', true,
    'KeyConditionExpression', 'pk = :pv', 'ExpressionAttributeValues', jsonb_build_object(':pv', jsonb_build_object('S', 'P' || p))) || extra
\$\$;
SQL
ST_ALL=$(q "SELECT storage FROM dynindex.tables WHERE table_name = 'L_all'")
ST_KEYS=$(q "SELECT storage FROM dynindex.tables WHERE table_name = 'L_keys'")
ST_X=$(q "SELECT storage FROM dynindex.tables WHERE table_name = 'X_expr'")
LI_ALL=$(q "SELECT storage FROM dynindex.indexes WHERE table_name = 'L_all'")
LI_KEYS=$(q "SELECT storage FROM dynindex.indexes WHERE table_name = 'L_keys'")
# created before the load, as it would be at CreateTable: both layouts' btrees grow by inserts
psql -c "CREATE INDEX x_lsi1 ON $ST_X (pk, dynindex.encode_key(item -> 'a1'), sk) WHERE item ? 'a1'"
for t in L_all L_keys X_expr; do
	psql -o /dev/null -c "SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', '$t',
	  'Item', bench_item(p, s, (p * 7919 + s * 104729) % 1000000)))) FROM generate_series(1, $PARTS) p, generate_series(1, $PER) s"
done
psql -c "VACUUM ANALYZE $ST_ALL, $ST_KEYS, $ST_X, $LI_ALL, $LI_KEYS"
# the two layouts hold the same LSI: same entries in the same order
diff <(q "SELECT pk, isk, sk FROM $LI_ALL ORDER BY ipk, isk, pk, sk") \
	<(q "SELECT pk, dynindex.encode_key(item -> 'a1'), sk FROM $ST_X WHERE item ? 'a1' ORDER BY pk, 2, sk") >/dev/null ||
	{ echo "the expression index's order differs from the LSI's" >&2; exit 1; }

space() {  # label
	echo
	echo "Space, $1 (kB; heap includes TOAST):"
	echo "| layout | base heap | base pkey | base segment index | LSI heap | LSI pkey | LSI expression index | total |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	local st li name
	for name in L_all L_keys X_expr; do
		st=$(q "SELECT storage FROM dynindex.tables WHERE table_name = '$name'")
		li=$(q "SELECT coalesce((SELECT storage FROM dynindex.indexes WHERE table_name = '$name'), '')")
		q "WITH r AS (
		     SELECT (pg_table_size('$st') / 1024) bh,
		            (SELECT sum(pg_relation_size(indexrelid))::bigint / 1024 FROM pg_index WHERE indrelid = '$st'::regclass AND indisprimary) bp,
		            (SELECT sum(pg_relation_size(indexrelid))::bigint / 1024 FROM pg_index WHERE indrelid = '$st'::regclass AND indexprs IS NOT NULL
		                AND indexrelid::regclass::text NOT LIKE '%x_lsi1') bs,
		            CASE WHEN '$li' = '' THEN 0 ELSE pg_table_size(nullif('$li', '')::regclass) / 1024 END lh,
		            CASE WHEN '$li' = '' THEN 0 ELSE pg_indexes_size(nullif('$li', '')::regclass) / 1024 END lp,
		            coalesce((SELECT pg_relation_size(indexrelid) / 1024 FROM pg_index WHERE indrelid = '$st'::regclass
		                AND indexrelid::regclass::text LIKE '%x_lsi1'), 0) lx)
		   SELECT format('| %s | %s | %s | %s | %s | %s | %s | %s |', '$name', bh, bp, bs, lh, lp, lx, bh + bp + bs + lh + lp + lx) FROM r"
	done
}
space "after loading $((PARTS * PER)) items per table, VACUUM ANALYZE"

# ------------------------------------------------------------------ workloads
D=$W/scripts
mkdir -p "$D"
for t in L_all L_keys X_expr; do
	# PutItem of an existing key with a new a1: the LSI entry moves
	cat >"$D/put_$t.sql" <<SQL
\\set p random(1, $PARTS)
\\set s random(1, $PER)
\\set r random(1, 999999)
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', '$t', 'Item', bench_item(:p, :s, :r)));
SQL
	# UpdateItem of a non-key attribute: the LSI key stays
	cat >"$D/upd_$t.sql" <<SQL
\\set p random(1, $PARTS)
\\set s random(1, $PER)
\\set r random(1, 999999)
SELECT dynindex.api('UpdateItem', upd_req('$t', :p, :s, :r));
SQL
done
# X_expr through the full write path (read under lock, as a table with LSIs must for the
# item-collection limit): ReturnConsumedCapacity forces it
sed 's/bench_item(:p, :s, :r)));$/bench_item(:p, :s, :r), '"'"'ReturnConsumedCapacity'"'"', '"'"'TOTAL'"'"'));/' "$D/put_X_expr.sql" >"$D/putfull_X_expr.sql"

# Query, 25 items of one partition in a1 order; plain SQL on both layouts
PKQ="dynindex.encode_key(jsonb_build_object('S', 'P' || :p::int))"
qsql() {  # name select-list relation where order
	printf '\\set p random(1, %s)\nSELECT %s FROM %s WHERE %s ORDER BY %s LIMIT 25;\n' "$PARTS" "$2" "$3" "$4" "$5" >"$D/$1.sql"
}
qsql q_all_lsi "item" "$LI_ALL" "ipk = $PKQ" "isk, pk, sk"
qsql q_all_x "item" "$ST_X" "pk = $PKQ AND item ? 'a1'" "dynindex.encode_key(item -> 'a1'), sk"
qsql q_keys_lsi "item" "$LI_KEYS" "ipk = $PKQ" "isk, pk, sk"
qsql q_keys_x "jsonb_build_object('pk', item -> 'pk', 'sk', item -> 'sk', 'a1', item -> 'a1')" "$ST_X" \
	"pk = $PKQ AND item ? 'a1'" "dynindex.encode_key(item -> 'a1'), sk"
# KEYS_ONLY LSI asked for every attribute: entries, then each base item by its key
qsql q_fetch_lsi "b.item" "$LI_KEYS i JOIN $ST_KEYS b USING (pk, sk)" "i.ipk = $PKQ" "i.isk, i.pk, i.sk"
# and what dynindex serves: Query through dynindex.api on the real LSIs
qapi() {  # name table extra
	cat >"$D/$1.sql" <<SQL
\\set p random(1, $PARTS)
SELECT dynindex.api('Query', query_req('$2', :p, '{$3}'));
SQL
}
qapi qapi_all L_all ""
qapi qapi_keys L_keys ""
qapi qapi_fetch L_keys '"Select": "ALL_ATTRIBUTES"'

pgb() {  # script -> tps
	"$BINDIR/pgbench" -n -M prepared -T "$DURATION" -c "$CLIENTS" -j "$CLIENTS" -f "$D/$1.sql" "${CONN[@]}" 2>/dev/null |
		awk '/^tps/ { print int($3); exit }'
}
declare -A runs
GROUPS_=("put_L_all put_L_keys put_X_expr putfull_X_expr" "upd_L_all upd_L_keys upd_X_expr"
	"q_all_lsi q_all_x q_keys_lsi q_keys_x q_fetch_lsi qapi_all qapi_keys qapi_fetch")
for g in "${GROUPS_[@]}"; do
	for ((r = 1; r <= ROUNDS; r++)); do
		for w in $g; do runs[$w]+="$(pgb "$w") "; done
	done
done
med() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
us() { awk -v t="$1" -v c="$CLIENTS" 'BEGIN { if (t > 0) printf "%.0f", c * 1e6 / t; else print "n/a" }'; }
row() {  # label workload baseline
	local m b
	m=$(med "${runs[$2]}"); b=$(med "${runs[$3]}")
	echo "| $1 | $m | $(us "$m") | $(ratio "$m" "$b") | ${runs[$2]% } |"
}
echo
echo "Throughput: pgbench -M prepared, $CLIENTS clients, median of $ROUNDS alternating runs of $DURATION s, synchronous_commit = $SYNC"
echo "(us/stmt = clients / tps; ratio against the row's baseline, named in brackets):"
echo "| workload | tps | us/stmt | ratio | runs |"
echo "|---|---:|---:|---:|---|"
row "PutItem (new a1), LSI ALL [baseline]" put_L_all put_L_all
row "PutItem (new a1), LSI KEYS_ONLY" put_L_keys put_L_all
row "PutItem (new a1), expression index (one upsert)" put_X_expr put_L_all
row "PutItem (new a1), expression index, full write path" putfull_X_expr put_L_all
row "UpdateItem SET body, LSI ALL [baseline]" upd_L_all upd_L_all
row "UpdateItem SET body, LSI KEYS_ONLY" upd_L_keys upd_L_all
row "UpdateItem SET body, expression index" upd_X_expr upd_L_all
row "SQL Query 25 items, whole item: LSI ALL relation [baseline]" q_all_lsi q_all_lsi
row "SQL Query 25 items, whole item: expression index on the base" q_all_x q_all_lsi
row "SQL Query 25 items, keys: LSI KEYS_ONLY relation [baseline]" q_keys_lsi q_keys_lsi
row "SQL Query 25 items, keys: expression index, projected from the base item" q_keys_x q_keys_lsi
row "SQL Query 25 items, whole item via KEYS_ONLY LSI + base fetch (vs LSI ALL)" q_fetch_lsi q_all_lsi
row "dynindex.api Query, LSI ALL (vs SQL on LSI ALL)" qapi_all q_all_lsi
row "dynindex.api Query, LSI KEYS_ONLY (vs SQL on LSI KEYS_ONLY)" qapi_keys q_keys_lsi
row "dynindex.api Query ALL_ATTRIBUTES on KEYS_ONLY LSI (vs API on LSI ALL)" qapi_fetch qapi_all

echo
echo "Updates during the write runs (a PutItem of an existing key is an UPDATE of its row):"
q "SELECT format('%s (%s): %s updates, %s HOT (%s%%)', relname,
     CASE relname WHEN '${ST_ALL#*.}' THEN 'L_all base' WHEN '${ST_KEYS#*.}' THEN 'L_keys base' WHEN '${ST_X#*.}' THEN 'X_expr base'
                  WHEN '${LI_ALL#*.}' THEN 'L_all LSI' WHEN '${LI_KEYS#*.}' THEN 'L_keys LSI' END,
     n_tup_upd, n_tup_hot_upd, round(100.0 * n_tup_hot_upd / nullif(n_tup_upd, 0)))
   FROM pg_stat_user_tables WHERE schemaname = 'dynindex_data' ORDER BY relname"

echo
echo "Buffers per Query (EXPLAIN (ANALYZE, BUFFERS), partition P7, after the write runs):"
for w in q_all_lsi q_all_x q_keys_lsi q_keys_x q_fetch_lsi; do
	sqlq=$(sed -n 's/:p/7/g; /^SELECT/p' "$D/$w.sql")
	b=$(q "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) ${sqlq%;}" | awk '/Buffers:/ && !f { sub(/^ */, ""); print; f = 1 }')
	plan=$(q "EXPLAIN (COSTS OFF) ${sqlq%;}" | awk '/Scan/ && / on / { sub(/^[ ->]*/, ""); sub(/ \(.*/, ""); printf "%s%s", s, $0; s = "; " }')
	echo "$w: $b ($plan)"
done
space "after the write runs (VACUUM would make dead space reusable, not smaller)"
