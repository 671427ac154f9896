#!/usr/bin/env bash
# The distributed suite: dynindex on a real Citus cluster (a coordinator and two
# workers on loopback ports, started here), running the regression tests listed in
# test/citus/schedule with the same expected output as on one server.
# Usage: test/citus/run.sh TREE   (run as an unprivileged user; PATH has the bindir)
# Prints "citus: SKIPPED (...)" and exits 3 when Citus is not installed.
set -uo pipefail
TREE="$(cd "${1:?usage: run.sh TREE}" && pwd)"
PGC="${PG_CONFIG:-pg_config}"
BINDIR="$("$PGC" --bindir)"
LIBDIR="$("$PGC" --pkglibdir)"
if [ ! -f "$LIBDIR/citus.so" ]; then
    echo "citus: SKIPPED: Citus is not installed in $LIBDIR (bash ../shared/vendor/citus/build.sh installs it; .ci/run does)"
    exit 3
fi
W="${CITUS_DIR:-$TREE/tmp_check_citus}"
rm -rf "$W"; mkdir -p "$W"
# three free ports
ports=()
for p in $(seq "${CITUS_PORT_BASE:-57300}" $(( ${CITUS_PORT_BASE:-57300} + 99 ))); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
    ports+=("$p"); [ "${#ports[@]}" -eq 3 ] && break
done
stop_all() {
    for i in 0 1 2; do "$BINDIR/pg_ctl" -D "$W/n$i" -m immediate -w stop >/dev/null 2>&1 || true; done
}
[ "${CITUS_KEEP:-0}" = 1 ] || trap stop_all EXIT   # CITUS_KEEP=1: leave the cluster running
psqln() { local port="$1"; shift; "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres "$@"; }
for i in 0 1 2; do
    "$BINDIR/initdb" -D "$W/n$i" -U postgres -A trust -E UTF8 --locale=C >"$W/initdb$i.log" 2>&1 || { cat "$W/initdb$i.log"; exit 1; }
    { grep -v '^shared_preload_libraries' "$TREE/test/dynindex.conf"
      echo "shared_preload_libraries = 'citus,dynindex'"
      echo "listen_addresses = '127.0.0.1'"; echo "port = ${ports[$i]}"
      echo "unix_socket_directories = '$W'"
      echo "max_prepared_transactions = 50"
      echo "citus.shard_count = 4"
      echo "dynindex.distributed = on"; } >> "$W/n$i/postgresql.conf"
    "$BINDIR/pg_ctl" -D "$W/n$i" -l "$W/n$i.log" -w -t 60 start >/dev/null || { tail -20 "$W/n$i.log"; exit 1; }
    for db in regression cluster; do
        psqln "${ports[$i]}" -d postgres -c "CREATE DATABASE $db" || exit 1
        psqln "${ports[$i]}" -d $db -c "CREATE EXTENSION citus" || exit 1
    done
done
for db in regression cluster; do
    psqln "${ports[0]}" -d $db -c "SELECT citus_set_coordinator_host('127.0.0.1', ${ports[0]})" \
        -c "SELECT citus_add_node('127.0.0.1', ${ports[1]})" -c "SELECT citus_add_node('127.0.0.1', ${ports[2]})" \
        -c "CREATE EXTENSION dynindex" >/dev/null || exit 1
done
echo "Citus cluster: coordinator 127.0.0.1:${ports[0]}, workers :${ports[1]} :${ports[2]}"
cd "$TREE" || exit 1
REG=("$("$PGC" --pkglibdir)/pgxs/src/test/regress/pg_regress" --use-existing --host=127.0.0.1
     --port="${ports[0]}" --user=postgres --bindir="$BINDIR")
rc=0
# 1. the cluster's own test (in a database of its own, so shard ids are stable)
"${REG[@]}" --dbname=cluster --inputdir="$TREE/test/citus" --outputdir="$W/cluster" citus_cluster citus_security || rc=1
# 2. the single-server regression tests that hold cluster-wide, same expected output
tests=$(grep -v '^#' "$TREE/test/citus/schedule" | tr '\n' ' ')
"${REG[@]}" --dbname=regression --inputdir="$TREE" --outputdir="$W/shared" $tests || rc=1
exit $rc
