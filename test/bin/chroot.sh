#!/usr/bin/env bash
# `make test` for another PostgreSQL major, against that major's real server: inside a
# Debian root file system made with debootstrap from Debian's archive, whose own
# `postgresql` package brings the major (trixie: 17, sid: 18; bookworm: 15).
#
#   test/bin/chroot.sh DIST            prepare (first time) and run `make test` inside
#   test/bin/chroot.sh DIST --prepare  only make / update the root file system
#
# The root file systems are kept in DYNINDEX_CHROOT_CACHE (default
# /var/cache/dynindex/chroots/DIST) with every build and test dependency installed
# (test/bin/deps.sh run inside, and Citus from ../shared/vendor/citus where that
# Citus supports the major), so a second run only copies the tree and runs the suites.
# DYNINDEX_SUITES, DYNINDEX_REGRESS and PROVE_TESTS (suites.sh) select suites and tests
# as on the host; DYNINDEX_KEEP_WORK=1 keeps the test tree (in the root file system's
# /tmp) as test-all.sh does.  Root only (debootstrap, chroot, mount).  Prints
# `make test`'s summary; exit status is make test's.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DIST="${1:?usage: chroot.sh DIST [--prepare]}"
MODE="${2:-run}"
CACHE="${DYNINDEX_CHROOT_CACHE:-/var/cache/dynindex/chroots}"
MIRROR="${DYNINDEX_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
R="$CACHE/$DIST"
CITUS_DIR="$ROOT/../shared/vendor/citus"
DI_NO_DETECT=1 . "$HERE/common.sh"    # DI_CITUS_MAJORS; the major is the root file system's

log() { printf '==> [%s] %s\n' "$DIST" "$*"; }
die() { printf 'ERROR: [%s] %s\n' "$DIST" "$*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "chroot.sh needs root (debootstrap, chroot, mount)"
case "$DIST" in bookworm|trixie|forky|sid) ;; *) die "unknown Debian distribution '$DIST' (bookworm, trixie, sid)" ;; esac

# One run per root file system at a time (they share its mounts and /srv).
mkdir -p "$CACHE"
exec 8>"$CACHE/$DIST.lock"
flock -w 3600 8 || die "another run held $CACHE/$DIST.lock for an hour"

mounted=()
unmount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -R "${mounted[$i]}" 2>/dev/null || umount -R -l "${mounted[$i]}" 2>/dev/null || true
    done
    mounted=()
}
trap unmount_all EXIT
mount_all() {
    local d
    for d in proc sys dev; do
        mountpoint -q "$R/$d" && umount -R -l "$R/$d"
    done
    mount -t proc proc "$R/proc" && mounted+=("$R/proc")
    mount --rbind /sys "$R/sys" && mount --make-rslave "$R/sys" && mounted+=("$R/sys")
    mount --rbind /dev "$R/dev" && mount --make-rslave "$R/dev" && mounted+=("$R/dev")
    cp -L /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
}
# Run a command inside, as root, with a clean environment, without the lock files'
# descriptors (a process left behind by a killed run — a test's S3 server — held the
# root file system's lock and the next run waited for it until its timeout).  PROVE_TESTS,
# DYNINDEX_REGRESS and DYNINDEX_KEEP_WORK go in only when set (the Makefile's
# `PROVE_TESTS ?=` takes an empty one as set: no TAP test would run).
inside() {
    local sel=() v
    for v in PROVE_TESTS DYNINDEX_REGRESS DYNINDEX_KEEP_WORK; do
        [ -n "${!v:-}" ] && sel+=("$v=${!v}")
    done
    chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive CI="${CI:-}" \
        NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
        DYNINDEX_SUITES="${DYNINDEX_SUITES:-}" ${sel[@]+"${sel[@]}"} "$@" 7>&- 8>&-
}
# The archive a machine reaches may be a dated copy whose Release file of sid has
# expired: apt still checks its signatures, not its date.
valid_until() { echo 'Acquire::Check-Valid-Until "false";' > "$R/etc/apt/apt.conf.d/99dynindex-valid-until"; }
# The certificate authorities this machine added to its own (a proxy's, say), so
# that npm inside reaches the registry as it does outside.
local_cas() {
    local f n=0
    for f in /usr/local/share/ca-certificates/*.crt; do
        [ -f "$f" ] || continue
        mkdir -p "$R/usr/local/share/ca-certificates"; cp "$f" "$R/usr/local/share/ca-certificates/"; n=$((n + 1))
    done
    [ "$n" -eq 0 ] || inside update-ca-certificates >/dev/null 2>&1 || true
}
major_inside() {
    local m
    for m in "$R"/usr/lib/postgresql/*/bin/postgres; do
        [ -x "$m" ] && { m="${m#"$R"/usr/lib/postgresql/}"; echo "${m%%/*}"; return 0; }
    done
    return 1
}

# ---- the root file system (once; kept in the cache) ----
if [ ! -f "$R/.dynindex-ready" ]; then
    command -v debootstrap >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q debootstrap >/dev/null; } \
        || die "debootstrap is not installed and could not be installed"
    log "debootstrap $DIST from $MIRROR into $R (first run only; a few minutes)"
    rm -rf "$R"; mkdir -p "$CACHE"
    debootstrap --variant=minbase --include=ca-certificates,postgresql-common "$DIST" "$R" "$MIRROR" \
        > "$CACHE/$DIST.debootstrap.log" 2>&1 || { tail -n 30 "$CACHE/$DIST.debootstrap.log"; rm -rf "$R"; die "debootstrap failed"; }
    # no services started by package scripts; no cluster made by postgresql-NN's
    printf '#!/bin/sh\nexit 101\n' > "$R/usr/sbin/policy-rc.d"; chmod 755 "$R/usr/sbin/policy-rc.d"
    sed -i 's/^#\?\s*create_main_cluster.*/create_main_cluster = false/' "$R/etc/postgresql-common/createcluster.conf"
    echo "deb $MIRROR $DIST main" > "$R/etc/apt/sources.list"
    mount_all
    valid_until
    log "installing the distribution's PostgreSQL"
    { inside apt-get update -q && inside apt-get install -y -q --no-install-recommends postgresql sudo; } \
        > "$CACHE/$DIST.apt.log" 2>&1 || { tail -n 30 "$CACHE/$DIST.apt.log"; die "apt-get install postgresql failed"; }
    touch "$R/.dynindex-ready"
else
    mount_all
    valid_until
fi
local_cas
MAJOR="$(major_inside)" || die "no PostgreSQL server in $R"
log "PostgreSQL $MAJOR in $R"

# ---- the tree, and what it needs (deps.sh: nothing to do when all is there) ----
rm -rf "$R/srv/dynindex" "$R/srv/shared"
mkdir -p "$R/srv/dynindex"
tar -C "$ROOT" --exclude=./.git --exclude=./.run --exclude=./deb --exclude='*.o' --exclude='*.so' \
    --exclude=./src/gateway/dynindex-gateway --exclude='./tmp_check*' --exclude=node_modules \
    --exclude=./results --exclude=./output_iso --exclude=./log -cf - . | tar -C "$R/srv/dynindex" -xf -
inside env PG_MAJOR="$MAJOR" bash /srv/dynindex/test/bin/deps.sh || die "installing the dependencies failed"
if [ -f "$CITUS_DIR/build.sh" ]; then
    if [[ " $DI_CITUS_MAJORS " == *" $MAJOR "* ]]; then
        mkdir -p "$R/srv/shared/vendor"
        cp -a "$CITUS_DIR" "$R/srv/shared/vendor/"
        log "Citus for PostgreSQL $MAJOR (../shared/vendor/citus/build.sh; does nothing when installed)"
        inside env PG_CONFIG="/usr/lib/postgresql/$MAJOR/bin/pg_config" timeout 1200 bash /srv/shared/vendor/citus/build.sh 2>&1 | tail -n 3 \
            || log "building Citus failed: the citus suite will say so"
    else
        log "Citus: the vendored Citus supports PostgreSQL ${DI_CITUS_MAJORS// /, }, not $MAJOR: the citus suite is skipped"
    fi
fi
[ "$MODE" = --prepare ] && { log "ready"; exit 0; }

# ---- a dynindex library of another major, for TAP 095 ----
# (PostgreSQL refuses a library of another major; never a crash).  sid's is built
# in the trixie root file system (17: every symbol resolves in 18, so the magic
# block speaks); the others' with this machine's own PostgreSQL (15).
FOREIGN_ENV=()
srcs_tar() {
    tar -C "$ROOT" --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' -cf - src Makefile dynindex.control sql
}
foreign_from_chroot() {  # OTHER: build in $CACHE/OTHER; prints its major
    local o="$CACHE/$1" m rc
    [ -f "$o/.dynindex-ready" ] || return 1
    exec 7>"$CACHE/$1.lock"; flock -w 20 7 || return 1    # busy: the host's major will do
    m="$(ls "$o"/usr/lib/postgresql/ 2>/dev/null | sort -n | tail -n 1)"
    [ -n "$m" ] && [ "$m" != "$MAJOR" ] || { exec 7>&-; return 1; }
    rm -rf "$o/srv/foreign-build"; mkdir -p "$o/srv/foreign-build"
    srcs_tar | tar -C "$o/srv/foreign-build" -xf -
    mount --rbind /dev "$o/dev" && mount --make-rslave "$o/dev"
    chroot "$o" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        make -s -C /srv/foreign-build -j2 PG_CONFIG="/usr/lib/postgresql/$m/bin/pg_config" with_llvm=no dynindex.so \
        >"$CACHE/foreign-$1.log" 2>&1
    rc=$?
    umount -R -l "$o/dev"
    [ "$rc" -eq 0 ] && mkdir -p "$R/srv/foreign" && cp "$o/srv/foreign-build/dynindex.so" "$R/srv/foreign/dynindex.so"
    rm -rf "$o/srv/foreign-build"
    exec 7>&-
    [ "$rc" -eq 0 ] && echo "$m"
}
foreign_from_host() {  # prints its major
    local pgc hm fw rc
    for pgc in /usr/lib/postgresql/*/bin/pg_config; do
        [ -x "$pgc" ] && [ -f "$("$pgc" --includedir-server)/postgres.h" ] || continue
        hm="$("$pgc" --version | awk '{print $2}')"; hm="${hm%%.*}"
        [ "$hm" != "$MAJOR" ] || continue
        fw="$(mktemp -d)"
        srcs_tar | tar -C "$fw" -xf -
        make -s -C "$fw" -j2 PG_CONFIG="$pgc" with_llvm=no dynindex.so >"$CACHE/foreign-host.log" 2>&1; rc=$?
        [ "$rc" -eq 0 ] && mkdir -p "$R/srv/foreign" && cp "$fw/dynindex.so" "$R/srv/foreign/dynindex.so"
        rm -rf "$fw"
        [ "$rc" -eq 0 ] && { echo "$hm"; return 0; }
        return 1
    done
    return 1
}
rm -rf "$R/srv/foreign"
fm=""
[ "$DIST" = sid ] && fm="$(foreign_from_chroot trixie)"
[ -n "$fm" ] || fm="$(foreign_from_host)"
if [ -n "$fm" ]; then
    chmod -R a+rX "$R/srv/foreign"
    FOREIGN_ENV=(DYNINDEX_FOREIGN_LIB=/srv/foreign/dynindex.so DYNINDEX_FOREIGN_MAJOR="$fm")
    log "dynindex.so of PostgreSQL $fm, for TAP 095"
else
    log "no dynindex.so of another major could be built: TAP 095 will skip (see $CACHE/foreign-*.log)"
fi

# ---- make test, inside ----
log "make test against PostgreSQL $MAJOR"
inside env "${FOREIGN_ENV[@]}" bash -c 'cd /srv/dynindex && make test'
rc=$?
exit "$rc"
