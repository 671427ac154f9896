#!/bin/bash
# bench/standby.sh — eventually consistent reads on a hot standby through the gateway
# (--standby): what routing costs and what it moves, in one run.
#
#  1. GetItem (wrk, 8 connections) through a gateway on the primary alone and through
#     a gateway with --standby, alternating in short rounds: throughput, p50/p99, and the
#     CPU each server's backends spent per read (from the postmasters' children's CPU
#     times) — with --standby the reads' CPU moves from the primary to the standby.
#  2. The lag estimate under writes: PutItem (wrk, 4 connections) and GetItem (wrk,
#     4 connections) together through the --standby gateway; the gateway's metrics sampled
#     every 100 ms: the standby's estimated replay lag (p50, p99, max), the share of reads
#     it answered, and the replay lag PostgreSQL itself reports (pg_stat_replication).
#  3. The probes' cost: the gateway's own CPU over an idle interval with a standby (ten lag
#     probes a second to each server) and without.
#
# Starts its own primary, streaming standby and gateways in a temporary directory and
# stops them at the end.  Run as a user that may run initdb (not root), with the
# PostgreSQL (dynindex installed) of pg_config first on PATH, from the repository root
# after `make` (uses src/gateway/dynindex-gateway, else the installed one).
# Environment: DURATION (seconds per round, default 10), ROUNDS (default 3),
# PORT_BASE (first of 5 ports, default 56120).
set -euo pipefail
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
PORT_BASE=${PORT_BASE:-56120}
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN=$(pg_config --bindir)
GW="$HERE/../src/gateway/dynindex-gateway"
[ -x "$GW" ] || GW="$BIN/dynindex-gateway"
W=$(mktemp -d)
PIDS=()
stop_all() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	for n in standby primary; do "$BIN/pg_ctl" -D "$W/$n" -m immediate -w stop >/dev/null 2>&1 || true; done
	[ "${KEEP:-0}" = 1 ] || rm -rf "$W"
}
trap stop_all EXIT
P_PORT=$PORT_BASE; S_PORT=$((PORT_BASE + 1)); GA=$((PORT_BASE + 2)); GB=$((PORT_BASE + 3)); MB=$((PORT_BASE + 4))

"$BIN/initdb" -D "$W/primary" -U postgres -A trust -E UTF8 --locale=C >/dev/null
{
	echo "shared_preload_libraries = 'dynindex'"
	echo "listen_addresses = '127.0.0.1'"; echo "port = $P_PORT"
	echo "unix_socket_directories = '$W'"; echo "shared_buffers = 128MB"
	echo "wal_level = replica"; echo "max_wal_senders = 4"
} >>"$W/primary/postgresql.conf"
echo "host replication postgres 127.0.0.1/32 trust" >>"$W/primary/pg_hba.conf"
"$BIN/pg_ctl" -D "$W/primary" -l "$W/primary.log" -w start >/dev/null
q() { "$BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$1" -U postgres -d postgres "${@:2}"; }
q $P_PORT -o /dev/null <<'SQL'
CREATE EXTENSION dynindex;
SELECT dynindex.api('CreateTable', '{"TableName": "gwbench", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}]}');
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'gwbench', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'p' || i), 'sk', jsonb_build_object('S', lpad(j::text, 3, '0')),
                     'n', jsonb_build_object('N', (i * j)::text), 'data', jsonb_build_object('S', repeat('v', 200))))))
  FROM generate_series(0, 199) i, generate_series(0, 19) j;
SQL
"$BIN/pg_basebackup" -h 127.0.0.1 -p $P_PORT -U postgres -D "$W/standby" -R -X stream --checkpoint fast
{ echo "port = $S_PORT"; echo "hot_standby = on"; } >>"$W/standby/postgresql.conf"
"$BIN/pg_ctl" -D "$W/standby" -l "$W/standby.log" -w start >/dev/null
until [ "$(q $S_PORT -c "SELECT count(*) FROM dynindex.tables")" = 1 ]; do sleep 0.2; done

start_gw() {  # port extra-args...
	local port=$1; shift
	"$GW" --dev --host 127.0.0.1 --port "$port" --pool-size 4 \
		--dbname "host=127.0.0.1 port=$P_PORT user=postgres dbname=postgres" "$@" >"$W/gw$port.out" 2>"$W/gw$port.err" &
	PIDS+=($!)
	until grep -q 'listening on' "$W/gw$port.out" 2>/dev/null; do sleep 0.05; done
}
start_gw $GA
GA_PID=${PIDS[-1]}
start_gw $GB --standby "host=127.0.0.1 port=$S_PORT user=postgres dbname=postgres" --max-standby-lag 1s --metrics-port $MB
GB_PID=${PIDS[-1]}
metrics() { curl -s "http://127.0.0.1:$MB/metrics"; }
until metrics | grep -q '^dynindex_gateway_standby_up{.*} 1$'; do sleep 0.1; done

# CPU (ticks) of a server's backends: the postmaster's children, living and reaped
srv_ticks() {  # data dir
	local pm
	pm=$(head -1 "$1/postmaster.pid")
	awk '{ s = $14 + $15 + $16 + $17 } END { print s }' "/proc/$pm/stat"
}
# the postmaster's own children's CPU is only counted once they exit: sum the live ones too
live_ticks() {  # data dir
	local pm t=0
	pm=$(head -1 "$1/postmaster.pid")
	for c in $(cat "/proc/$pm/task/$pm/children" 2>/dev/null); do
		t=$((t + $(awk '{ print $14 + $15 }' "/proc/$c/stat" 2>/dev/null || echo 0)))
	done
	echo $(( $(srv_ticks "$1") + t ))
}
proc_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)

wrk_run() {  # port op connections
	wrk -t1 -c"$3" -d"${DURATION}s" -s "$HERE/wrk-dynamodb.lua" "http://127.0.0.1:$1" -- "$2" 2>/dev/null | tail -1
}

echo "==> 1. GetItem, 8 connections, $ROUNDS rounds of ${DURATION}s per gateway"
: >"$W/r1"
for r in $(seq 1 "$ROUNDS"); do
	for side in primary standby; do
		port=$GA; [ $side = standby ] && port=$GB
		p0=$(live_ticks "$W/primary"); s0=$(live_ticks "$W/standby")
		out=$(wrk_run $port GetItem 8)
		p1=$(live_ticks "$W/primary"); s1=$(live_ticks "$W/standby")
		echo "$side $((p1 - p0)) $((s1 - s0)) $out" >>"$W/r1"
	done
done
python3 - "$W/r1" "$HZ" <<'PY'
import json, sys
hz = int(sys.argv[2])
agg = {}
for line in open(sys.argv[1]):
    side, pt, st, js = line.split(" ", 3)
    d = json.loads(js)
    a = agg.setdefault(side, {"req": 0, "us": 0, "err": 0, "pt": 0, "st": 0, "hist": {}})
    a["req"] += d["requests"]; a["us"] += d["duration_us"]; a["err"] += d["errors"] + d["socket_errors"]
    a["pt"] += int(pt); a["st"] += int(st)
    for k, v in d["hist"].items():
        a["hist"][int(k)] = a["hist"].get(int(k), 0) + v
def q(h, p):
    n = sum(h.values()); c = 0
    for k in sorted(h):
        c += h[k]
        if c >= p * n:
            return k / 1000
print("| gateway | GetItem/s | p50 ms | p99 ms | errors | primary CPU per read | standby CPU per read |")
print("|---|---|---|---|---|---|---|")
for side in ("primary", "standby"):
    a = agg[side]
    print("| %s | %.0f | %.2f | %.2f | %d | %.3f ms | %.3f ms |" % (
        "--dbname only" if side == "primary" else "--standby", a["req"] / (a["us"] / 1e6), q(a["hist"], .5), q(a["hist"], .99),
        a["err"], a["pt"] / hz * 1000 / a["req"], a["st"] / hz * 1000 / a["req"]))
PY

echo "==> 2. PutItem (4 connections) and GetItem (4 connections) together through --standby, ${DURATION}s x $ROUNDS"
: >"$W/lag"; : >"$W/pglag"
reads0=$(metrics | sed -n 's/^dynindex_gateway_eventual_reads_total{server="\(127[^"]*\)"} //p')
prim0=$(metrics | sed -n 's/^dynindex_gateway_eventual_reads_total{server="primary"} //p')
for r in $(seq 1 "$ROUNDS"); do
	wrk_run $GB PutItem 4 >"$W/put$r" &
	wp=$!
	wrk_run $GB GetItem 4 >"$W/get$r" &
	wg=$!
	end=$(( $(date +%s) + DURATION ))
	while [ "$(date +%s)" -lt "$end" ]; do
		metrics | sed -n 's/^dynindex_gateway_standby_replay_lag_seconds{.*} //p' >>"$W/lag"
		q $P_PORT -c "SELECT COALESCE(EXTRACT(epoch FROM replay_lag), 0) FROM pg_stat_replication" >>"$W/pglag"
		sleep 0.1
	done
	wait $wp $wg
done
reads1=$(metrics | sed -n 's/^dynindex_gateway_eventual_reads_total{server="\(127[^"]*\)"} //p')
prim1=$(metrics | sed -n 's/^dynindex_gateway_eventual_reads_total{server="primary"} //p')
python3 - "$W" "$ROUNDS" "$((reads1 - reads0))" "$((prim1 - prim0))" <<'PY'
import json, sys
w, rounds, sb, pr = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def tot(name):
    req = us = err = 0
    for r in range(1, rounds + 1):
        d = json.loads(open(f"{w}/{name}{r}").read().strip().splitlines()[-1])
        req += d["requests"]; us += d["duration_us"]; err += d["errors"] + d["socket_errors"]
    return req / (us / 1e6), err
def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(p * len(xs)))]
lag = [float(x) for x in open(f"{w}/lag") if x.strip() not in ("", "NaN")]
pg = [float(x) for x in open(f"{w}/pglag") if x.strip()]
put, pe = tot("put"); get, ge = tot("get")
print(f"PutItem/s {put:.0f} (errors {pe}), GetItem/s {get:.0f} (errors {ge})")
print(f"reads answered by the standby: {sb} of {sb + pr} ({100 * sb / max(1, sb + pr):.1f}%)")
print(f"gateway's lag estimate over {len(lag)} samples: p50 {1000 * pct(lag, .5):.0f} ms, p99 {1000 * pct(lag, .99):.0f} ms, max {1000 * max(lag):.0f} ms")
print(f"pg_stat_replication.replay_lag over {len(pg)} samples: p50 {1000 * pct(pg, .5):.1f} ms, p99 {1000 * pct(pg, .99):.1f} ms, max {1000 * max(pg):.1f} ms")
PY

echo "==> 3. the gateways' own CPU while idle, ${DURATION}s"
a0=$(proc_ticks $GA_PID); b0=$(proc_ticks $GB_PID); p0=$(live_ticks "$W/primary"); s0=$(live_ticks "$W/standby")
sleep "$DURATION"
a1=$(proc_ticks $GA_PID); b1=$(proc_ticks $GB_PID); p1=$(live_ticks "$W/primary"); s1=$(live_ticks "$W/standby")
echo "gateway without standby: $(( (a1 - a0) * 1000 / HZ )) ms CPU; with one standby: $(( (b1 - b0) * 1000 / HZ )) ms CPU (probes and loop wake-ups)"
echo "servers while idle (both gateways' probes and every background process): primary $(( (p1 - p0) * 1000 / HZ )) ms, standby $(( (s1 - s0) * 1000 / HZ )) ms CPU"
