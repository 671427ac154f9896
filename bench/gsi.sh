#!/usr/bin/env bash
# GSI benchmark (issue #6 item 8): PutItem cost per GSI, propagation lag (commit ->
# visible in the GSI) at 50% and 100% of the maximum write rate with 1 and 3 GSIs,
# and the change queue at full rate.  See bench/README.md, "GSI", for the method.
# Usage: PGHOST=... PGPORT=... [PGUSER=...] bench/gsi.sh [dbname]
#   SECS (10) seconds per pgbench run, QSECS (30) seconds of the full-rate queue run,
#   CLIENTS (4) clients of the rate and lag runs.
# pgbench takes any :name as a variable: the scripts use none of DynamoDB's placeholders.
set -euo pipefail
DB=${1:-${PGDATABASE:-postgres}}
SECS=${SECS:-10}
QSECS=${QSECS:-30}
CLIENTS=${CLIENTS:-4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
q() { psql -qAtX -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

q -c "CREATE EXTENSION IF NOT EXISTS dynindex" >/dev/null
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"

# Gsi0, Gsi1, Gsi3: the same table with 0, 1 and 3 GSIs (gN HASH + ts RANGE, projection ALL)
for n in 0 1 3; do
  gsis=$(q -c "SELECT coalesce(jsonb_agg(jsonb_build_object('IndexName', 'gsi' || i,
           'KeySchema', jsonb_build_array(jsonb_build_object('AttributeName', 'g' || i, 'KeyType', 'HASH'),
                                          jsonb_build_object('AttributeName', 'ts', 'KeyType', 'RANGE')),
           'Projection', jsonb_build_object('ProjectionType', 'ALL'))), '[]') FROM generate_series(1, $n) i")
  q >/dev/null <<SQL
SELECT dynindex.api('DeleteTable', '{"TableName":"Gsi$n"}') WHERE EXISTS (SELECT 1 FROM dynindex.tables WHERE table_name = 'Gsi$n');
SELECT dynindex.api('CreateTable', jsonb_build_object('TableName', 'Gsi$n', 'BillingMode', 'PAY_PER_REQUEST',
  'KeySchema', '[{"AttributeName":"pk","KeyType":"HASH"}]'::jsonb,
  'AttributeDefinitions', '[{"AttributeName":"pk","AttributeType":"S"}]'::jsonb
    || CASE WHEN $n > 0 THEN '[{"AttributeName":"ts","AttributeType":"N"}]'::jsonb ELSE '[]' END
    || (SELECT coalesce(jsonb_agg(jsonb_build_object('AttributeName', 'g' || i, 'AttributeType', 'S')), '[]') FROM generate_series(1, $n) i))
  || CASE WHEN $n > 0 THEN jsonb_build_object('GlobalSecondaryIndexes', '$gsis'::jsonb) ELSE '{}' END);
SQL
  # a fresh item (random key in 1e9) carrying its write time: ts = clock_timestamp() at statement start
  cat > "$tmp/put$n.sql" <<SQL
\set k random(1, 1000000000)
\set a random(0, 99)
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'Gsi$n', 'Item', jsonb_build_object(
  'pk', jsonb_build_object('S', 'k' || :k), 'ts', jsonb_build_object('N', extract(epoch FROM clock_timestamp())::text),
  'g1', jsonb_build_object('S', 'p' || :a), 'g2', jsonb_build_object('S', 'q' || :a), 'g3', jsonb_build_object('S', 'r' || :a),
  'payload', jsonb_build_object('S', repeat('x', 100)))));
SQL
done

# bench-only instrumentation: a row trigger on each GSI storage relation records, in the
# worker's transaction, apply time - the item's ts.  Triggers fire for the worker (it runs
# with session_replication_role = origin); the storage guard only refuses direct DML.
q >/dev/null <<'SQL'
DROP TABLE IF EXISTS public.gsi_bench_lag;
CREATE UNLOGGED TABLE public.gsi_bench_lag (tbl text, idx text, lag_ms float8, at timestamptz DEFAULT clock_timestamp());
CREATE OR REPLACE FUNCTION public.gsi_bench_lag_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.gsi_bench_lag (tbl, idx, lag_ms)
  VALUES (TG_ARGV[0], TG_ARGV[1], (extract(epoch FROM clock_timestamp()) - (NEW.item->'ts'->>'N')::numeric) * 1000);
  RETURN NULL;
END $$;
SQL
lag_triggers() { # on|off
  q -c "SELECT i.table_name, i.index_name, i.storage FROM dynindex.indexes i WHERE i.table_name IN ('Gsi1', 'Gsi3')" |
  while IFS='|' read -r t i s; do
    q -c "DROP TRIGGER IF EXISTS gsi_bench_lag ON $s" >/dev/null
    [ "$1" = on ] && q -c "CREATE TRIGGER gsi_bench_lag AFTER INSERT OR UPDATE ON $s FOR EACH ROW EXECUTE FUNCTION public.gsi_bench_lag_trg('$t', '$i')" >/dev/null
    true
  done
}
lag_triggers off
drain() { q -c "SELECT dynindex.wait_for_indexes('Gsi$1', '120 seconds')" >/dev/null; }
tps() { # script clients [extra pgbench options...]
  local f=$1 c=$2; shift 2
  pgbench -n -M prepared -c "$c" -j "$(( c < 2 ? 1 : 2 ))" -T "$SECS" "$@" -f "$f" "$DB" 2>"$tmp/pgbench.err" | awk '/^tps/ {printf "%.0f", $3}' || cat "$tmp/pgbench.err" >&2
}

echo
echo "## PutItem tps by number of GSIs (pgbench ${SECS}s each, rounds alternate tables)"
printf "%-8s %8s %8s %8s %8s %8s\n" clients "0 GSI" "1 GSI" "3 GSIs" "1/0" "3/0"
for c in 1 4; do
  t0=$(tps "$tmp/put0.sql" $c); drain 0
  t1=$(tps "$tmp/put1.sql" $c); drain 1
  t3=$(tps "$tmp/put3.sql" $c); drain 3
  printf "%-8s %8s %8s %8s %8s %8s\n" $c "$t0" "$t1" "$t3" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b / a}')" "$(awk -v a="$t0" -v b="$t3" 'BEGIN {printf "%.2f", b / a}')"
done

echo
echo "## Propagation lag (ms, write statement start -> row written by the worker), $CLIENTS clients, ${SECS}s"
printf "%-6s %6s %8s %8s %8s %8s %8s %8s\n" table load rate tps changes p50 p99 max
lag_triggers on
for n in 1 3; do
  max=$(tps "$tmp/put$n.sql" "$CLIENTS"); drain $n
  for pct in 50 100; do
    rate=$(( max * pct / 100 ))
    q -c "TRUNCATE public.gsi_bench_lag"
    got=$(tps "$tmp/put$n.sql" "$CLIENTS" --rate="$rate"); drain $n
    q -F' ' -c "SELECT count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY lag_ms)::numeric, 1),
                       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_ms)::numeric, 1), round(max(lag_ms)::numeric, 1)
                  FROM public.gsi_bench_lag WHERE tbl = 'Gsi$n'" |
      { read -r cnt p50 p99 mx; printf "%-6s %5s%% %8s %8s %8s %8s %8s %8s\n" "Gsi$n" $pct "$rate" "$got" "$cnt" "$p50" "$p99" "$mx"; }
  done
done
lag_triggers off

echo
echo "## Queue at full rate: Gsi3 (3 GSIs), $CLIENTS clients, ${QSECS}s, queued_changes sampled every second"
SECS=$QSECS tps "$tmp/put3.sql" "$CLIENTS" > "$tmp/qtps" &
bench=$!
: > "$tmp/samples"
for ((s = 1; s <= QSECS; s++)); do
  sleep 1
  q -c "SELECT queued_changes FROM dynindex.gsi_status WHERE table_name = 'Gsi3' AND index_name = 'gsi1'" >> "$tmp/samples"
done
wait $bench
final=$(q -c "SELECT queued_changes FROM dynindex.gsi_status WHERE table_name = 'Gsi3' AND index_name = 'gsi1'")
start=$(date +%s.%N); drain 3; end=$(date +%s.%N)
echo "tps $(cat "$tmp/qtps"); queued_changes per second: $(paste -sd' ' "$tmp/samples")"
echo "max $(sort -n "$tmp/samples" | tail -1), at the end $final, drained $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}') s after the run"
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

for n in 0 1 3; do q -c "SELECT dynindex.api('DeleteTable', '{\"TableName\":\"Gsi$n\"}')" >/dev/null; done
q -c "DROP TABLE public.gsi_bench_lag; DROP FUNCTION public.gsi_bench_lag_trg()" >/dev/null
