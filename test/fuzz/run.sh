#!/usr/bin/env bash
# Run the request fuzzer (api_fuzz.py) against a scratch PostgreSQL with the
# installed dynindex: initdb in a private directory (Unix socket only), start,
# CREATE EXTENSION, fuzz, stop.  Exit status: the fuzzer's (0: no BUG, no CRASH).
# The directory (server log, failures.jsonl) is removed after a clean run and
# kept otherwise (FUZZ_KEEP=1 always keeps it).  Never as root (initdb refuses).
#
# Usage: test/fuzz/run.sh [api_fuzz.py options]      (default: --seed 1 --count 20000)
#   e.g. test/fuzz/run.sh --seed 7 --duration 600 --feedback --progress 50000
# Environment: FUZZ_DIR (default: a new /tmp/dynindex-fuzz.XXXXXX), FUZZ_PORT (5493),
#              PG_CONFIG.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$HERE/../bin/common.sh"
di_is_root && di_die "run.sh must not run as root (initdb refuses): runuser -u postgres -- bash $0 $*"

PGC="$(di_pg_config)"
BINDIR="$("$PGC" --bindir)"
PY=""
for p in /usr/bin/python3 python3; do
    if "$p" -c 'import psycopg2' >/dev/null 2>&1; then PY="$p"; break; fi
done
[ -n "$PY" ] || di_die "api_fuzz.py needs psycopg2: apt-get install python3-psycopg2"
[ $# -gt 0 ] || set -- --seed 1 --count 20000

DIR="${FUZZ_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/dynindex-fuzz.XXXXXX")}"
PORT="${FUZZ_PORT:-5493}"
mkdir -p "$DIR"
rm -rf "$DIR/data"
if ! "$BINDIR/initdb" -D "$DIR/data" -U postgres -A trust -E UTF8 --locale=C >"$DIR/initdb.log" 2>&1; then
    cat "$DIR/initdb.log"; exit 2
fi
{ cat "$HERE/../dynindex.conf"
  echo "listen_addresses = ''"
  echo "port = $PORT"
  echo "unix_socket_directories = '$DIR'"
  echo "restart_after_crash = on"
} >> "$DIR/data/postgresql.conf"
"$BINDIR/pg_ctl" -D "$DIR/data" -l "$DIR/postgresql.log" -w -t 60 start >/dev/null || {
    tail -n 40 "$DIR/postgresql.log"; exit 2; }
rc=2
if "$BINDIR/psql" -X -q -h "$DIR" -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -c "CREATE DATABASE fuzz" &&
   "$BINDIR/psql" -X -q -h "$DIR" -p "$PORT" -U postgres -d fuzz -v ON_ERROR_STOP=1 -c "CREATE EXTENSION dynindex"; then
    "$PY" -B "$HERE/api_fuzz.py" --dsn "host=$DIR port=$PORT dbname=fuzz user=postgres" \
        --server-log "$DIR/postgresql.log" --out "$DIR/failures.jsonl" "$@"
    rc=$?
    # hostile import files (ImportTable's readers): import_fuzz.py
    if [ "$rc" -eq 0 ]; then
        "$PY" -B "$HERE/import_fuzz.py" --dsn "host=$DIR port=$PORT dbname=fuzz user=postgres" \
            --server-log "$DIR/postgresql.log" --seed 1 --files 40
        rc=$?
    fi
fi
"$BINDIR/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null 2>&1 || true
if [ "$rc" -eq 0 ] && [ "${FUZZ_KEEP:-0}" != 1 ]; then
    rm -rf "$DIR"
else
    echo "(fuzz directory kept: $DIR; failing requests in $DIR/failures.jsonl," \
         "replay: api_fuzz.py --dsn ... --replay $DIR/failures.jsonl)"
fi
exit "$rc"
