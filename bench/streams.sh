#!/bin/bash
# Streams cost and read speed, with pgbench against a running server:
#   1. PutItem on a table with a NEW_AND_OLD_IMAGES stream against the same
#      table without one (target: the stream costs at most 20%), alternating
#      the two in ROUNDS short runs so both see the same background load;
#   2. a reader draining RECORDS records (default 100,000) with GetRecords
#      (Limit 1000, following NextShardIterator through every shard), timed.
# Usage: bench/streams.sh [-h host] [-p port] [dbname]   (options common to psql and pgbench)
# Environment: SECONDS_PER_RUN (default 5), ROUNDS (default 3), CLIENTS (default 2),
#   RECORDS (default 100000).
set -euo pipefail
T=${SECONDS_PER_RUN:-5}
R=${ROUNDS:-3}
C=${CLIENTS:-2}
N=${RECORDS:-100000}
PSQL=(psql -X -q -At -v ON_ERROR_STOP=1 "$@")
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

create() {   # create <table> <StreamSpecification JSON or empty>
	"${PSQL[@]}" -c "SELECT dynindex.api('DeleteTable', '{\"TableName\":\"$1\"}')" >/dev/null 2>&1 || true
	"${PSQL[@]}" -c "SELECT dynindex.api('CreateTable', '{\"TableName\":\"$1\",\"BillingMode\":\"PAY_PER_REQUEST\",
	  \"AttributeDefinitions\":[{\"AttributeName\":\"pk\",\"AttributeType\":\"S\"},{\"AttributeName\":\"sk\",\"AttributeType\":\"S\"}],
	  \"KeySchema\":[{\"AttributeName\":\"pk\",\"KeyType\":\"HASH\"},{\"AttributeName\":\"sk\",\"KeyType\":\"RANGE\"}]${2:+,\"StreamSpecification\":$2}}') IS NOT NULL" >/dev/null
}
create BenchStreamOff ""
create BenchStreamOn '{"StreamEnabled":true,"StreamViewType":"NEW_AND_OLD_IMAGES"}'

# PutItem of ~200-byte items, 1000 partitions x 1000 sort keys, a random value each time
# (so every put changes the item and writes a record: INSERT, later MODIFY with both images)
for t in Off On; do
	cat > "$DIR/put$t.sql" <<SQL
\\set p random(1, 1000)
\\set s random(1, 1000)
\\set r random(1, 1000000)
SELECT dynindex.api('PutItem', jsonb_build_object('TableName', 'BenchStream$t', 'Item', jsonb_build_object(
  'pk', jsonb_build_object('S', 'P' || :p), 'sk', jsonb_build_object('S', 'S' || :s),
  'v', jsonb_build_object('N', :r::text), 'body', jsonb_build_object('S', repeat('b', 150)))));
SQL
done

pgb() {   # pgb <script> -> tps
	local f=$1; shift; pgbench -n -T "$T" -c "$C" -j "$C" -f "$f" "$@" 2>/dev/null | awk '/^tps/ { print int($3); exit }'; }

off=0; on=0
for ((i = 1; i <= R; i++)); do
	a=$(pgb "$DIR/putOff.sql" "$@"); b=$(pgb "$DIR/putOn.sql" "$@")
	echo "round $i: without stream $a tps, with NEW_AND_OLD_IMAGES stream $b tps" >&2
	off=$((off + a)); on=$((on + b))
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

# The reader: RECORDS records in a fresh stream (one INSERT each, ~200 bytes), then
# GetRecords from TRIM_HORIZON through every shard, in one session, timed by the server.
create BenchStreamRead '{"StreamEnabled":true,"StreamViewType":"NEW_AND_OLD_IMAGES"}'
"${PSQL[@]}" -c "SELECT count(dynindex.api('BatchWriteItem', jsonb_build_object('RequestItems', jsonb_build_object('BenchStreamRead',
  (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object(
     'pk', jsonb_build_object('S', 'P' || (b * 25 + i) % 5000), 'sk', jsonb_build_object('S', 'S' || (b * 25 + i)),
     'body', jsonb_build_object('S', repeat('b', 150))))))
   FROM generate_series(0, 24) i)))))
  FROM generate_series(0, ($N / 25) - 1) b" >/dev/null
notice=$("${PSQL[@]}" 2>&1 <<'SQL'
DO $$
DECLARE arn text := dynindex.api('DescribeTable', '{"TableName": "BenchStreamRead"}') #>> '{Table,LatestStreamArn}';
  sh jsonb; it text; r jsonb; n bigint := 0; calls int := 0; t0 timestamptz := clock_timestamp();
BEGIN
  FOR sh IN SELECT jsonb_array_elements(dynindex.api('DescribeStream', jsonb_build_object('StreamArn', arn)) #> '{StreamDescription,Shards}') LOOP
    it := dynindex.api('GetShardIterator', jsonb_build_object('StreamArn', arn, 'ShardId', sh ->> 'ShardId',
      'ShardIteratorType', 'TRIM_HORIZON')) ->> 'ShardIterator';
    LOOP
      r := dynindex.api('GetRecords', jsonb_build_object('ShardIterator', it, 'Limit', 1000));
      calls := calls + 1;
      n := n + jsonb_array_length(r -> 'Records');
      EXIT WHEN jsonb_array_length(r -> 'Records') = 0 OR NOT r ? 'NextShardIterator';
      it := r ->> 'NextShardIterator';
    END LOOP;
  END LOOP;
  RAISE NOTICE '% % %', n, calls, round(extract(epoch FROM clock_timestamp() - t0) * 1000);
END $$;
SQL
)
read -r n calls ms < <(echo "$notice" | sed -n 's/^NOTICE:  //p')
for t in Off On Read; do
	"${PSQL[@]}" -c "SELECT dynindex.api('DeleteTable', '{\"TableName\":\"BenchStream$t\"}')" >/dev/null 2>&1 || true
done

echo "| workload | tps | relative |"
echo "|---|---|---|"
echo "| PutItem, no stream ($R x ${T}s, $C clients) | $((off / R)) | 1.00 |"
echo "| PutItem, NEW_AND_OLD_IMAGES stream | $((on / R)) | $(ratio "$on" "$off") |"
echo
echo "GetRecords drain: $n records in $calls calls, $ms ms: $(awk -v n="$n" -v ms="$ms" 'BEGIN { if (ms > 0) printf "%d", n * 1000 / ms }') records/s"
