#!/usr/bin/env bash
# `make deb`: build the Debian packages postgresql-15-dynindex and dynindex-gateway
# with Debian's tools (dpkg-buildpackage, debhelper, pg_buildext; debian/ is the
# packaging) from a clean copy of the tree, and put the .deb files into
# DYNINDEX_DEB_DIR (default: deb/ in the checkout).  Installs the build
# dependencies first if they are missing (test/bin/deps.sh).
# Prints the paths of the packages built, one per line, last.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

OUT="${DYNINDEX_DEB_DIR:-$DI_ROOT/deb}"
bash "$DI_ROOT/test/bin/deps.sh"
command -v dpkg-buildpackage >/dev/null || di_die "dpkg-buildpackage not found (apt-get install dpkg-dev)"

version="$(dpkg-parsechangelog -l "$DI_ROOT/debian/changelog" -S Version)"
upstream="${version%-*}"
BUILD="$(mktemp -d "${TMPDIR:-/tmp}/dynindex-deb.XXXXXX")"
trap 'rm -rf "$BUILD"' EXIT
SRC="$BUILD/dynindex-$upstream"
mkdir -p "$SRC"
di_log "copying the tree to $SRC"
tar -C "$DI_ROOT" \
    --exclude=./.git --exclude=./.run --exclude=./deb --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
    --exclude=./src/gateway/dynindex-gateway --exclude=./tmp_check --exclude=./tmp_check_iso \
    --exclude=./tmp_check_clients --exclude=./tmp_check_fuzz --exclude=./tmp_check_citus --exclude=./results --exclude=./output_iso \
    --exclude=./log --exclude=node_modules \
    -cf - . | tar -C "$SRC" -xf -

di_log "dpkg-buildpackage -b (dynindex $version)"
# -b: binary packages only (no source package, so no orig tarball is needed);
# -us -uc: unsigned.  Build parallelism: at most 2 jobs (shared machines).
(cd "$SRC" && DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-parallel=2}" dpkg-buildpackage -b -us -uc) \
    > "$BUILD/build.log" 2>&1 || { tail -n 80 "$BUILD/build.log"; di_die "dpkg-buildpackage failed"; }

mkdir -p "$OUT"
debs=()
for f in "$BUILD"/*.deb; do
    [ -e "$f" ] || continue
    cp "$f" "$OUT/"
    debs+=("$OUT/$(basename "$f")")
done
[ "${#debs[@]}" -ge 2 ] || { tail -n 40 "$BUILD/build.log"; di_die "expected two packages, got: ${debs[*]:-none}"; }
di_log "packages in $OUT:"
printf '%s\n' "${debs[@]}"
