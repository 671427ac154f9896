#!/usr/bin/env bash
# Which PostgreSQL major `make run` / `make test` use (test/bin/common.sh
# di_detect_major), on fake installations: none, one, two, unsupported ones,
# PG_MAJOR and PG_CONFIG.  Each case checks the major chosen or the one line
# that says what to do, and that nothing else was printed.
# Prints TAP-like lines and "N passed, N failed"; exit 0 only if all passed.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
COMMON="$HERE/../bin/common.sh"
W="$(mktemp -d)"; trap 'rm -rf "$W"' EXIT
pass=0; fail=0

# fake ROOT MAJOR...: a /usr/lib/postgresql with a server of each major
fake() {
    local root="$1" m; shift
    rm -rf "$root"; mkdir -p "$root"
    for m in "$@"; do
        mkdir -p "$root/$m/bin"
        printf '#!/bin/sh\n' > "$root/$m/bin/postgres"
        printf '#!/bin/sh\necho "PostgreSQL %s.1"\n' "$m" > "$root/$m/bin/pg_config"
        chmod +x "$root/$m/bin/postgres" "$root/$m/bin/pg_config"
    done
}
# case NAME EXPECTED ENV...: EXPECTED is "major=N" or the error line's start
case_() {
    local name="$1" want="$2" got; shift 2
    got="$(env -u PG_MAJOR -u PG_CONFIG "$@" bash -c '. "$0" && echo "major=$PG_MAJOR"' "$COMMON" 2>&1)"
    if [ "$(printf '%s\n' "$got" | wc -l)" -eq 1 ] && [[ "$got" == "$want"* ]]; then
        pass=$((pass + 1)); echo "ok - $name: $got"
    else
        fail=$((fail + 1)); echo "not ok - $name: wanted '$want...', got: $got"
    fi
}

fake "$W/none"
case_ "no server" "ERROR: no PostgreSQL server is installed" DI_PG_LIBROOT="$W/none"
fake "$W/15" 15;          case_ "Debian 12 (15)" "major=15" DI_PG_LIBROOT="$W/15"
fake "$W/17" 17;          case_ "Debian 13 (17)" "major=17" DI_PG_LIBROOT="$W/17"
fake "$W/18" 18;          case_ "sid (18)" "major=18" DI_PG_LIBROOT="$W/18"
fake "$W/two" 15 17
case_ "two majors" "ERROR: PostgreSQL 15 and 17 are installed: choose one, e.g. PG_MAJOR=15" DI_PG_LIBROOT="$W/two"
case_ "two majors, PG_MAJOR=17" "major=17" DI_PG_LIBROOT="$W/two" PG_MAJOR=17
case_ "two majors, make deb (any)" "major=17" DI_PG_LIBROOT="$W/two" DI_MAJOR_ANY=1
fake "$W/old" 14;         case_ "only 14" "ERROR: PostgreSQL 14 is installed but dynindex supports 15, 16, 17, 18" DI_PG_LIBROOT="$W/old"
fake "$W/new" 19;         case_ "only 19" "ERROR: PostgreSQL 19 is installed but dynindex supports 15, 16, 17, 18" DI_PG_LIBROOT="$W/new"
fake "$W/mix" 14 17;      case_ "14 and 17" "major=17" DI_PG_LIBROOT="$W/mix"
case_ "PG_MAJOR=14" "ERROR: PG_MAJOR=14: dynindex supports PostgreSQL 15, 16, 17, 18" DI_PG_LIBROOT="$W/15" PG_MAJOR=14
case_ "PG_MAJOR=16, not installed (deps.sh installs it)" "major=16" DI_PG_LIBROOT="$W/none" PG_MAJOR=16
case_ "PG_CONFIG of 17" "major=17" PG_CONFIG="$W/two/17/bin/pg_config"
case_ "PG_CONFIG of 19" "ERROR: PG_CONFIG names PostgreSQL 19" PG_CONFIG="$W/new/19/bin/pg_config"
case_ "PG_CONFIG and PG_MAJOR disagree" "ERROR: PG_MAJOR=15 but PG_CONFIG names PostgreSQL 17" PG_CONFIG="$W/two/17/bin/pg_config" PG_MAJOR=15
case_ "PG_CONFIG not a program" "ERROR: PG_CONFIG=$W/nothing is not an executable pg_config" PG_CONFIG="$W/nothing"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
