#!/usr/bin/env bash
# `make deb`: build the Debian packages postgresql-NN-dynindex, one for every
# supported PostgreSQL major NN whose server is installed (debian/pgversions lists
# the supported ones), and dynindex-gateway, with Debian's tools (dpkg-buildpackage,
# debhelper, pg_buildext; debian/ is the packaging) from a clean copy of the tree,
# and put the .deb files into DYNINDEX_DEB_DIR (default: deb/ in the checkout).
# Installs the build dependencies first if they are missing (test/bin/deps.sh, and
# postgresql-server-dev-NN of each installed major).
# Prints the paths of the packages built, one per line, last.
set -euo pipefail
DI_MAJOR_ANY=1
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

OUT="${DYNINDEX_DEB_DIR:-$DI_ROOT/deb}"
bash "$DI_ROOT/test/bin/deps.sh"
majors=()
for m in /usr/lib/postgresql/*/bin/postgres; do
    m="${m#/usr/lib/postgresql/}"; m="${m%%/*}"
    di_supported_major "$m" && majors+=("$m")
done
for m in "${majors[@]}"; do
    dpkg-query -W -f='${Status}' "postgresql-server-dev-$m" 2>/dev/null | grep -q 'install ok installed' ||
        di_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "postgresql-server-dev-$m"
done
# pg_buildext builds for the majors of debian/pgversions whose server-dev is installed
export PG_SUPPORTED_VERSIONS=installed
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

(cd "$SRC" && pg_buildext updatecontrol)    # debian/control for those majors
di_log "dpkg-buildpackage -b (dynindex $version; PostgreSQL ${majors[*]})"
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
[ "${#debs[@]}" -ge $(( ${#majors[@]} + 1 )) ] || { tail -n 40 "$BUILD/build.log"; di_die "expected $(( ${#majors[@]} + 1 )) packages, got: ${debs[*]:-none}"; }
di_log "packages in $OUT:"
printf '%s\n' "${debs[@]}"
