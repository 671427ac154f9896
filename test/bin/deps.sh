#!/usr/bin/env bash
# Install what building and testing dynindex needs, if missing (Debian/Ubuntu, apt).
# Runs `apt-get update` only when something has to be installed.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PKGS=(
    "postgresql-$PG_MAJOR"              # server binaries (initdb, postgres, pg_ctl)
    "postgresql-server-dev-$PG_MAJOR"   # server headers, PGXS
    libicu-dev                          # utils/pg_locale.h includes ICU's headers; server-dev
                                        # of Debian 13 no longer pulls them in (Citus needs them)
    gcc make libc6-dev pkg-config
    libpq-dev libmicrohttpd-dev libssl-dev zlib1g-dev   # the gateway
    libcurl4-openssl-dev libzstd-dev    # import/export: S3 over HTTP (libcurl), ZSTD files
    zstd                                # the import tests and fuzzer make ZSTD files
    libipc-run-perl                     # TAP tests (PostgreSQL::Test::Cluster)
    python3 python3-boto3               # client tests, examples
    python3-psycopg2                    # test/fuzz/api_fuzz.py
    curl                                # `make run` demo call
    dpkg-dev debhelper postgresql-server-dev-all   # `make deb` (dpkg-buildpackage, dh, pg_buildext)
    build-essential                     # dpkg-buildpackage checks for it
)

di_log "PostgreSQL $PG_MAJOR (PG_MAJOR=NN or PG_CONFIG=... chooses another)"
missing=()
for p in "${PKGS[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
# Node.js (client tests with the AWS SDK for JavaScript / ElectroDB): only if absent.
if ! command -v node >/dev/null 2>&1; then
    missing+=(nodejs)
fi
if ! command -v npm >/dev/null 2>&1; then
    # npm may come with a non-Debian nodejs (e.g. NodeSource) - then it is already there.
    missing+=(npm)
fi

if [ "${#missing[@]}" -eq 0 ]; then
    di_log "dependencies: all present"
    exit 0
fi

command -v apt-get >/dev/null 2>&1 || di_die "missing packages (${missing[*]}) and no apt-get; install them by hand"
di_log "installing missing packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
di_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
di_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
di_log "dependencies installed"
