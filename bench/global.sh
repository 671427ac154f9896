#!/bin/bash
# bench/global.sh — global tables (issue #26, docs/global-tables.md): two local
# regions, 8 writers on each, in one run.
#
#  1. Write throughput: PutItem and UpdateItem (half each, ~200-byte items,
#     10,000 keys per region, each region its own keys) by CLIENTS pgbench
#     clients on each server at once, on a table replicated between the two
#     (BenchGlob) and on the same table unreplicated (BenchPlain), alternating
#     in ROUNDS rounds so both see the same background load: the sum of both
#     servers' tps, replicated / unreplicated (target >= 0.7).
#  2. Replication lag per change, during the replicated rounds: every item
#     carries its writer's clock_timestamp() (microseconds) and its region; a
#     row trigger on the other server's storage relation records, when the
#     apply worker writes the item there, clock_timestamp() minus it.  Both
#     servers run on this machine, so it is one clock.  What it measures: from
#     the writer's statement (before its commit) to the apply of the change in
#     the other region (inside the apply's transaction, just before its commit):
#     p50 and p99 (targets < 50 ms and < 1 s) over one change in LAG_SAMPLE of
#     the rounds (those whose writer clock, in microseconds, is a multiple of
#     it: a uniform sample), so that the trigger — a PL/pgSQL function and an
#     INSERT per change timed, run by the apply worker on the cores the writers
#     use — does not weigh on the throughput it measures (at LAG_SAMPLE=1,
#     every change, it took 12% of the apply's CPU).
#     After each replicated round the script waits until neither server has a
#     change pending for the other (replication_status's
#     pending_replication_count) and reports how long that took.
#
# Starts its own two servers (us-east-1 and eu-west-1, wal_level = logical) in a
# temporary directory and stops them at the end (as the user postgres when run
# as root), with the PostgreSQL (dynindex installed) of pg_config first on PATH (e.g. the tmp_install that `DYNINDEX_KEEP_WORK=1 DYNINDEX_SUITES=layers
# make test` leaves).
# Environment: DURATION (seconds per round, default 10), ROUNDS (default 3),
# LAG_SAMPLE (time one change in this many, default 8), STREAM=1 (both tables
# with a stream, NEW_AND_OLD_IMAGES, as a replica made by UpdateTable
# ReplicaUpdates has: every write then also records its stream record, in
# both regions),
# CLIENTS (per server, default 8), PORT_BASE (first of 2 ports, default 56140),
# KEEP=1 (keep the directory: servers' logs).
set -euo pipefail
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-8}
LAG_SAMPLE=${LAG_SAMPLE:-8}
STREAM=${STREAM:-0}
PORT_BASE=${PORT_BASE:-56140}
BIN=$(pg_config --bindir)
W=$(mktemp -d)
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$W"
stop_all() {
	for n in east west; do as_pg "$BIN/pg_ctl" -D "$W/$n" -m immediate -w stop >/dev/null 2>&1 || true; done
	[ "${KEEP:-0}" = 1 ] || rm -rf "$W"
}
trap stop_all EXIT
declare -A PORT=([east]=$PORT_BASE [west]=$((PORT_BASE + 1)))
declare -A REGION=([east]=us-east-1 [west]=eu-west-1)
declare -A OTHER=([east]=west [west]=east)
q() { "$BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${PORT[$1]}" -U postgres -d postgres "${@:2}"; }
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

for n in east west; do
	as_pg "$BIN/initdb" -D "$W/$n" -U postgres -A trust -E UTF8 --locale=C >/dev/null
	as_pg tee -a "$W/$n/postgresql.conf" >/dev/null <<EOC
shared_preload_libraries = 'dynindex'
dynindex.region = '${REGION[$n]}'
listen_addresses = '127.0.0.1'
port = ${PORT[$n]}
unix_socket_directories = '$W'
shared_buffers = 128MB
wal_level = logical
max_replication_slots = 10
max_wal_senders = 10
max_worker_processes = 16
dynindex.worker_naptime = 100
EOC
	echo "host replication postgres 127.0.0.1/32 trust" | as_pg tee -a "$W/$n/pg_hba.conf" >/dev/null
	as_pg "$BIN/pg_ctl" -D "$W/$n" -l "$W/$n.log" -w start >/dev/null
	# minors of 2026-08 on load only the output plugins output_plugin_libraries names
	if [ "$(q $n -c "SELECT count(*) FROM pg_settings WHERE name = 'output_plugin_libraries'")" = 1 ]; then
		echo "output_plugin_libraries = 'pgoutput, test_decoding, dynindex'" | as_pg tee -a "$W/$n/postgresql.conf" >/dev/null
		as_pg "$BIN/pg_ctl" -D "$W/$n" -w reload >/dev/null
	fi
	q $n -o /dev/null -v stream="$STREAM" <<'SQL'
CREATE EXTENSION dynindex;
SELECT dynindex.api('CreateTable', format('{"TableName": "%s", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]%s}', t,
  CASE WHEN :'stream' = '1' THEN ', "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"}' ELSE '' END)::jsonb)
  FROM unnest(ARRAY['BenchGlob', 'BenchPlain']) t;
CREATE UNLOGGED TABLE public.bench_lag (round int, lag_ms float8);
SQL
done
for n in east west; do
	o=${OTHER[$n]}
	q $n -o /dev/null <<SQL
SELECT dynindex.set_region('${REGION[$o]}', 'host=127.0.0.1 port=${PORT[$o]} user=postgres dbname=postgres');
SELECT dynindex._replicate_table('BenchGlob', '${REGION[$o]}');
-- the lag of each change of the other region, when the apply worker writes it here
CREATE FUNCTION bench_lag_record() RETURNS trigger LANGUAGE plpgsql AS \$\$
BEGIN
  INSERT INTO public.bench_lag VALUES ((NEW.item->'r'->>'N')::int,
    (extract(epoch FROM clock_timestamp()) * 1e6 - (NEW.item->'t'->>'N')::float8) / 1000.0);
  RETURN NULL;
END \$\$;
SELECT format('CREATE TRIGGER bench_lag AFTER INSERT OR UPDATE ON %s FOR EACH ROW
  WHEN (NEW.item->''w''->>''S'' = %L AND (NEW.item->''t''->>''N'')::int8 %% $LAG_SAMPLE = 0)
  EXECUTE FUNCTION bench_lag_record()', storage, '${REGION[$o]}')
  FROM dynindex.tables WHERE table_name = 'BenchGlob' \gexec
SQL
done
for n in east west; do
	until [ "$(q $n -c "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'dynindex_%' AND active")" = 1 ]; do sleep 0.2; done
done
echo "both regions stream each other's slot" >&2

# the items: P<i % 1000>/S<i>, i < 10,000, the region's own keys; 't' the writer's clock, 'w' its region, 'r' the round
for n in east west; do
	for tbl in BenchGlob BenchPlain; do
		cat >"$W/put-$n-$tbl.sql" <<SQL
\\set i random(0, 9999)
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', '$tbl', 'Item', jsonb_build_object(
  'pk', jsonb_build_object('S', '${REGION[$n]}-P' || (:i % 1000)), 'sk', jsonb_build_object('S', 'S' || :i),
  't', jsonb_build_object('N', (extract(epoch FROM clock_timestamp()) * 1e6)::bigint::text),
  'w', jsonb_build_object('S', '${REGION[$n]}'), 'r', jsonb_build_object('N', :round::text),
  'body', jsonb_build_object('S', repeat('b', 150)))));
SQL
		cat >"$W/upd-$n-$tbl.sql" <<SQL
\\set i random(0, 9999)
SELECT dynindex.api('UpdateItem', jsonb_build_object('TableName', '$tbl', 'Key', jsonb_build_object(
  'pk', jsonb_build_object('S', '${REGION[$n]}-P' || (:i % 1000)), 'sk', jsonb_build_object('S', 'S' || :i)),
  'UpdateExpression', 'SET t = :t, w = :w, r = :r, v = if_not_exists(v, :z) + :one',
  'ExpressionAttributeValues', jsonb_build_object(
    ':t', jsonb_build_object('N', (extract(epoch FROM clock_timestamp()) * 1e6)::bigint::text),
    ':w', jsonb_build_object('S', '${REGION[$n]}'), ':r', jsonb_build_object('N', :round::text),
    ':z', jsonb_build_object('N', '0'), ':one', jsonb_build_object('N', '1'))));
SQL
	done
done

# round <table> <round number>: both servers' pgbench at once -> "east_tps west_tps"
round() {
	local tbl=$1 r=$2
	for n in east west; do
		"$BIN/pgbench" -n -h 127.0.0.1 -p "${PORT[$n]}" -U postgres -T "$DURATION" -c "$CLIENTS" -j "$CLIENTS" -D round="$r" \
			-f "$W/put-$n-$tbl.sql@1" -f "$W/upd-$n-$tbl.sql@1" postgres >"$W/pgbench-$n.out" 2>&1 &
	done
	wait
	echo "$(awk '/^tps/ { print int($3); exit }' "$W/pgbench-east.out") $(awk '/^tps/ { print int($3); exit }' "$W/pgbench-west.out")"
}
# wait until neither region has a change pending for the other -> seconds it took
drain() {
	local t0 n
	t0=$(date +%s.%N)
	for n in east west; do
		until [ "$(q $n -c "SELECT coalesce(bool_and(pending_replication_count = 0), false) FROM dynindex.replication_status()")" = t ]; do
			sleep 0.05
		done
	done
	awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'
}

sum_plain=0; sum_glob=0
for ((r = 1; r <= ROUNDS; r++)); do
	read -r pe pw <<<"$(round BenchPlain $r)"
	read -r ge gw <<<"$(round BenchGlob $r)"
	d=$(drain)
	echo "round $r: unreplicated $pe + $pw = $((pe + pw)) tps; replicated $ge + $gw = $((ge + gw)) tps; all applied ${d} s after the writers stopped; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
	sum_plain=$((sum_plain + pe + pw)); sum_glob=$((sum_glob + ge + gw))
done

lags() { q east -c "SELECT * FROM bench_lag" ; q west -c "SELECT * FROM bench_lag"; }
lags | awk -F'|' '{ print $2 }' | sort -g >"$W/lags"
nl=$(wc -l <"$W/lags")
pct() { awk -v n="$nl" -v p="$1" 'NR == (int(n * p) > 0 ? int(n * p) : 1) { print; exit }' "$W/lags"; }
for n in east west; do
	echo "${REGION[$n]}: $(q $n -c "SELECT string_agg(region_name || ': applied ' || applied_changes || ', average latency ' || round(replication_latency_avg_ms::numeric, 1) || ' ms (replication_status)', '; ') FROM dynindex.replication_status()")" >&2
done
printf 'replicated / unreplicated write throughput (both servers, %d clients each, %d rounds of %d s): %d / %d tps = %.2f\n' \
	"$CLIENTS" "$ROUNDS" "$DURATION" $((sum_glob / ROUNDS)) $((sum_plain / ROUNDS)) "$(echo "$sum_glob / $sum_plain" | bc -l)"
printf 'replication lag per change (%d changes timed, one in '"$LAG_SAMPLE"', writer statement -> apply in the other region): p50 %.1f ms, p99 %.1f ms, max %.1f ms\n' \
	"$nl" "$(pct 0.5)" "$(pct 0.99)" "$(tail -1 "$W/lags")"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
