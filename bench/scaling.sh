#!/bin/bash
# bench/scaling.sh — the cost of the distributed path: GetItem, PutItem and a
# 10-item Query through dynindex.api on one server against the same on a Citus
# cluster (a coordinator and two workers, on this machine's loopback), in one
# run, the two sides alternating in short rounds; and the CPU each operation
# costs on each node (from the postmasters' children CPU times), from which
# docs/scaling.md argues what a larger cluster would give.
#
# Starts its own four servers (one single server, the coordinator, two workers)
# in a temporary directory and stops them at the end.  Run as a user that may
# run initdb (not root), with the PostgreSQL (dynindex and Citus installed) of
# pg_config first on PATH.
# Environment: DURATION (seconds per side and workload, default 20), ROUNDS
# (default 4), CLIENTS (default 4), KEYS (partition keys, 10 items each,
# default 2000), PORT_BASE (first of 4 ports, default 55910).
set -euo pipefail
DURATION=${DURATION:-20}
ROUNDS=${ROUNDS:-4}
CLIENTS=${CLIENTS:-4}
KEYS=${KEYS:-2000}
PORT_BASE=${PORT_BASE:-55910}
BIN=$(pg_config --bindir)
W=$(mktemp -d)
names=(single coord w1 w2)
port() { echo $((PORT_BASE + $1)); }
stop_all() {
	for i in 0 1 2 3; do "$BIN/pg_ctl" -D "$W/n$i" -m immediate -w stop >/dev/null 2>&1 || true; done
	rm -rf "$W"
}
trap stop_all EXIT
for i in 0 1 2 3; do
	"$BIN/initdb" -D "$W/n$i" -U postgres -A trust -E UTF8 --locale=C >/dev/null
	{
		echo "shared_preload_libraries = '$([ "$i" = 0 ] && echo dynindex || echo citus,dynindex)'"
		echo "listen_addresses = '127.0.0.1'"; echo "port = $(port $i)"
		echo "unix_socket_directories = '$W'"
		echo "max_prepared_transactions = 50"; echo "citus.shard_count = 8"
		echo "shared_buffers = 128MB"
	} >>"$W/n$i/postgresql.conf"
	"$BIN/pg_ctl" -D "$W/n$i" -l "$W/n$i.log" -w start >/dev/null
done
q() { local i=$1; shift; "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(port "$i")" -U postgres -d postgres "$@"; }
for i in 1 2 3; do q $i -c "CREATE EXTENSION citus"; done
q 1 -c "SELECT citus_set_coordinator_host('127.0.0.1', $(port 1))" \
	-c "SELECT citus_add_node('127.0.0.1', $(port 2))" -c "SELECT citus_add_node('127.0.0.1', $(port 3))" >/dev/null
for i in 0 1; do
	q $i -o /dev/null <<SQL
CREATE EXTENSION dynindex;
SET dynindex.distributed = $([ "$i" = 1 ] && echo on || echo off);
SELECT dynindex.api('CreateTable', '{"TableName": "bench", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]}');
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'bench', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'user#' || i), 'sk', jsonb_build_object('S', 'order#' || j),
                     'total', jsonb_build_object('N', (i * j % 1000)::text), 'status', '{"S": "open"}'::jsonb))))
  FROM generate_series(1, $KEYS) i, generate_series(1, 10) j;
SQL
done
echo "distributed relations on the coordinator: $(q 1 -At -c "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::text LIKE 'dynindex_data.%'")"

cat >"$W/get.sql" <<SQL
\\set k random(1, $KEYS)
\\set j random(1, 10)
SELECT dynindex.api('GetItem', jsonb_build_object('TableName', 'bench',
  'Key', jsonb_build_object('pk', jsonb_build_object('S', 'user#' || :k), 'sk', jsonb_build_object('S', 'order#' || :j))));
SQL
cat >"$W/put.sql" <<SQL
\\set k random(1, $KEYS)
\\set j random(1, 10)
\\set t random(1, 1000)
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'bench', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'user#' || :k), 'sk', jsonb_build_object('S', 'order#' || :j),
                     'total', jsonb_build_object('N', :t::text), 'status', '{"S": "open"}'::jsonb)));
SQL
cat >"$W/query.sql" <<SQL
\\set k random(1, $KEYS)
SELECT dynindex.api('Query', jsonb_build_object('TableName', 'bench', 'KeyConditionExpression', 'pk = ' || chr(58) || 'v',
  'ExpressionAttributeValues', jsonb_build_object(chr(58) || 'v', jsonb_build_object('S', 'user#' || :k))));
SQL

# CPU seconds used so far by a node's exited processes (its postmaster's reaped children)
cpu() {
	local pm
	pm=$(head -1 "$W/n$1/postmaster.pid")
	awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15 + $16 + $17) / hz }' "/proc/$pm/stat"
}
# one pgbench run on node $2 (prints "tps transactions"; a placeholder is
# written chr(58) || 'v': pgbench would take ":v" for one of its variables)
run() {
	"$BIN/pgbench" -n -M prepared -T "$3" -c "$CLIENTS" -j "$CLIENTS" -f "$W/$1.sql" -h 127.0.0.1 -p "$(port "$2")" -U postgres postgres 2>&1 |
		awk '/^tps = / { tps = $3 } /^number of transactions actually processed:/ { split($0, a, ": "); n = a[2] } END { print tps, n }'
}

printf '%-7s %11s %11s %7s   %s\n' op single_tps citus_tps ratio "CPU ms per op: single | coordinator, workers"
for op in get put query; do
	st=0 ct=0 sn=0 cn=0
	c0s=$(cpu 0) c0c=$(cpu 1) c0w=$(echo "$(cpu 2) + $(cpu 3)" | bc -l)
	for _ in $(seq "$ROUNDS"); do
		read -r t n < <(run "$op" 0 $((DURATION / ROUNDS))); st=$(echo "$st + $t" | bc -l); sn=$((sn + n))
		read -r t n < <(run "$op" 1 $((DURATION / ROUNDS))); ct=$(echo "$ct + $t" | bc -l); cn=$((cn + n))
	done
	sleep 2   # let the backends (and Citus's connections to the workers) exit and be reaped
	ds=$(echo "($(cpu 0) - $c0s) * 1000 / $sn" | bc -l)
	dc=$(echo "($(cpu 1) - $c0c) * 1000 / $cn" | bc -l)
	dw=$(echo "($(cpu 2) + $(cpu 3) - $c0w) * 1000 / $cn" | bc -l)
	printf '%-7s %11.0f %11.0f %7.2f   %.3f | %.3f, %.3f\n' "$op" "$(echo "$st / $ROUNDS" | bc -l)" "$(echo "$ct / $ROUNDS" | bc -l)" \
		"$(echo "$ct / $st" | bc -l)" "$ds" "$dc" "$dw"
done
