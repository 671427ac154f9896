#!/usr/bin/env bash
# The README's first command on a fresh Debian, as a newcomer runs it: a new
# minimal root file system of DIST (debootstrap --variant=minbase, plus make and
# sudo) with the distribution's PostgreSQL installed, the tree copied in, and `make
# run` run as root or as a sudo user (who may
# run sudo without a password, as CI's users do).  Then the endpoint on
# 127.0.0.1:8000 must answer ListTables, and `make stop` must stop it.
#
#   test/bin/fresh.sh DIST root|sudo      (root only: debootstrap, chroot, mount)
#
# The root file system is thrown away afterwards; the debootstrap download is kept
# as a tarball in DYNINDEX_CHROOT_CACHE (/var/cache/dynindex/chroots) so that a
# second run does not fetch the base system again.  Not part of .ci/run (it
# downloads and installs every dependency: about ten minutes); docs/versions.md
# records its runs.  It uses the ports `make run` uses (5433, 8000): run it where
# nothing else listens there.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DIST="${1:?usage: fresh.sh DIST root|sudo}"
AS="${2:?usage: fresh.sh DIST root|sudo}"
CACHE="${DYNINDEX_CHROOT_CACHE:-/var/cache/dynindex/chroots}"
MIRROR="${DYNINDEX_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
[ "$(id -u)" -eq 0 ] || { echo "fresh.sh needs root"; exit 1; }
case "$AS" in root|sudo) ;; *) echo "second argument: root or sudo"; exit 1 ;; esac
R="$(mktemp -d /var/tmp/dynindex-fresh.XXXXXX)"; chmod 755 "$R"   # its / for the chroot
mounted=()
cleanup() {
    local i
    # `make stop` stops what `make run` started (never pkill: the PID namespace is the host's)
    [ -n "${AS_USER_READY:-}" ] && as_user 'make stop </dev/null' >/dev/null 2>&1
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -R -l "${mounted[$i]}" 2>/dev/null || true; done
    rm -rf "$R"
}
trap cleanup EXIT
log() { printf '==> [fresh %s, %s] %s\n' "$DIST" "$AS" "$*"; }

mkdir -p "$CACHE"
tarball="$CACHE/$DIST-minbase.tgz"
if [ ! -f "$tarball" ]; then
    log "downloading the base system (kept in $tarball)"
    debootstrap --variant=minbase --include=make,sudo,ca-certificates --make-tarball="$tarball" \
        "$DIST" "$R/tmp-dl" "$MIRROR" >"$R.log" 2>&1 || { tail -n 20 "$R.log"; exit 1; }
    rm -rf "$R/tmp-dl"
fi
log "debootstrap (minbase + make, sudo) into $R"
debootstrap --variant=minbase --include=make,sudo,ca-certificates --unpack-tarball="$tarball" \
    "$DIST" "$R" "$MIRROR" >"$R.log" 2>&1 || { tail -n 20 "$R.log"; exit 1; }
rm -f "$R.log"
echo "deb $MIRROR $DIST main" > "$R/etc/apt/sources.list"
echo 'Acquire::Check-Valid-Until "false";' > "$R/etc/apt/apt.conf.d/99dynindex-valid-until"
printf '#!/bin/sh\nexit 101\n' > "$R/usr/sbin/policy-rc.d"; chmod 755 "$R/usr/sbin/policy-rc.d"
mount -t proc proc "$R/proc" && mounted+=("$R/proc")
mount --rbind /dev "$R/dev" && mount --make-rslave "$R/dev" && mounted+=("$R/dev")
mount --rbind /sys "$R/sys" && mount --make-rslave "$R/sys" && mounted+=("$R/sys")
cp -L /etc/resolv.conf "$R/etc/resolv.conf"

# The distribution's PostgreSQL, as on the machine of a user who has it (no cluster
# of its own started here: the network namespace is this machine's).
mkdir -p "$R/etc/postgresql-common"
echo 'create_main_cluster = false' > "$R/etc/postgresql-common/createcluster.conf"
log "apt-get install postgresql (the distribution's major)"
chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    bash -c 'apt-get update -q && apt-get install -y -q postgresql' > "$R/apt.log" 2>&1 \
    || { tail -n 20 "$R/apt.log"; exit 1; }

if [ "$AS" = sudo ]; then
    chroot "$R" useradd --create-home --shell /bin/bash dev
    echo 'dev ALL=(ALL) NOPASSWD: ALL' > "$R/etc/sudoers.d/dev"; chmod 440 "$R/etc/sudoers.d/dev"
    HOMEDIR=/home/dev
else
    HOMEDIR=/root
fi
mkdir -p "$R$HOMEDIR/dynindex"
tar -C "$ROOT" --exclude=./.git --exclude=./.run --exclude=./deb --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
    --exclude=./src/gateway/dynindex-gateway --exclude='./tmp_check*' --exclude=node_modules -cf - . \
    | tar -C "$R$HOMEDIR/dynindex" -xf -
[ "$AS" = sudo ] && chroot "$R" chown -R dev: /home/dev/dynindex

as_user() {
    if [ "$AS" = sudo ]; then
        chroot "$R" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/home/dev LANG=C.UTF-8 \
            /usr/sbin/runuser -u dev -- bash -c "cd /home/dev/dynindex && $1"
    else
        chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
            bash -c "cd /root/dynindex && $1"
    fi
}
AS_USER_READY=1
start=$(date +%s)
log "make run"
as_user 'make run </dev/null' 2>&1 | tee "$CACHE/fresh-$DIST-$AS.log" | tail -n 25
st=${PIPESTATUS[0]}
log "make run: exit $st after $(( $(date +%s) - start ))s"
ok=0
if [ "$st" -eq 0 ]; then
    ans="$(as_user 'curl -s -H "X-Amz-Target: DynamoDB_20120810.ListTables" -H "Content-Type: application/x-amz-json-1.0" -d "{}" http://127.0.0.1:8000/' 2>&1)"
    log "ListTables on 127.0.0.1:8000: $ans"
    case "$ans" in *TableNames*) ok=1 ;; esac
    as_user 'make stop </dev/null' >/dev/null 2>&1 || ok=0
    AS_USER_READY=""
fi
if [ "$ok" = 1 ]; then log "PASS"; exit 0; else log "FAIL (log: $CACHE/fresh-$DIST-$AS.log)"; exit 1; fi
