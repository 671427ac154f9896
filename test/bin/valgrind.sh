#!/usr/bin/env bash
# Run regression suites against a server running under valgrind (memcheck) and report
# every error whose stack passes through dynindex.so.  PostgreSQL's own (known, harmless)
# reports are ignored, since Debian ships no suppression file.
#   usage: test/bin/valgrind.sh [suite ...]      (default: every suite with expected output)
# Run it from the tree as the user that owns it (not root); the extension must be installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=$(pg_config --bindir)
work=$(mktemp -d /tmp/dynindex-vg.XXXXXX)
port=${VG_PORT:-55497}
suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
  for f in expected/[0-9]*.out; do b=$(basename "$f" .out); [ -f "sql/$b.sql" ] && suites+=("$b"); done
fi
"$BIN/initdb" -D "$work/data" -A trust --no-sync -E UTF8 --no-locale >/dev/null
# the settings the regression suites run with (make installcheck's --temp-config), then ours
cat test/dynindex.conf >> "$work/data/postgresql.conf"
cat >> "$work/data/postgresql.conf" <<CONF
shared_preload_libraries = 'dynindex'
port = $port
unix_socket_directories = '$work'
listen_addresses = ''
max_connections = 20
CONF
valgrind --quiet --trace-children=yes --track-origins=yes --read-var-info=no --leak-check=no \
  --num-callers=30 --log-file="$work/vg.%p.log" \
  "$BIN/postgres" -D "$work/data" >"$work/server.log" 2>&1 &
for _ in $(seq 1 120); do "$BIN/pg_isready" -h "$work" -p "$port" -q && break; sleep 1; done
status=0
"$(pg_config --pkglibdir)/pgxs/src/test/regress/pg_regress" --host="$work" --port="$port" \
  --inputdir=. --dbname=vg_regression --load-extension=dynindex "${suites[@]}" || status=$?
"$BIN/pg_ctl" -D "$work/data" -m fast stop >/dev/null || true
sleep 2
# keep the reports whose stacks go through dynindex
errors=0
for log in "$work"/vg.*.log; do
  # (WAL writes of struct padding, "pwrite64(buf) points to uninitialised byte(s)", are
  #  PostgreSQL's own known report: its valgrind.supp suppresses them too)
  awk 'BEGIN{RS="==[0-9]+== \n"} /dynindex\.so/ && !/Syscall param pwrite64/ {print; print "----"}' "$log" > "$log.ours" || true
  if [ -s "$log.ours" ]; then cat "$log.ours"; errors=$((errors + 1)); fi
done
echo "valgrind: ${#suites[@]} suites, regression status $status, $errors process(es) with errors in dynindex code (logs: $work)"
[ "$errors" -eq 0 ] && [ "$status" -eq 0 ]
