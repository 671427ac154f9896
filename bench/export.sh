#!/bin/bash
# Export speed (issue #28; the import part is bench/import_export.sh), against a running server with dynindex
# in shared_preload_libraries and a superuser connection (psql/pgbench options
# as arguments).
#
# Export: ITEMS items (default 1,000,000) of ~200 bytes in a table with
# point-in-time recovery, exported to a directory store, against COPY ... TO
# a server file of a plain (pk text, sk text, item jsonb) table holding the
# same items (target: export >= 0.5x COPY's items per second); the export
# job's peak memory (VmHWM of its process); then PutItem throughput of
# CLIENTS writers on the table alone and while full exports run back to back
# (target: >= 0.8x).
# Usage: bench/export.sh [-h host] [-p port] [dbname]
# The export job runs under SCHED_IDLE (dynindex.export_sched_idle; off: at
# dynindex.export_nice): set them on the server to compare.
# Environment: ITEMS (1000000), CLIENTS (2), SECONDS_PER_RUN (10), ROUNDS (3), REUSE=1 (keep the tables
#   of an earlier run with the same ITEMS),
#   EXCHANGE (dynindex.exchange_directory's value; default: read from the server).
set -euo pipefail
N=${ITEMS:-1000000}
C=${CLIENTS:-2}
T=${SECONDS_PER_RUN:-10}
ROUNDS=${ROUNDS:-3}
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1 "$@")
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
EXCHANGE=${EXCHANGE:-$("${PSQL[@]}" -c "SHOW dynindex.exchange_directory")}
[ -n "$EXCHANGE" ] || { echo "set dynindex.exchange_directory on the server first" >&2; exit 1; }
case "$EXCHANGE" in /*) ;; *) EXCHANGE="$("${PSQL[@]}" -c "SHOW data_directory")/$EXCHANGE" ;; esac
q() { "${PSQL[@]}" -c "$1"; }
now() { date +%s.%N; }

# ---- export ----
if [ "${REUSE:-0}" != 1 ]; then
q "SELECT dynindex.api('DeleteTable', '{\"TableName\":\"BenchExport\"}')" >/dev/null 2>&1 || true
q "SELECT dynindex.api('CreateTable', '{\"TableName\":\"BenchExport\",\"BillingMode\":\"PAY_PER_REQUEST\",
  \"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"}],
  \"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}]}') IS NOT NULL" >/dev/null
echo "loading $N items..." >&2
for ((i = 0; i < N; i += 50000)); do
	q "SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'BenchExport', 'Item', jsonb_build_object(
	  'pk', jsonb_build_object('S', 'P' || (g % 10000)), 'sk', jsonb_build_object('S', 'S' || g),
	  'n', jsonb_build_object('N', (g * 7)::text), 'body', jsonb_build_object('S', md5(g::text) || repeat('x', 100))))))
	  FROM generate_series($i + 1, least($i + 50000, $N)) g" >/dev/null
done
q "SELECT dynindex.api('UpdateContinuousBackups', '{\"TableName\":\"BenchExport\",\"PointInTimeRecoverySpecification\":{\"PointInTimeRecoveryEnabled\":true}}') IS NOT NULL" >/dev/null
q "DROP TABLE IF EXISTS bench_plain; CREATE TABLE bench_plain (pk text, sk text, item jsonb, PRIMARY KEY (pk, sk));
   INSERT INTO bench_plain SELECT i #>> '{pk,S}', i #>> '{sk,S}', i FROM dynindex.scan('BenchExport') i"
q "VACUUM ANALYZE bench_plain"
fi
# (server-side paths: a relative exchange directory is relative to the data directory)
q "COPY (SELECT 1) TO PROGRAM 'mkdir -p $EXCHANGE/bench && cat >/dev/null'"  # (reads its input: no broken pipe)
q "SELECT dynindex.set_object_store('bench', 'directory', directory => '$EXCHANGE/bench')" >/dev/null

copy_once() {
	local t0 t1
	t0=$(now)
	q "COPY bench_plain TO '$EXCHANGE/bench/plain.copy'"
	t1=$(now)
	echo "$t1 - $t0" | bc -l
}
# one export, timed from the request to COMPLETED; the job's peak memory sampled meanwhile
# (QUIET=1: only the status, every 0.5 s — while writers are measured, the 20 checks a second
#  with their psql processes and backends would take the writers' CPU themselves)
export_once() {   # prefix -> seconds (VmHWM and the peak RssAnon in kB in $DIR/hwm, $DIR/anon)
	local arn t0 t1 st pid hwm=0 h anon=0 a
	t0=$(now)
	arn=$(q "SELECT dynindex.export_table('BenchExport', 'bench', '$1')")
	while :; do
		st=$(q "SELECT status FROM dynindex.exports WHERE export_arn = '$arn'")
		[ "$st" != IN_PROGRESS ] && break
		if [ "${QUIET:-0}" = 1 ]; then sleep 0.5; continue; fi
		pid=$(q "SELECT pid FROM pg_stat_activity WHERE query LIKE 'export %: % items' LIMIT 1" || true)
		if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
			h=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
			[ "${h:-0}" -gt "$hwm" ] && hwm=$h
			# its own pages (VmHWM also counts the shared buffers it touched)
			a=$(awk '/RssAnon/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
			[ "${a:-0}" -gt "$anon" ] && anon=$a
		fi
		sleep 0.05
	done
	t1=$(now)
	[ "$st" = COMPLETED ] || { echo "export $st: $(q "SELECT failure_code || ': ' || failure_message FROM dynindex.exports WHERE export_arn = '$arn'")" >&2; exit 1; }
	echo "$hwm" > "$DIR/hwm"
	echo "$anon" > "$DIR/anon"
	echo "$t1 - $t0" | bc -l
}
# ROUNDS rounds, COPY and export alternating (the machine's load changes): the best of each
copy_s=999999; exp_s=999999; hwm=0; anon=0
for ((r = 1; r <= ROUNDS; r++)); do
	c=$(copy_once); e=$(export_once "run$r"); h=$(cat "$DIR/hwm"); a=$(cat "$DIR/anon")
	echo "round $r: COPY TO $c s, export $e s, job peak RSS $((h / 1024)) MB (own pages, RssAnon: $((a / 1024)) MB)" >&2
	[ "$a" -gt "$anon" ] && anon=$a
	[ "$(echo "$c < $copy_s" | bc)" = 1 ] && copy_s=$c
	[ "$(echo "$e < $exp_s" | bc)" = 1 ] && exp_s=$e
	[ "$h" -gt "$hwm" ] && hwm=$h
done
printf 'export: %d items; COPY TO %.2f s (%d items/s); export %.2f s (%d items/s); ratio %.2f; job peak RSS %d MB, RssAnon %d MB\n' \
	"$N" "$copy_s" "$(echo "$N / $copy_s" | bc)" "$exp_s" "$(echo "$N / $exp_s" | bc)" "$(echo "$copy_s / $exp_s" | bc -l)" "$((hwm / 1024))" "$((anon / 1024))"

# writers alone, then with exports running back to back
PUT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/export_put.sql"
# no export of an earlier round may still run while the writers are measured alone
# (at 5M items an export outlives the writers' run that started it)
settle() { while [ "$(q "SELECT count(*) FROM dynindex.exports WHERE status = 'IN_PROGRESS'")" != 0 ]; do sleep 0.5; done; }
pgb() { pgbench -n -T "$T" -c "$C" -j "$C" -f "$PUT" "$@" 2>/dev/null | awk '/^tps/ { print int($3); exit }'; }
alone=0; during=0
for ((r = 1; r <= ROUNDS; r++)); do
	settle
	a=$(pgb "$@")
	( for i in 1 2 3 4 5 6 7 8 9 10; do QUIET=1 export_once "during$r-$i" >/dev/null || break; done ) &
	bg=$!
	sleep 1
	d=$(pgb "$@")
	kill "$bg" 2>/dev/null || true; wait "$bg" 2>/dev/null || true
	echo "round $r: writers alone $a tps, during exports $d tps" >&2
	alone=$((alone + a)); during=$((during + d))
done
printf 'writers (%d clients): alone %d tps, during full exports %d tps, ratio %.2f (export_sched_idle %s, export_nice %s; load average %s)\n' "$C" "$((alone / ROUNDS))" "$((during / ROUNDS))" "$(echo "$during / $alone" | bc -l)" \
	"$(q "SHOW dynindex.export_sched_idle")" "$(q "SHOW dynindex.export_nice")" "$(cut -d' ' -f1-3 /proc/loadavg)"
settle
