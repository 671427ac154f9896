#!/bin/bash
# What a running export takes from the table's writers, with the machine's other load
# cancelled out (issue #28; bench/README.md, "Writers during an export"): against the
# BenchExport table of bench/export.sh (run it first) on a server of this machine, as a
# user that may signal the server's processes (root, or the server's own user).
#
# Each round starts a full export and stops its job's process (SIGSTOP) and lets it run
# again (SIGCONT) every WINDOW seconds while CLIENTS PutItem clients run (pgbench -P 1);
# the writers' per-second throughput is split by the job's state over each whole second
# (seconds with a switch in them are left out), so both sides see the same background
# load, second by second. A stopped job still holds its snapshot and its open scan: what
# is compared is the job's work (CPU, I/O), not its existence.
# Usage: bench/export_writers.sh [psql/pgbench connection options] [dbname]
# Environment: CLIENTS (2), SECONDS_PER_RUN (36), WINDOW (2), ROUNDS (2), BUCKET (bench:
#   the directory store export.sh configured).
set -euo pipefail
C=${CLIENTS:-2}
T=${SECONDS_PER_RUN:-36}
W=${WINDOW:-2}
ROUNDS=${ROUNDS:-2}
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1 "$@")
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
q() { "${PSQL[@]}" -c "$1"; }
PUT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/export_put.sql"
settle() { while [ "$(q "SELECT count(*) FROM dynindex.exports WHERE status = 'IN_PROGRESS'")" != 0 ]; do sleep 0.5; done; }
for ((r = 1; r <= ROUNDS; r++)); do
	settle
	arn=$(q "SELECT dynindex.export_table('BenchExport', '${BUCKET:-bench}', 'writers$r-$RANDOM')")
	pid=""
	for ((i = 0; i < 100; i++)); do
		pid=$(q "SELECT pid FROM pg_stat_activity WHERE query LIKE 'export %: % items' LIMIT 1")
		[ -n "$pid" ] && break
		sleep 0.1
	done
	[ -n "$pid" ] || { echo "the export job did not start" >&2; exit 1; }
	kill -STOP "$pid"
	echo "$(date +%s.%N) stop" > "$DIR/states"
	pgbench -n -P 1 --progress-timestamp -T "$T" -c "$C" -j "$C" -f "$PUT" "$@" > "$DIR/pgb" 2>&1 &
	pg=$!
	st=stop
	while kill -0 "$pg" 2>/dev/null; do
		sleep "$W"
		if [ $st = stop ]; then kill -CONT "$pid"; st=run; else kill -STOP "$pid"; st=stop; fi
		echo "$(date +%s.%N) $st" >> "$DIR/states"
	done
	kill -CONT "$pid" 2>/dev/null || true
	wait "$pg" || true
	python3 - "$DIR" "$r" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PY'
import statistics as S, sys
d, r, load = sys.argv[1:4]
states = [(float(l.split()[0]), l.split()[1]) for l in open(d + '/states')]
def state(t0, t1):
    s = None
    for ts, x in states:
        if ts <= t0: s = x
        elif ts < t1: return None
    return s
tps = {'stop': [], 'run': []}
for l in open(d + '/pgb'):
    if l.startswith('progress:'):
        f = l.split(); s = state(float(f[1]) - 1.0, float(f[1]))
        if s: tps[s].append(float(f[3]))
a, b = S.mean(tps['stop']), S.mean(tps['run'])
print('round %s: writers with the job stopped %.0f tps (%d s), running %.0f tps (%d s): ratio %.2f (medians %.2f); load average %s'
      % (r, a, len(tps['stop']), b, len(tps['run']), b / a, S.median(tps['run']) / S.median(tps['stop']), load))
PY
done
settle
echo "dynindex.export_yield $(q "SHOW dynindex.export_yield"), export_sched_idle $(q "SHOW dynindex.export_sched_idle")"
