# shellcheck shell=bash
# Shared helpers for test/bin/*.sh (sourced, not executed).
# Everything here must work on a fresh Debian 12 (PostgreSQL 15) or Debian 13
# (PostgreSQL 17), and wherever Debian's postgresql-NN packages of a supported major are.

DI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DI_SUPPORTED_MAJORS="15 16 17 18"     # docs/versions.md
DI_CITUS_MAJORS="15 16 17"            # those the vendored Citus 13.2 supports (docs/scaling.md)

di_log()  { printf '==> %s\n' "$*"; }
di_warn() { printf 'WARNING: %s\n' "$*" >&2; }
di_die()  { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

di_supported_major() { case " $DI_SUPPORTED_MAJORS " in *" $1 "*) return 0 ;; esac; return 1; }

# The PostgreSQL major we build and test for, in PG_MAJOR (exported):
#   PG_CONFIG=/path/to/pg_config   that installation's major;
#   PG_MAJOR=NN                    that major (deps.sh installs postgresql-NN if missing);
#   neither                        the one supported major whose server is installed.
# No server, two servers, or only unsupported ones: one line that says what to do.
di_detect_major() {
    local v m installed="" supported=""
    if [ -n "${PG_CONFIG:-}" ]; then
        case "$PG_CONFIG" in */*) ;; *) PG_CONFIG="$(command -v "$PG_CONFIG" || echo "$PG_CONFIG")" ;; esac
        [ -x "$PG_CONFIG" ] || di_die "PG_CONFIG=$PG_CONFIG is not an executable pg_config"
        v="$("$PG_CONFIG" --version)"; v="${v#PostgreSQL }"; m="${v%%[.a-z]*}"
        di_supported_major "$m" || di_die "PG_CONFIG names PostgreSQL $m; dynindex supports ${DI_SUPPORTED_MAJORS// /, } (docs/versions.md)"
        [ -z "${PG_MAJOR:-}" ] || [ "$PG_MAJOR" = "$m" ] || di_die "PG_MAJOR=$PG_MAJOR but PG_CONFIG names PostgreSQL $m: set one of them"
        PG_MAJOR="$m"
    elif [ -n "${PG_MAJOR:-}" ]; then
        di_supported_major "$PG_MAJOR" || di_die "PG_MAJOR=$PG_MAJOR: dynindex supports PostgreSQL ${DI_SUPPORTED_MAJORS// /, } (docs/versions.md)"
    else
        for v in "${DI_PG_LIBROOT:-/usr/lib/postgresql}"/*/bin/postgres; do
            [ -x "$v" ] || continue
            m="${v#"${DI_PG_LIBROOT:-/usr/lib/postgresql}"/}"; m="${m%%/*}"
            installed="$installed $m"
            di_supported_major "$m" && supported="$supported $m"
        done
        installed="${installed# }"; supported="${supported# }"
        if [ -z "$installed" ]; then
            di_die "no PostgreSQL server is installed: install your distribution's (apt-get install postgresql) or name a major to install, e.g. PG_MAJOR=17 make run"
        elif [ -z "$supported" ]; then
            di_die "PostgreSQL $installed is installed but dynindex supports ${DI_SUPPORTED_MAJORS// /, }: name one to install, e.g. PG_MAJOR=17 make run"
        elif [ "$supported" != "${supported%% *}" ] && [ "${DI_MAJOR_ANY:-0}" = 1 ]; then
            supported="${supported##* }"      # any will do (make deb builds for each): the newest
        elif [ "$supported" != "${supported%% *}" ]; then
            di_die "PostgreSQL ${supported// / and } are installed: choose one, e.g. PG_MAJOR=${supported%% *} make run"
        fi
        PG_MAJOR="$supported"
    fi
    export PG_MAJOR
}
[ "${DI_NO_DETECT:-0}" = 1 ] || di_detect_major

di_is_root() { [ "$(id -u)" -eq 0 ]; }

# Run a command as root: directly when we are root, else through sudo
# (non-interactive when there is no terminal, e.g. in CI).
di_as_root() {
    if di_is_root; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        if [ -t 0 ]; then sudo "$@"; else sudo -n "$@"; fi
    else
        di_die "need root for: $* (run as root or install and configure sudo)"
    fi
}

# pg_config of the PostgreSQL major version we build for (never /usr/local).
di_pg_config() {
    if [ -n "${PG_CONFIG:-}" ] && [ -x "${PG_CONFIG}" ]; then
        echo "$PG_CONFIG"
    elif [ -x "/usr/lib/postgresql/$PG_MAJOR/bin/pg_config" ]; then
        echo "/usr/lib/postgresql/$PG_MAJOR/bin/pg_config"
    else
        di_die "pg_config for PostgreSQL $PG_MAJOR not found (postgresql-server-dev-$PG_MAJOR provides it; make deps installs it)"
    fi
}

# A private copy of the PostgreSQL installation of pg_config PGC under DIR, the same
# absolute layout below DIR (bindir, pkglibdir, sharedir, server headers).  PostgreSQL
# finds its files relative to its own binaries, so a server started from DIR loads the
# extension installed there (make install DESTDIR=DIR) and never the system's: test runs
# leave the system PostgreSQL alone and several can run at once.  Prints DIR's pg_config.
di_private_pg() {
    local pgc="$1" dir="$2" d
    mkdir -p "$dir"
    for d in "$("$pgc" --bindir)" "$("$pgc" --pkglibdir)" "$("$pgc" --sharedir)" "$("$pgc" --includedir-server)"; do
        [ -d "$dir$d" ] || cp -a --parents "$d" "$dir/"
    done
    # libpq and its headers stay where they are: programs link the system's
    echo "$dir$("$pgc" --bindir)/pg_config"
}
# The unprivileged account that runs servers and tests when we are root
# (initdb and pg_regress refuse to run as root).
di_unpriv_user() {
    if [ -n "${DYNINDEX_TEST_USER:-}" ]; then
        echo "$DYNINDEX_TEST_USER"
    elif id postgres >/dev/null 2>&1; then
        echo postgres
    else
        if ! id dynindex >/dev/null 2>&1; then
            useradd --system --create-home --home-dir /var/lib/dynindex --shell /bin/bash dynindex >&2
        fi
        echo dynindex
    fi
}

# Run a command as the unprivileged user (only used when we are root).
di_as_user() {
    local u="$1"; shift
    runuser -u "$u" -- env HOME="$(getent passwd "$u" | cut -d: -f6)" TMPDIR=/tmp "$@"
}

# Build the tree DIR (with optional extra make args) and install it.  Install as
# root directly, or through sudo when the install directories are not writable.
di_build_install() {
    local dir="$1"; shift
    local pgc; pgc="$(di_pg_config)"
    local jobs; jobs="$(nproc 2>/dev/null || echo 2)"
    di_log "building dynindex in $dir ${*:-}"
    make -s -C "$dir" -j"$jobs" PG_CONFIG="$pgc" "$@"
    di_log "installing dynindex into $("$pgc" --pkglibdir) (gateway: $("$pgc" --bindir))"
    if [ -w "$("$pgc" --pkglibdir)" ] && [ -w "$("$pgc" --sharedir)/extension" ] && [ -w "$("$pgc" --bindir)" ]; then
        make -s -C "$dir" PG_CONFIG="$pgc" "$@" install
    else
        di_as_root make -s -C "$dir" PG_CONFIG="$pgc" "$@" install
    fi
}

# ---- the local development server of `make run` / `make stop` ----
DI_PORT="${DYNINDEX_PORT:-5433}"
DI_HOST="${DYNINDEX_HOST:-127.0.0.1}"
DI_GW_PORT="${DYNINDEX_GATEWAY_PORT:-8000}"
DI_GW_HOST="${DYNINDEX_GATEWAY_HOST:-127.0.0.1}"
DI_DB="${DYNINDEX_DB:-dynindex}"
DI_SUPERUSER=postgres     # initdb -U: the same role name whoever runs it

# Where `make run` keeps its cluster, logs and pid files.  A normal user keeps it
# in the checkout (.run/, git-ignored); root runs the server as an unprivileged
# user, who may not be able to enter root's checkout, so it lives in /var/tmp.
di_run_dir() {
    if [ -n "${DYNINDEX_RUN_DIR:-}" ]; then echo "$DYNINDEX_RUN_DIR"
    elif di_is_root; then echo "/var/tmp/dynindex-run-$DI_PORT"
    else echo "$DI_ROOT/.run"
    fi
}

# Run a command as the account that owns the run directory / server.
di_as_owner() {
    if di_is_root; then di_as_user "$(di_unpriv_user)" "$@"; else "$@"; fi
}
