#!/usr/bin/env bash
# GSI benchmark (issue #6 item 8): PutItem cost per GSI, propagation lag (commit ->
# visible in the GSI) at 50% and 100% of the maximum write rate with 1 and 3 GSIs,
# and the change queue at full rate.  See bench/README.md, "GSI", for the method.
# Usage: PGHOST=... PGPORT=... [PGUSER=...] bench/gsi.sh [dbname]
#   SECS (10) seconds per lag run, QSECS (30) seconds of the full-rate queue run,
#   CLIENTS (4) clients of the rate and lag runs, ROUNDS (3) x TSECS (5) seconds per table
#   for the PutItem comparison.  Needs track_commit_timestamp = on.
# pgbench takes any :name as a variable: the scripts use none of DynamoDB's placeholders.
set -euo pipefail
DB=${1:-${PGDATABASE:-postgres}}
SECS=${SECS:-10}
QSECS=${QSECS:-30}
CLIENTS=${CLIENTS:-4}
TSECS=${TSECS:-5}
ROUNDS=${ROUNDS:-3}
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
  # the same PutItem asking for ReturnConsumedCapacity: the full write path (read the old item under lock) on every table
  sed "s/'TableName', 'Gsi$n', /'TableName', 'Gsi$n', 'ReturnConsumedCapacity', 'TOTAL', /" "$tmp/put$n.sql" > "$tmp/putc$n.sql"
done

# Lag = commit time of the GSI entry (the worker's batch) - commit time of the base item
# (the PutItem), both from track_commit_timestamp: exact, nothing added to the product.
if [ "$(q -c "SHOW track_commit_timestamp")" != on ]; then
  echo "needs track_commit_timestamp = on (ALTER SYSTEM SET track_commit_timestamp = on; restart)" >&2; exit 1
fi
drain() { q -c "SELECT dynindex.wait_for_indexes('Gsi$1', '120 seconds')" >/dev/null; }
tps() { # script clients [extra pgbench options...]
  local f=$1 c=$2; shift 2
  pgbench -n -M prepared -c "$c" -j "$(( c < 2 ? 1 : 2 ))" -T "$SECS" "$@" -f "$f" "$DB" 2>"$tmp/pgbench.err" | awk '/^tps/ {printf "%.0f", $3}' || cat "$tmp/pgbench.err" >&2
}

echo
echo "## PutItem tps by number of GSIs: median of $ROUNDS alternating rounds of ${TSECS}s per table"
printf "%-10s %8s %8s %8s %8s %8s\n" clients "0 GSI" "1 GSI" "3 GSIs" "1/0" "3/0"
median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for mode in put:1 put:4 putc:4; do
  p=${mode%:*}; c=${mode#*:}
  for n in 0 1 3; do : > "$tmp/r$n"; done
  for ((r = 0; r < ROUNDS; r++)); do
    for n in 0 1 3; do SECS=$TSECS tps "$tmp/$p$n.sql" "$c" >> "$tmp/r$n"; echo >> "$tmp/r$n"; drain $n; done
  done
  t0=$(median < "$tmp/r0"); t1=$(median < "$tmp/r1"); t3=$(median < "$tmp/r3")
  label=$c; [ "$p" = putc ] && label="$c (full)"
  printf "%-10s %8s %8s %8s %8s %8s\n" "$label" "$t0" "$t1" "$t3" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b / a}')" "$(awk -v a="$t0" -v b="$t3" 'BEGIN {printf "%.2f", b / a}')"
done
echo "(full: with ReturnConsumedCapacity, i.e. the full write path - read the old item under lock - on every table)"

echo
echo "## Propagation lag (ms, PutItem commit -> GSI entry commit; gsi1), $CLIENTS clients, ${SECS}s"
printf "%-6s %6s %8s %8s %8s %8s %8s %8s\n" table load rate tps changes p50 p99 max
for n in 1 3; do
  rels=$(q -F' ' -c "SELECT t.storage, i.storage FROM dynindex.tables t JOIN dynindex.indexes i USING (table_name)
                     WHERE table_name = 'Gsi$n' AND index_name = 'gsi1'")
  base=${rels% *}; gsi=${rels#* }
  max=$(tps "$tmp/put$n.sql" "$CLIENTS"); drain $n
  for pct in 50 100; do
    rate=$(( max * pct / 100 ))
    start=$(q -c "SELECT extract(epoch FROM clock_timestamp())")
    got=$(tps "$tmp/put$n.sql" "$CLIENTS" --rate="$rate"); drain $n
    q -F' ' -c "SELECT count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY lag_ms)::numeric, 1),
                       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY lag_ms)::numeric, 1), round(max(lag_ms)::numeric, 1)
                  FROM (SELECT extract(epoch FROM pg_xact_commit_timestamp(g.xmin) - pg_xact_commit_timestamp(b.xmin)) * 1000 AS lag_ms
                          FROM $gsi g JOIN $base b ON b.pk = g.pk AND b.sk = g.sk
                         WHERE (g.item->'ts'->>'N')::numeric >= $start) l" |
      { read -r cnt p50 p99 mx; printf "%-6s %5s%% %8s %8s %8s %8s %8s %8s\n" "Gsi$n" $pct "$rate" "$got" "$cnt" "$p50" "$p99" "$mx"; }
  done
done

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
