#!/usr/bin/env bash
# `make test`: install what is missing, build with assertions, install, and run every
# suite (pg_regress, isolation, TAP, client tests).  Ends with one line per suite and
# a last line "N passed, N failed" (N = suites); exit status 0 only if all passed.
#
# The build and the suites run in a private copy of the tree (your checkout gets no
# build products).  As root, the build and install run as root and the suites run as
# an unprivileged user (DYNINDEX_TEST_USER, default postgres), which owns the copy.
# DYNINDEX_KEEP_WORK=1 keeps the copy even when everything passed.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SUITES=(layers setup regress isolation tap clients fuzz citus package)
WORK=""
fail_all() {  # reason
    [ -n "$WORK" ] && rm -rf "$WORK"
    echo "--------------------------------------------------------------------------"
    echo "SUMMARY"
    echo "--------------------------------------------------------------------------"
    for s in "${SUITES[@]}"; do printf '%-10s %-8s %s\n' "$s" FAIL "not run: $1"; done
    echo "0 passed, ${#SUITES[@]} failed"
    exit 1
}

start=$(date +%s)
bash "$DI_ROOT/test/bin/deps.sh" || fail_all "installing dependencies failed"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/dynindex-test.XXXXXX")"
chmod 755 "$WORK"
di_log "copying the tree to $WORK"
tar -C "$DI_ROOT" \
    --exclude=./.git --exclude=./.run --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
    --exclude=./src/gateway/dynindex-gateway --exclude=./tmp_check --exclude=./tmp_check_iso \
    --exclude=./tmp_check_clients --exclude=./tmp_check_fuzz --exclude=./tmp_check_citus --exclude=./results --exclude=./output_iso --exclude=./log \
    -cf - . | tar -C "$WORK" -xf -

# Assertions on: our own Assert()s are compiled in (fine against Debian's
# non-cassert server: ExceptionalCondition exists in every server build).
# Installed into a private copy of the PostgreSQL installation (common.sh
# di_private_pg), never into the system's: the suites run against that copy.
PGC="$(di_pg_config)"
di_log "PostgreSQL $PG_MAJOR: $("$PGC" --version) ($PGC)"
di_log "building dynindex in $WORK (assertions on)"
make -s -C "$WORK" -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PGC" COPT=-DUSE_ASSERT_CHECKING \
    || fail_all "build failed (see above)"
TEST_PGC="$(di_private_pg "$PGC" "$WORK/tmp_install")"
di_log "installing into the private PostgreSQL $WORK/tmp_install"
make -s -C "$WORK" PG_CONFIG="$PGC" COPT=-DUSE_ASSERT_CHECKING DESTDIR="$WORK/tmp_install" install \
    || fail_all "install failed (see above)"

rc=0
if di_is_root; then
    U="$(di_unpriv_user)"
    chown -R "$U": "$WORK"
    di_log "running the suites as user '$U' (root may not run initdb)"
    di_as_user "$U" env CI="${CI:-}" PG_CONFIG="$TEST_PGC" SUITES_SUMMARY_FILE="$WORK/.summary" bash "$WORK/test/bin/suites.sh" "$WORK" || rc=$?
else
    PG_CONFIG="$TEST_PGC" SUITES_SUMMARY_FILE="$WORK/.summary" bash "$WORK/test/bin/suites.sh" "$WORK" || rc=$?
fi
summary="$(cat "$WORK/.summary" 2>/dev/null || true)"
[ -n "$summary" ] || { rc=1; summary="$(printf 'suites   FAIL     suites.sh ended without a summary\n0 passed, 1 failed')"; }

# The package suite runs last and as root (apt-get install / purge of the .deb files):
# it puts back the files of the system PostgreSQL it replaces (test/bin/package-test.sh).
np="$(echo "$summary" | tail -1 | awk '{print $1}')"; nf="$(echo "$summary" | tail -1 | awk '{print $3}')"
if [ -n "${DYNINDEX_SUITES:-}" ] && [[ " $DYNINDEX_SUITES " != *" package "* ]]; then
    pstatus=SKIPPED; pdetail="not selected (DYNINDEX_SUITES=\"$DYNINDEX_SUITES\")"
else
    echo "--------------------------------------------------------------------------"
    echo "SUITE package (test/bin/package-test.sh: make deb, apt-get install, gateway from the unit, purge)"
    echo "--------------------------------------------------------------------------"
    di_as_root bash "$WORK/test/bin/package-test.sh" "$WORK" 2>&1 | tee "$WORK/.suite-package.out" || true
    pres="$(grep '^RESULT: ' "$WORK/.suite-package.out" | tail -1 || true)"
    pres="${pres#RESULT: }"
    pstatus="${pres%% *}"; pdetail="${pres#* }"
    case "$pstatus" in PASS|SKIPPED) ;; *) pstatus=FAIL; pdetail="${pdetail:-no result}"; rc=1 ;; esac
fi
[ "$pstatus" = PASS ] && np=$((np + 1)); [ "$pstatus" = FAIL ] && nf=$((nf + 1))
summary="$(echo "$summary" | sed '$d'; printf '%-10s %-8s %s\n' package "$pstatus" "$pdetail"; echo "$np passed, $nf failed")"

if [ "$rc" -eq 0 ] && [ "${DYNINDEX_KEEP_WORK:-0}" != 1 ]; then
    rm -rf "$WORK"
else
    echo "(test tree kept for inspection: $WORK)"
fi
echo "(make test took $(( $(date +%s) - start ))s)"
echo "--------------------------------------------------------------------------"
echo "SUMMARY"
echo "--------------------------------------------------------------------------"
printf '%s\n' "$summary"     # its last line: "N passed, N failed"
exit "$rc"
