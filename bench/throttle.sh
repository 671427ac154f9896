#!/usr/bin/env bash
# bench/throttle.sh — the cost of throughput enforcement and of Contributor
# Insights (docs/capacity.md, docs/contributor-insights.md) at the in-server
# endpoint (dynindex_http, 4 workers, dev mode): GetItem and PutItem from 8
# keep-alive clients (bench/throttle-load.mjs) on a provisioned table of
# 1,000,000 RCU/WCU (no table near its limit), in alternating rounds of
#   off:  dynindex.enforce_throughput = off
#   on:   enforcement on (the default)
#   ci:   enforcement on and Contributor Insights ENABLED on the table
# Part "http" prints, for each, the median ops/s and the median server CPU per operation (the
# endpoint workers' user + system time, from /proc, over the operations served),
# and the ratios on / off and ci / off of both.  On a shared machine the CPU per
# operation is the steadier figure: throughput follows whatever else runs.
# Part "sql" measures the same three modes inside one backend: N calls of
# dynindex.api (GetItem, PutItem) per run, the backend's own CPU time
# (/proc/self/stat, read with pg_read_file) per call; the endpoint runs the
# same code in its workers, so this is its server-side cost without the HTTP
# layer and without the scheduling noise of a shared machine.
#   BENCH_PART (all | http | sql; default all), N (default 100000)
#
# Builds a release build of this tree and installs it into a private copy of
# the system's PostgreSQL (as make test does; the system's is never touched),
# starts a throwaway server (synchronous_commit=off), stops it at the end.
#   SECONDS_PER_RUN (default 4), ROUNDS (default 5), CLIENTS (default 8),
#   BENCH_PGPORT (5497), BENCH_HTTP_PORT (8097), BENCH_HTTP_WORKERS (4)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
. "$ROOT/test/bin/common.sh"
SECS="${SECONDS_PER_RUN:-4}"; ROUNDS="${ROUNDS:-5}"; CLIENTS="${CLIENTS:-8}"
PGPORT_="${BENCH_PGPORT:-5497}"; HTTPPORT="${BENCH_HTTP_PORT:-8097}"; WORKERS="${BENCH_HTTP_WORKERS:-4}"
WORK="$(mktemp -d /tmp/dynindex-thrbench.XXXXXX)"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
    [ -f "$WORK/data/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$WORK/data" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT

PGC="$(pg_config --bindir)/pg_config"
echo "==> release build of $ROOT into $WORK"
mkdir -p "$WORK/src"
(cd "$ROOT" && git ls-files -z | xargs -0 cp --parents -t "$WORK/src")
make -s -C "$WORK/src" -j2 PG_CONFIG="$PGC" >/dev/null
PRIV_PGC="$(di_private_pg "$PGC" "$WORK/pg")"
make -s -C "$WORK/src" PG_CONFIG="$PGC" DESTDIR="$WORK/pg" install >/dev/null
PGBIN="$WORK/pg$("$PGC" --bindir)"
[ "$(id -u)" = 0 ] && chown -R postgres "$WORK"

as_pg "$PGBIN/initdb" -D "$WORK/data" -A trust >/dev/null
printf "shared_preload_libraries = 'dynindex,dynindex_http'\ndynindex_http.port = %s\ndynindex_http.dev = on\ndynindex_http.workers = %s\n" \
    "$HTTPPORT" "$WORKERS" >>"$WORK/data/postgresql.conf"
as_pg "$PGBIN/pg_ctl" -D "$WORK/data" -l "$WORK/pg.log" -w start -o \
    "-p $PGPORT_ -k $WORK -c listen_addresses='' -c max_connections=50 -c max_worker_processes=16 -c synchronous_commit=off" >/dev/null
q() { as_pg "$PGBIN/psql" -X -q -At -h "$WORK" -p "$PGPORT_" -d postgres -v ON_ERROR_STOP=1 "$@"; }
q -c "CREATE EXTENSION dynindex"
q -c "SELECT dynindex.api('CreateTable', '{\"TableName\":\"BenchThr\",\"BillingMode\":\"PROVISIONED\",
  \"ProvisionedThroughput\":{\"ReadCapacityUnits\":1000000,\"WriteCapacityUnits\":1000000},
  \"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"}],
  \"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"}]}') IS NOT NULL" >/dev/null
q -c "SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'BenchThr', 'Item',
  jsonb_build_object('pk', jsonb_build_object('S', 'k' || i), 'v', jsonb_build_object('S', repeat('x', 100))))))
  FROM generate_series(0, 999) i" >/dev/null
URL="http://127.0.0.1:$HTTPPORT/"
for _ in $(seq 1 100); do curl -s "$URL" >/dev/null 2>&1 && break; sleep 0.1; done

setmode() {  # off | on | ci
    local enforce=on action=DISABLE
    [ "$1" = off ] && enforce=off
    [ "$1" = ci ] && action=ENABLE
    q -c "ALTER SYSTEM SET dynindex.enforce_throughput = $enforce" -c "SELECT pg_reload_conf()" >/dev/null
    q -c "SELECT dynindex.api('UpdateContributorInsights', '{\"TableName\":\"BenchThr\",\"ContributorInsightsAction\":\"$action\"}') IS NOT NULL" >/dev/null
    sleep 0.5
}
# the three modes, in an order that turns with the round (no mode always runs first)
rotated() { case $(( $1 % 3 )) in 0) echo off on ci ;; 1) echo on ci off ;; *) echo ci off on ;; esac; }
median() { sort -n | sed -n "$(( (ROUNDS + 1) / 2 ))p"; }
PART="${BENCH_PART:-all}"; N="${N:-100000}"
TICK="$(getconf CLK_TCK)"
# CPU ticks (user + system) of the endpoint's workers so far
cpu_ticks() {
    local t=0 pid
    for pid in $(q -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'dynindex http'"); do
        t=$((t + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
    done
    echo "$t"
}

echo "==> $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), $CLIENTS clients, $SECS s x $ROUNDS rounds"
for op in GetItem PutItem; do
    [ "$PART" = sql ] && break
    declare -A res=() cpu=()
    for r in $(seq 1 "$ROUNDS"); do
        for mode in $(rotated "$r"); do
            setmode "$mode"
            c0="$(cpu_ticks)"
            read -r ops errs < <(node "$HERE/throttle-load.mjs" "$URL" "$op" "$SECS" "$CLIENTS")
            c1="$(cpu_ticks)"
            [ "$errs" = 0 ] || echo "    ($op $mode: $errs errors)"
            us="$(awk "BEGIN{printf \"%.1f\", ($c1 - $c0) / $TICK * 1e6 / ($ops * $SECS)}")"
            res[$mode]+="$ops "
            cpu[$mode]+="$us "
            echo "    round $r $op $mode: $ops ops/s, $us us CPU/op"
        done
    done
    off="$(tr ' ' '\n' <<<"${res[off]}" | grep . | median)"
    on="$(tr ' ' '\n' <<<"${res[on]}" | grep . | median)"
    ci="$(tr ' ' '\n' <<<"${res[ci]}" | grep . | median)"
    printf '%-8s off %6s   on %6s   ci %6s ops/s   on/off %s   ci/off %s\n' "$op" "$off" "$on" "$ci" \
        "$(awk "BEGIN{printf \"%.3f\", $on/$off}")" "$(awk "BEGIN{printf \"%.3f\", $ci/$off}")"
    coff="$(tr ' ' '\n' <<<"${cpu[off]}" | grep . | median)"
    con="$(tr ' ' '\n' <<<"${cpu[on]}" | grep . | median)"
    cci="$(tr ' ' '\n' <<<"${cpu[ci]}" | grep . | median)"
    printf '%-8s off %6s   on %6s   ci %6s us CPU/op   on/off %s   ci/off %s\n' "$op" "$coff" "$con" "$cci" \
        "$(awk "BEGIN{printf \"%.3f\", $con/$coff}")" "$(awk "BEGIN{printf \"%.3f\", $cci/$coff}")"
    unset res cpu
done

# ---- inside one backend: its CPU time per dynindex.api call
q <<'SQL'
CREATE FUNCTION bench_ticks() RETURNS bigint LANGUAGE sql AS $$
  SELECT (f[12])::bigint + (f[13])::bigint
    FROM (SELECT regexp_split_to_array(regexp_replace(pg_read_file('/proc/self/stat'), '^.*\) ', ''), ' ') f) s $$;
CREATE FUNCTION bench_calls(op text, n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    IF op = 'GetItem' THEN
      PERFORM dynindex.api('GetItem', jsonb_build_object('TableName', 'BenchThr', 'Key', jsonb_build_object('pk', jsonb_build_object('S', 'k' || (i % 1000)))));
    ELSE
      PERFORM dynindex.api('PutItem', jsonb_build_object('TableName', 'BenchThr', 'Item', jsonb_build_object('pk', jsonb_build_object('S', 'k' || (i % 1000)), 'v', jsonb_build_object('S', repeat('x', 100)))));
    END IF;
  END LOOP;
END $$;
SQL
if [ "$PART" != http ]; then
    q -c "ALTER SYSTEM RESET dynindex.enforce_throughput" -c "SELECT pg_reload_conf()" >/dev/null
    for op in GetItem PutItem; do
        declare -A cpu=()
        for r in $(seq 1 "$ROUNDS"); do
            for mode in $(rotated "$r"); do
                enforce=on; action=DISABLE
                [ "$mode" = off ] && enforce=off
                [ "$mode" = ci ] && action=ENABLE
                us="$(q -c "SET dynindex.enforce_throughput = $enforce" \
                        -c "SELECT dynindex.api('UpdateContributorInsights', '{\"TableName\":\"BenchThr\",\"ContributorInsightsAction\":\"$action\"}') IS NOT NULL" \
                        -c "SELECT bench_calls('$op', 200)" \
                        -c "SELECT round((bench_ticks() - t0) * 1e6 / $TICK / $N, 2) FROM (SELECT bench_ticks() t0) a, LATERAL (SELECT bench_calls('$op', $N)) b" | tail -1)"
                cpu[$mode]+="$us "
                echo "    round $r $op $mode: $us us CPU/call (one backend)"
            done
        done
        coff="$(tr ' ' '\n' <<<"${cpu[off]}" | grep . | median)"
        con="$(tr ' ' '\n' <<<"${cpu[on]}" | grep . | median)"
        cci="$(tr ' ' '\n' <<<"${cpu[ci]}" | grep . | median)"
        printf '%-8s one backend: off %s   on %s   ci %s us CPU/call   on/off %s   ci/off %s\n' "$op" "$coff" "$con" "$cci" \
            "$(awk "BEGIN{printf \"%.3f\", $con/$coff}")" "$(awk "BEGIN{printf \"%.3f\", $cci/$coff}")"
        unset cpu
    done
fi
q -c "SELECT table_name, read_throttle_events, write_throttle_events FROM dynindex.table_metrics WHERE table_name = 'BenchThr'"
