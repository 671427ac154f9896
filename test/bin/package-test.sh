#!/usr/bin/env bash
# The package test (`make test` runs it last, as root): build the Debian packages
# (test/bin/deb.sh), install them with `apt-get install ./...deb`, start a fresh
# PostgreSQL cluster that loads the packaged extension, start dynindex-gateway from
# the packaged systemd unit's ExecStart= as the unit's user (systemd need not be
# running: test/bin/run_unit.py reads the unit and its EnvironmentFile), run the
# boto3 smoke test through it (dev mode and SigV4), then `apt-get purge` both
# packages and check that the program, the unit, /etc/dynindex and the system user
# are gone.
#
# Leaves the machine as it found it: postgresql-NN-dynindex (NN: the major that
# common.sh found) installs into the system PostgreSQL (/usr/lib/postgresql/NN), where `make install` (and `make test`
# without PG_CONFIG) puts the build; files of the package that existed before and
# belong to no package are saved first and put back after the purge.  One package
# test at a time per machine (flock on /var/lock/dynindex-package-test.lock).
# If either package is already installed, the test does nothing and says SKIPPED.
#
# Usage: package-test.sh TREE   (run as root; prints "RESULT: PASS|FAIL|SKIPPED <detail>" last)
set -uo pipefail
TREE="$(cd "${1:?usage: package-test.sh TREE}" && pwd)"
. "$TREE/test/bin/common.sh"
di_is_root || { echo "RESULT: FAIL package-test.sh must run as root (apt-get install)"; exit 1; }

PKGS=("postgresql-$PG_MAJOR-dynindex" dynindex-gateway)
UNIT=/lib/systemd/system/dynindex-gateway.service
CONF=/etc/dynindex/gateway.conf
SVC_USER=_dynindex
W="$(mktemp -d "${TMPDIR:-/tmp}/dynindex-pkgtest.XXXXXX")"
chmod 755 "$W"
checks_ok=0; checks_failed=0
GW_PIDS=()
PG_DATA=""
U="$(di_unpriv_user)"
BIN="/usr/lib/postgresql/$PG_MAJOR/bin"
PY=/usr/bin/python3     # Debian's, with python3-boto3 (not a python3 earlier in root's PATH)

ok()   { checks_ok=$((checks_ok + 1)); echo "ok - $*"; }
bad()  { checks_failed=$((checks_failed + 1)); echo "not ok - $*"; }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
apt_q() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -y -q "$@"; }
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
free_port() {
    local p
    for p in $(seq "$1" "$2"); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
    done
    return 1
}

exec 9>/var/lock/dynindex-package-test.lock
if ! flock -w 1800 9; then echo "RESULT: FAIL another package test held the lock for 30 minutes"; exit 1; fi

for p in "${PKGS[@]}"; do
    if installed "$p"; then
        echo "RESULT: SKIPPED $p is installed on this machine; the test would remove it"
        rm -rf "$W"; exit 0
    fi
done

# ---- 1. build ----
if ! DYNINDEX_DEB_DIR="$W/deb" bash "$TREE/test/bin/deb.sh" > "$W/deb.log" 2>&1; then
    cat "$W/deb.log"; echo "RESULT: FAIL make deb failed"; rm -rf "$W"; exit 1
fi
tail -n 5 "$W/deb.log"
EXT_DEB="$(ls "$W"/deb/postgresql-"$PG_MAJOR"-dynindex_*.deb)"
GW_DEB="$(ls "$W"/deb/dynindex-gateway_*.deb)"
ok "make deb built $(basename "$EXT_DEB") and $(basename "$GW_DEB")"

# ---- 2. save what the packages would overwrite ----
mkdir -p "$W/saved"
: > "$W/saved.list"
for deb in "$EXT_DEB" "$GW_DEB"; do
    dpkg-deb --fsys-tarfile "$deb" | tar -t | sed 's#^\./#/#' | while read -r f; do
        if [ -f "$f" ] || [ -L "$f" ]; then
            dpkg -S "$f" >/dev/null 2>&1 || echo "$f"
        fi
    done >> "$W/saved.list"
done
if [ -s "$W/saved.list" ]; then
    tar -C / -cpf "$W/saved/files.tar" $(sed 's#^/##' "$W/saved.list")
    (cd / && sha256sum $(cat "$W/saved.list")) > "$W/saved/sums"
    echo "# saved $(wc -l < "$W/saved.list") files the packages overwrite (put back after the purge)"
fi
restore_saved() {
    if [ -s "$W/saved.list" ]; then
        tar -C / -xpf "$W/saved/files.tar"
        (cd / && sha256sum --quiet -c "$W/saved/sums")
    fi
}

cleanup() {
    local pid
    for pid in "${GW_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${GW_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
    if [ -n "$PG_DATA" ] && [ -f "$PG_DATA/postmaster.pid" ]; then
        runuser -u "$U" -- "$BIN/pg_ctl" -D "$PG_DATA" -m immediate -w stop >/dev/null 2>&1
    fi
    for p in "${PKGS[@]}"; do
        if installed "$p" || dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'config-files'; then
            apt_q purge "$p" >/dev/null 2>&1
        fi
    done
    restore_saved >/dev/null 2>&1
    rm -rf "$W"
}
trap cleanup EXIT

# ---- 3. install ----
if ! apt_q install "$EXT_DEB" "$GW_DEB" > "$W/install.log" 2>&1; then
    cat "$W/install.log"; echo "RESULT: FAIL apt-get install of the packages failed"; exit 1
fi
ok "apt-get install ./$(basename "$EXT_DEB") ./$(basename "$GW_DEB")"
check "the extension is in the system PostgreSQL" test -f "/usr/share/postgresql/$PG_MAJOR/extension/dynindex.control"
check "the in-server endpoint module is in the system PostgreSQL" test -f "/usr/lib/postgresql/$PG_MAJOR/lib/dynindex_http.so"
check "the program is /usr/bin/dynindex-gateway" test -x /usr/bin/dynindex-gateway
check "the systemd unit is installed" test -f "$UNIT"
check "the system user $SVC_USER exists (postinst)" test -n "$(getent passwd "$SVC_USER")"
check "$CONF is a conffile, root:$SVC_USER 0640" \
    test "$(stat -c '%U:%G %a' "$CONF" 2>/dev/null)" = "root:$SVC_USER 640" -a \
         -n "$(dpkg-query -W -f='${Conffiles}' dynindex-gateway | grep "$CONF")"
unit_settings() {
    grep -q "^User=$SVC_USER\$" "$UNIT" && grep -q '^StandardError=journal$' "$UNIT" &&
        grep -q "^EnvironmentFile=$CONF\$" "$UNIT"
}
check "the unit runs as $SVC_USER, logs to the journal and reads $CONF" unit_settings

# ---- 4. a fresh cluster with the packaged extension ----
# Ports: free ones of 55650-55699 (package tests run one at a time); on a shared
# machine another server may take a port between the check and the bind: retry.
PG_DATA="$W/pg"
mkdir -p "$PG_DATA"; chown "$U": "$PG_DATA"
runuser -u "$U" -- "$BIN/initdb" -D "$PG_DATA" -U postgres -A trust -E UTF8 --locale=C > "$W/initdb.log" 2>&1 ||
    { cat "$W/initdb.log"; echo "RESULT: FAIL initdb"; exit 1; }
{ echo "shared_preload_libraries = 'dynindex'"
  echo "listen_addresses = '127.0.0.1'"; echo "unix_socket_directories = '$PG_DATA'"; } >> "$PG_DATA/postgresql.conf"
started=""
for attempt in 1 2 3 4 5; do
    PG_PORT="$(free_port $((55650 + attempt * 3)) 55679)" || break
    echo "port = $PG_PORT" >> "$PG_DATA/postgresql.conf"    # the last setting wins
    if runuser -u "$U" -- "$BIN/pg_ctl" -D "$PG_DATA" -l "$PG_DATA/server.log" -w -t 60 start >/dev/null 9>&-; then
        started=1; break
    fi
done
[ -n "$started" ] || { tail -n 30 "$PG_DATA/server.log"; echo "RESULT: FAIL the cluster did not start"; exit 1; }
PSQL=("$BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres)
"${PSQL[@]}" -d postgres -c "CREATE DATABASE pkgtest" >/dev/null
DEFAULT_VERSION="$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$TREE/dynindex.control")"
check "CREATE EXTENSION dynindex installs the packaged default version $DEFAULT_VERSION (PostgreSQL $PG_MAJOR)" \
    test "$("${PSQL[@]}" -d pkgtest -c "CREATE EXTENSION dynindex" -c "SELECT extversion FROM pg_extension WHERE extname = 'dynindex'")" = "$DEFAULT_VERSION"
read -r KEY_ID SECRET < <("${PSQL[@]}" -d pkgtest -F ' ' -c "SELECT * FROM dynindex.create_access_key('postgres')")

# ---- 5. the gateway from the unit, as the unit's user ----
# start_unit NAME OPTIONS: write the settings an administrator would, start ExecStart
# (sets STARTED_URL; not in a subshell, so that GW_PIDS reaches the cleanup).
start_unit() {
    local name="$1" opts="$2" port attempt
    STARTED_URL=""
    for attempt in 1 2 3; do
        port="$(free_port $((55680 + attempt * 4)) 55699)"
        cat > "$CONF" <<EOF
# written by test/bin/package-test.sh
DYNINDEX_GATEWAY_HOST=127.0.0.1
DYNINDEX_GATEWAY_PORT=$port
DYNINDEX_GATEWAY_DBNAME="host=127.0.0.1 port=$PG_PORT dbname=pkgtest user=postgres"
DYNINDEX_GATEWAY_OPTIONS="$opts"
EOF
        echo "# $name: $("$PY" "$TREE/test/bin/run_unit.py" --print "$UNIT")"
        "$PY" "$TREE/test/bin/run_unit.py" "$UNIT" > "$W/$name.out" 2> "$W/$name.err" 9>&- &
        GW_PIDS+=("$!")
        for _ in $(seq 1 100); do
            grep -q 'listening on' "$W/$name.out" 2>/dev/null && break
            sleep 0.1
        done
        if grep -q 'listening on' "$W/$name.out"; then
            STARTED_URL="http://127.0.0.1:$port"
            return 0
        fi
        cat "$W/$name.out" "$W/$name.err"
    done
}
start_unit dev "--pool-size 2 --dev"; DEV_URL="$STARTED_URL"
check "the gateway started from the unit's ExecStart (dev mode: $DEV_URL)" test -n "$DEV_URL"
gw_user="$(ps -o user= -p "${GW_PIDS[-1]}" 2>/dev/null | tr -d ' ')"
gw_cmd="$(tr '\0' ' ' < "/proc/${GW_PIDS[-1]}/cmdline" 2>/dev/null)"
check "it runs as $SVC_USER (found: ${gw_user:-none}): $gw_cmd" test "$gw_user" = "$SVC_USER"
start_unit auth "--pool-size 2"; AUTH_URL="$STARTED_URL"
check "the gateway started from the unit's ExecStart (SigV4: $AUTH_URL)" test -n "$AUTH_URL"

if [ -n "$DEV_URL" ] && [ -n "$AUTH_URL" ]; then
    if GATEWAY_URL="$DEV_URL" GATEWAY_AUTH_URL="$AUTH_URL" GATEWAY_KEY_ID="$KEY_ID" GATEWAY_SECRET="$SECRET" \
        timeout 300 "$PY" "$TREE/test/clients/boto3_smoke.py"; then
        ok "boto3 smoke test through the packaged gateway"
    else
        bad "boto3 smoke test through the packaged gateway"
        tail -n 20 "$W"/*.err
    fi
fi

for pid in "${GW_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
for pid in "${GW_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
GW_PIDS=()
runuser -u "$U" -- "$BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null 2>&1

# ---- 6. purge, and the machine as it was ----
if apt_q purge "${PKGS[@]}" > "$W/purge.log" 2>&1; then ok "apt-get purge"; else cat "$W/purge.log"; bad "apt-get purge"; fi
for p in "${PKGS[@]}"; do
    check "$p is gone from dpkg" test -z "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -v 'not-installed')"
done
check "/usr/bin/dynindex-gateway removed" test ! -e /usr/bin/dynindex-gateway
check "the unit removed" test ! -e "$UNIT"
check "/etc/dynindex removed on purge" test ! -e /etc/dynindex
check "the system user $SVC_USER removed on purge" test -z "$(getent passwd "$SVC_USER")"
check "the group $SVC_USER removed on purge" test -z "$(getent group "$SVC_USER")"
if [ -s "$W/saved.list" ]; then
    check "the $(wc -l < "$W/saved.list") files the packages replaced are back, unchanged" restore_saved
else
    check "no file of the packages is left" \
        test -z "$(ls "/usr/lib/postgresql/$PG_MAJOR/lib/dynindex.so" "/usr/lib/postgresql/$PG_MAJOR/lib/dynindex_http.so" "/usr/share/postgresql/$PG_MAJOR/extension/dynindex"* 2>/dev/null)"
fi

echo "$checks_ok passed, $checks_failed failed"
if [ "$checks_failed" -eq 0 ]; then
    echo "RESULT: PASS $checks_ok checks (build, install, gateway from the unit, boto3 smoke, purge)"
else
    echo "RESULT: FAIL $checks_failed of $((checks_ok + checks_failed)) checks failed"
    exit 1
fi
