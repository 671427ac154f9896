#!/usr/bin/env bash
# Run every test suite against the installed dynindex, from a tree that is already
# built and installed (test-all.sh prepares it).  Never run as root.
# Prints one line per suite and a final line "N passed, N failed" (N = suites).
# Usage: suites.sh TREE
set -uo pipefail
TREE="$(cd "${1:?usage: suites.sh TREE}" && pwd)"
. "$TREE/test/bin/common.sh"
di_is_root && di_die "suites.sh must not run as root (initdb refuses); use test-all.sh"

PGC="$(di_pg_config)"
BINDIR="$("$PGC" --bindir)"
export PATH="$BINDIR:$PATH"
if locale -a 2>/dev/null | grep -qix 'c.utf-\?8'; then export LC_ALL=C.UTF-8; else export LC_ALL=C; fi
unset PGHOST PGPORT PGDATABASE PGUSER PGSERVICE PGOPTIONS
cd "$TREE" || exit 1
MAKE=(make --no-print-directory PG_CONFIG="$PGC")
hr() { printf '%s\n' "--------------------------------------------------------------------------"; }

declare -a SUMMARY=()
passed=0; failed=0
result() {  # name status detail
    if [ "$2" = PASS ]; then passed=$((passed+1)); elif [ "$2" = FAIL ]; then failed=$((failed+1)); fi
    SUMMARY+=("$(printf '%-10s %-8s %s' "$1" "$2" "$3")")
}
show() {  # file [max lines]
    [ -f "$1" ] || return 0
    echo "----- $1"
    head -n "${2:-600}" "$1"
}

# pg_regress / pg_isolation_regress summary: "All N tests passed." / "M of N tests failed."
regress_counts() {
    local out="$1" n m
    if n="$(grep -Eo 'All [0-9]+ tests passed' "$out" | grep -Eo '[0-9]+')"; then
        echo "$n tests, 0 failed"
    elif m="$(grep -Eo '[0-9]+ of [0-9]+ tests failed' "$out" | head -1)"; then
        echo "$(echo "$m" | awk '{print $3}') tests, $(echo "$m" | awk '{print $1}') failed"
    else
        echo "no summary (see output above)"
    fi
}

# DYNINDEX_SUITES="regress tap ...": run only these (the others are reported as not run);
# DYNINDEX_REGRESS="00_api_surface 97_global_tables" runs only these regression tests,
# PROVE_TESTS=test/t/130_global_basic.pl only this TAP test.
want() {
    [ -z "${DYNINDEX_SUITES:-}" ] && return 0
    case " $DYNINDEX_SUITES " in *" $1 "*) return 0 ;; esac
    result "$1" SKIPPED "not selected (DYNINDEX_SUITES=\"$DYNINDEX_SUITES\")"
    return 1
}

# ---- 0. layers (test/layers/check.py: no use against the layer order of src/, no circle among the gateway's files; docs/layers.md) ----
if want layers; then
    hr; echo "SUITE layers (test/layers/check.py, test/layers/layers.txt)"; hr
    { python3 test/layers/check.py --circles gateway && python3 test/layers/test_check.py; } 2>&1 | tee .suite-layers.out
    st=${PIPESTATUS[0]}
    if [ "$st" -eq 0 ]; then result layers PASS "$(grep -Eo '[0-9]+ subsystems, [0-9]+ uses' .suite-layers.out | head -1), all downward; no circle in gateway/; check tested"
    else result layers FAIL "$(grep -E '^layers: |^[0-9]+ failed' .suite-layers.out | tr '\n' ' ')(exit $st)"
    fi
fi

# ---- the setup scripts: which PostgreSQL major make run / make test choose ----
if want setup; then
    hr; echo "SUITE setup (test/setup/detect.sh: the major chosen, or the one line said, on fake installations)"; hr
    bash test/setup/detect.sh 2>&1 | tee .suite-setup.out
    st=${PIPESTATUS[0]}
    counts="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' .suite-setup.out | tail -1)"
    if [ "$st" -eq 0 ]; then result setup PASS "${counts:-?}"; else result setup FAIL "${counts:-no summary} (exit $st)"; fi
fi

# ---- 1. pg_regress (sql/, expected/) ----
if want regress; then
    hr; echo "SUITE regress (pg_regress, sql/*.sql)"; hr
    if ! ls sql/[0-9]*.sql >/dev/null 2>&1; then
        result regress SKIPPED "no sql/[0-9]*.sql yet"
    else
        rm -f regression.diffs
        timeout --kill-after=30 1800 "${MAKE[@]}" installcheck ISOLATION= TAP_TESTS= ${DYNINDEX_REGRESS:+REGRESS="$DYNINDEX_REGRESS"} 2>&1 | tee .suite-regress.out
        st=${PIPESTATUS[0]}
        if [ "$st" -eq 0 ]; then result regress PASS "$(regress_counts .suite-regress.out)"
        else
            result regress FAIL "$(regress_counts .suite-regress.out) (exit $st)"
            show regression.diffs 2000
            for f in sql/[0-9]*.sql; do
                n="$(basename "$f" .sql)"
                if [ ! -f "expected/$n.out" ] && [ -f "results/$n.out" ]; then
                    echo "----- no expected/$n.out; actual output (results/$n.out):"
                    head -n 300 "results/$n.out"
                fi
            done
            for f in tmp_check/log/*.log; do [ -f "$f" ] && { echo "----- tail $f"; tail -n 60 "$f"; }; done
        fi
    fi
fi

# ---- 2. isolation (test/isolation/specs) ----
if want isolation; then
    hr; echo "SUITE isolation (pg_isolation_regress, test/isolation/specs/*.spec)"; hr
    if ! ls test/isolation/specs/*.spec >/dev/null 2>&1; then
        result isolation SKIPPED "no test/isolation/specs/*.spec yet"
    else
        rm -rf output_iso
        timeout --kill-after=30 1800 "${MAKE[@]}" installcheck REGRESS= TAP_TESTS= 2>&1 | tee .suite-isolation.out
        st=${PIPESTATUS[0]}
        if [ "$st" -eq 0 ]; then result isolation PASS "$(regress_counts .suite-isolation.out)"
        else
            result isolation FAIL "$(regress_counts .suite-isolation.out) (exit $st)"
            show output_iso/regression.diffs 2000
            for f in test/isolation/specs/*.spec; do
                n="$(basename "$f" .spec)"
                if [ ! -f "test/isolation/expected/$n.out" ] && [ -f "output_iso/results/$n.out" ]; then
                    echo "----- no test/isolation/expected/$n.out; actual output (output_iso/results/$n.out):"
                    head -n 300 "output_iso/results/$n.out"
                fi
            done
            for f in output_iso/log/*.log tmp_check_iso/log/*.log; do [ -f "$f" ] && { echo "----- tail $f"; tail -n 60 "$f"; }; done
        fi
    fi
fi

# ---- 3. TAP (test/t/*.pl: crash and restart) ----
if want tap; then
    hr; echo "SUITE tap (prove, test/t/*.pl)"; hr
    if ! ls test/t/*.pl >/dev/null 2>&1; then
        result tap SKIPPED "no test/t/*.pl yet"
    else
        timeout --kill-after=30 2400 "${MAKE[@]}" installcheck REGRESS= ISOLATION= PROVE_FLAGS=--timer 2>&1 | tee .suite-tap.out
        st=${PIPESTATUS[0]}
        files="$(grep -Eo 'Files=[0-9]+, Tests=[0-9]+' .suite-tap.out | tail -1)"
        if [ "$st" -eq 0 ] && grep -q '^Result: PASS' .suite-tap.out; then
            result tap PASS "${files:-?} (all passed)"
        else
            bad="$(grep -Eo 'Failed [0-9]+/[0-9]+ test programs' .suite-tap.out | tail -1)"
            result tap FAIL "${files:-no summary}; ${bad:-see output} (exit $st)"
            for f in tmp_check/log/regress_log_*; do
                [ -f "$f" ] && { echo "----- tail $f"; tail -n 150 "$f"; }
            done
            for f in tmp_check/log/*.log; do
                [ -f "$f" ] && { echo "----- tail $f"; tail -n 40 "$f"; }
            done
        fi
    fi
fi

# ---- 4. client tests (test/clients/run.sh: SDK, ElectroDB through the gateway) ----
if want clients; then
    hr; echo "SUITE clients (test/clients/run.sh)"; hr
    if [ ! -f test/clients/run.sh ]; then
        result clients SKIPPED "test/clients/run.sh does not exist yet"
    else
        port="${DYNINDEX_TEST_PORT:-}"
        if [ -z "$port" ]; then
            for p in $(seq 54330 54399); do
                if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
            done
        fi
        # the in-server endpoint (dynindex_http, SigV4) on the next free port
        hport=""
        for p in $(seq $((port + 1)) $((port + 60))); do
            if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then hport=$p; break; fi
        done
        CDIR="$TREE/tmp_check_clients"
        rm -rf "$CDIR"; mkdir -p "$CDIR"
        st=1
        if initdb -D "$CDIR/data" -U postgres -A trust -E UTF8 --locale=C >"$CDIR/initdb.log" 2>&1; then
            { cat test/dynindex.conf
              echo "listen_addresses = '127.0.0.1'"; echo "port = $port"
              echo "unix_socket_directories = '$CDIR'"
              echo "shared_preload_libraries = 'dynindex,dynindex_http'"
              echo "dynindex_http.port = $hport"; echo "dynindex_http.database = 'dynindex_clients'"
              echo "dynindex_http.workers = 2"; } >> "$CDIR/data/postgresql.conf"
            export DYNINDEX_HTTP_URL="http://127.0.0.1:$hport"
            if pg_ctl -D "$CDIR/data" -l "$CDIR/postgresql.log" -w -t 60 start >/dev/null; then
                export PGHOST=127.0.0.1 PGPORT="$port" PGUSER=postgres PGDATABASE=dynindex_clients
                if psql -X -q -d postgres -v ON_ERROR_STOP=1 -c "CREATE DATABASE dynindex_clients" &&
                   psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION dynindex"; then
                    echo "PostgreSQL for the client tests: $PGHOST:$PGPORT db $PGDATABASE"
                    timeout --kill-after=30 2400 bash test/clients/run.sh 2>&1 | tee .suite-clients.out
                    st=${PIPESTATUS[0]}
                fi
                # Gateways the client tests started from this tree and left behind.
                for d in /proc/[0-9]*; do
                    cmd="$( { tr '\0' ' ' < "$d/cmdline"; } 2>/dev/null || true)"   # it may have exited
                    case "$cmd" in "$TREE/src/gateway/dynindex-gateway "*)
                        echo "(stopping gateway ${d#/proc/} left running by test/clients/run.sh)"
                        kill "${d#/proc/}" 2>/dev/null || true ;;
                    esac
                done
                pg_ctl -D "$CDIR/data" -m fast -w stop >/dev/null 2>&1 || true
                unset PGHOST PGPORT PGUSER PGDATABASE DYNINDEX_HTTP_URL
            else
                echo "could not start PostgreSQL for the client tests"
            fi
        else
            cat "$CDIR/initdb.log"
        fi
        counts="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' .suite-clients.out 2>/dev/null | tail -1 || true)"
        if [ "$st" -eq 0 ]; then result clients PASS "${counts:-exit 0}"; rm -rf "$CDIR"
        else
            result clients FAIL "${counts:-} (exit $st)"
            [ -f "$CDIR/postgresql.log" ] && { echo "----- tail $CDIR/postgresql.log"; tail -n 80 "$CDIR/postgresql.log"; }
        fi
    fi
fi

# ---- 5. fuzz (test/fuzz/run.sh: a short deterministic run of the request fuzzer) ----
if want fuzz; then
    hr; echo "SUITE fuzz (test/fuzz/api_fuzz.py, seed 1, 20000 requests)"; hr
    if [ ! -f test/fuzz/run.sh ]; then
        result fuzz SKIPPED "test/fuzz/run.sh does not exist yet"
    else
        FUZZ_DIR="$TREE/tmp_check_fuzz" FUZZ_PORT="${DYNINDEX_FUZZ_PORT:-5493}" \
            timeout --kill-after=30 600 bash test/fuzz/run.sh --seed 1 --count 20000 --progress 5000 2>&1 | tee .suite-fuzz.out
        st=${PIPESTATUS[0]}
        counts="$(grep -E '^total ' .suite-fuzz.out | tail -1 | awk '{print $2" requests, "$3" OK, "$4" DynamoDB errors, "$5" bugs, "$6" crashes"}')"
        if [ "$st" -eq 0 ] && grep -q '^RESULT: PASS' .suite-fuzz.out; then
            result fuzz PASS "${counts:-?}"
        else
            result fuzz FAIL "${counts:-no summary} (exit $st)"
            [ -f tmp_check_fuzz/failures.jsonl ] && { echo "----- tmp_check_fuzz/failures.jsonl"; head -c 20000 tmp_check_fuzz/failures.jsonl; }
            [ -f tmp_check_fuzz/postgresql.log ] && { echo "----- tail tmp_check_fuzz/postgresql.log"; tail -n 60 tmp_check_fuzz/postgresql.log; }
        fi
    fi
fi

# ---- 6. citus (test/citus/run.sh: a coordinator and two workers on loopback ports) ----
if want citus; then
    hr; echo "SUITE citus (test/citus/run.sh: dynindex distributed over a Citus cluster)"; hr
    PG_CONFIG="$PGC" timeout --kill-after=30 1200 bash test/citus/run.sh "$TREE" 2>&1 | tee .suite-citus.out
    st=${PIPESTATUS[0]}
    if [ "$st" -eq 3 ]; then
        case " $DI_CITUS_MAJORS " in
            *" $PG_MAJOR "*) result citus SKIPPED "Citus is not installed: bash ../shared/vendor/citus/build.sh installs it (.ci/run does)" ;;
            *) result citus SKIPPED "the vendored Citus 13.2 supports PostgreSQL 15-17, not $PG_MAJOR (docs/scaling.md)" ;;
        esac
    elif [ "$st" -eq 0 ]; then
        result citus PASS "$(grep -Eo 'All [0-9]+ tests passed' .suite-citus.out | grep -Eo '[0-9]+' | awk '{s+=$1} END {print s}') tests on the cluster"
    else
        result citus FAIL "exit $st"
        for f in tmp_check_citus/cluster/regression.diffs tmp_check_citus/shared/regression.diffs; do show "$f" 1000; done
        for f in tmp_check_citus/n0.log tmp_check_citus/n1.log tmp_check_citus/n2.log; do [ -f "$f" ] && { echo "----- tail $f"; tail -n 40 "$f"; }; done
    fi
fi

if [ -n "${SUITES_SUMMARY_FILE:-}" ]; then   # test-all.sh prints it last
    { printf '%s\n' "${SUMMARY[@]}"; echo "$passed passed, $failed failed"; } > "$SUITES_SUMMARY_FILE"
else
    hr; echo "SUMMARY"; hr
    printf '%s\n' "${SUMMARY[@]}"
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
