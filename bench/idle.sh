#!/bin/bash
# Idle cost of dynindex's background workers (issue #23 item 10): a private
# server with DBS databases (default 100), each with dynindex and TABLES tables
# (default 20: every 4th with a stream, every 5th with a GSI, every 10th with
# Time to Live), a few items each, and no traffic.  After a restart (so the
# launcher starts a worker for every database) and WARMUP seconds, it reads the
# CPU time (utime + stime in /proc/<pid>/stat) of the launcher and the
# per-database workers over MEASURE seconds and prints it as a share of one core.
# Usage: bench/idle.sh   (PG_CONFIG selects the PostgreSQL, with dynindex installed)
# Environment: DBS (100), TABLES (20), WARMUP (30), MEASURE (60), PG_CONFIG (pg_config),
#   KEEP=1 keeps the data directory.  Settings are dynindex's defaults
#   (worker_naptime 1 s, ttl_interval 60 s, stream_maintenance_interval 5 s).
set -euo pipefail
DBS=${DBS:-100}
TABLES=${TABLES:-20}
WARMUP=${WARMUP:-30}
MEASURE=${MEASURE:-60}
BIN=$("${PG_CONFIG:-pg_config}" --bindir)
DIR=$(mktemp -d "${TMPDIR:-/tmp}/dynindex-idle.XXXXXX")
PORT=$((20000 + RANDOM % 20000))
RUN=()
if [ "$(id -u)" = 0 ]; then   # initdb refuses root: run the server as postgres
	chown postgres: "$DIR"
	RUN=(runuser -u postgres --)
fi
cleanup() {
	"${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
	[ "${KEEP:-0}" = 1 ] || rm -rf "$DIR"
}
trap cleanup EXIT
PSQL=("${RUN[@]}" "$BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$DIR" -p "$PORT")

"${RUN[@]}" "$BIN/initdb" -D "$DIR/data" -A trust >/dev/null
cat >> "$DIR/data/postgresql.conf" <<EOF
port = $PORT
listen_addresses = ''
unix_socket_directories = '$DIR'
shared_preload_libraries = 'dynindex'
max_worker_processes = $((DBS + 16))
max_connections = $((DBS + 50))
shared_buffers = 256MB
EOF
"${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w start >/dev/null

# one database's tables: pk/sk, some with a stream, a GSI or TTL, 10 items each
tables_sql() {
	local t spec
	for ((t = 1; t <= TABLES; t++)); do
		spec=""
		if ((t % 4 == 0)); then spec="$spec,\"StreamSpecification\":{\"StreamEnabled\":true,\"StreamViewType\":\"NEW_AND_OLD_IMAGES\"}"; fi
		if ((t % 5 == 0)); then spec="$spec,\"GlobalSecondaryIndexes\":[{\"IndexName\":\"bySk\",\"KeySchema\":[{\"AttributeName\":\"sk\",\"KeyType\":\"HASH\"}],\"Projection\":{\"ProjectionType\":\"ALL\"}}]"; fi
		cat <<SQL
SELECT dynindex.api('CreateTable', '{"TableName":"Tbl$t","BillingMode":"PAY_PER_REQUEST",
  "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"}],
  "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]$spec}') IS NOT NULL;
SELECT count(dynindex.api('PutItem', jsonb_build_object('TableName', 'Tbl$t', 'Item', jsonb_build_object(
  'pk', jsonb_build_object('S', 'p' || i), 'sk', jsonb_build_object('S', 's' || i),
  'exp', jsonb_build_object('N', (extract(epoch FROM now())::bigint + 86400)::text))))) FROM generate_series(1, 10) i;
SQL
		if ((t % 10 == 0)); then echo "SELECT dynindex.api('UpdateTimeToLive', '{\"TableName\":\"Tbl$t\",\"TimeToLiveSpecification\":{\"Enabled\":true,\"AttributeName\":\"exp\"}}') IS NOT NULL;"; fi
	done
}
echo "creating $DBS databases with $TABLES tables each..." >&2
tables_sql > "$DIR/tables.sql"
chmod 644 "$DIR/tables.sql"
for ((d = 1; d <= DBS; d++)); do
	"${PSQL[@]}" -d postgres -c "CREATE DATABASE idle_$d" >/dev/null
	"${PSQL[@]}" -d "idle_$d" -c "CREATE EXTENSION dynindex" >/dev/null
	"${PSQL[@]}" -d "idle_$d" -f "$DIR/tables.sql" >/dev/null
done
"${RUN[@]}" "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w restart >/dev/null
PM=$(head -1 "$DIR/data/postmaster.pid")
echo "restarted; idling $WARMUP s before measuring $MEASURE s..." >&2
sleep "$WARMUP"

# CPU ticks of processes, and the dynindex processes of this server
ticks() { local sum=0 p f; for p in "$@"; do
	f=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null) || continue
	set -- $f; sum=$((sum + ${12} + ${13})); done; echo "$sum"; }
mapfile -t P < <(for p in $(pgrep -P "$PM"); do
	case "$( { tr '\0' ' ' < "/proc/$p/cmdline"; } 2>/dev/null)" in *"dynindex worker"*|*"dynindex launcher"*) echo "$p" ;; esac; done)
workers=$(for p in "${P[@]}"; do tr '\0' ' ' < "/proc/$p/cmdline"; echo; done | grep -c 'dynindex worker' || true)
t0=$(ticks "${P[@]}"); s0=$(date +%s.%N)
sleep "$MEASURE"
t1=$(ticks "${P[@]}"); s1=$(date +%s.%N)
hz=$(getconf CLK_TCK)
awk -v t="$((t1 - t0))" -v hz="$hz" -v s0="$s0" -v s1="$s1" -v n="$workers" -v dbs="$DBS" -v tables="$TABLES" 'BEGIN {
	cpu = t / hz; el = s1 - s0;
	printf "%d databases x %d tables, %d dynindex workers (+ launcher): %.2f CPU-s in %.0f s = %.3f%% of one core (%.4f%% per worker)\n",
		dbs, tables, n, cpu, el, 100 * cpu / el, (n > 0 ? 100 * cpu / el / n : 0) }'
