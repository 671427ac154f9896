#!/usr/bin/env bash
# Import against PostgreSQL's COPY (issue #28); the export part is bench/export.sh.
# See bench/README.md, "Import and export".
# Usage: PGHOST=... PGPORT=... [PGUSER=...] bench/import_export.sh [dbname]
#   N (1000000) items of ~200 bytes, FILES (10) objects; SIZES (N) a list of
#   sizes to run, e.g. SIZES="1000000 5000000" for the flat-memory check.
# Import part: bench/import_gen.py writes N items as a DynamoDB export's data
# files (data/*.json.gz, {"Item": ...} lines) into the server's exchange
# directory and the same rows as a COPY file; then
#   1. COPY of the rows into a plain (pk text, sk text, item jsonb) table;
#   2. ImportTable of the files into a table with two GSIs (TableCreationParameters
#      has no LSIs: an imported table cannot have one), timed from the request to
#      COMPLETED, with the job's phases (its log line) and its peak memory (RssAnon of
#      the job's processes, its own and its helper, summed, sampled every 0.5 s);
#   3. the ratio COPY time / import time (0.5 = half COPY's rate).
# On a shared machine the wall times follow the other processes' load; the CPU
# seconds of the COPY backend and of the job's two processes (utime + stime, from
# /proc; the parallel workers of the job's CREATE INDEX not included) are
# printed too, with their ratio, as a steadier comparison.  The phases come from
# the job's log line: set LOGFILE when the server logs to a file of its own.
# Needs dynindex.exchange_directory set and the server on this machine (the files
# are written into its data directory: run as the server's owner or root).
set -euo pipefail
DB=${1:-${PGDATABASE:-postgres}}
SIZES=${SIZES:-${N:-1000000}}
FILES=${FILES:-10}
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
q() { psql -qAtX -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

q -c "CREATE EXTENSION IF NOT EXISTS dynindex" >/dev/null
DATA=$(q -c "SHOW data_directory")
XDIR=$(q -c "SHOW dynindex.exchange_directory")
case "$XDIR" in /*) ;; *) XDIR="$DATA/$XDIR" ;; esac
OWNER=$(stat -c %U "$DATA")
echo "# $(date -u +%FT%TZ) load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
printf '%-9s %10s %10s %8s %8s %8s %10s %10s %10s %9s %10s %11s\n' items copy_s import_s load_s index_s ratio job_anon_mb copy_cpu_s job_cpu_s cpu_ratio load_cpu_s index_cpu_s
# CPU seconds (utime + stime) of a process from its /proc/<pid>/stat
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat" 2>/dev/null || true; }

for n in $SIZES; do
  dir="$XDIR/bench_import_$n"
  if [ ! -f "$dir/copy.tsv" ]; then
    python3 "$HERE/import_gen.py" "$dir" "$n" "$FILES"
    chown -R "$OWNER" "$dir" 2>/dev/null || true
  fi
  q -c "SELECT dynindex.set_object_store('bench_import', 'directory', directory => '$(basename "$XDIR")/bench_import_$n')" >/dev/null
  # 1. COPY
  q -c "DROP TABLE IF EXISTS bench_copy; CREATE TABLE bench_copy (pk text, sk text, item jsonb)"
  t0=$(date +%s.%N)
  # the backend's own CPU time after the COPY (superuser: pg_read_file of /proc/self/stat)
  copy_cpu=$(q -c "COPY bench_copy FROM '$dir/copy.tsv'" -c "SELECT pg_read_file('/proc/self/stat')" |
    awk -v hz="$(getconf CLK_TCK)" 'NF > 14 {print ($14 + $15) / hz; exit}')
  t1=$(date +%s.%N)
  copy_s=$(echo "$t1 - $t0" | bc)
  q -c "DROP TABLE bench_copy"
  # 2. ImportTable
  q -c "SELECT dynindex.api('DeleteTable', '{\"TableName\": \"BenchImport\"}')" >/dev/null 2>&1 || true
  t0=$(date +%s.%N)
  arn=$(q -c "SELECT dynindex.api('ImportTable', '{\"S3BucketSource\": {\"S3Bucket\": \"bench_import\", \"S3KeyPrefix\": \"data/\"},
    \"InputFormat\": \"DYNAMODB_JSON\", \"InputCompressionType\": \"GZIP\",
    \"TableCreationParameters\": {\"TableName\": \"BenchImport\", \"BillingMode\": \"PAY_PER_REQUEST\",
      \"KeySchema\": [{\"AttributeName\": \"pk\", \"KeyType\": \"HASH\"}, {\"AttributeName\": \"sk\", \"KeyType\": \"RANGE\"}],
      \"AttributeDefinitions\": [{\"AttributeName\": \"pk\", \"AttributeType\": \"S\"}, {\"AttributeName\": \"sk\", \"AttributeType\": \"S\"},
        {\"AttributeName\": \"gpk\", \"AttributeType\": \"S\"}, {\"AttributeName\": \"gsk\", \"AttributeType\": \"N\"},
        {\"AttributeName\": \"status\", \"AttributeType\": \"S\"}],
      \"GlobalSecondaryIndexes\": [
        {\"IndexName\": \"ByRegion\", \"KeySchema\": [{\"AttributeName\": \"gpk\", \"KeyType\": \"HASH\"}, {\"AttributeName\": \"gsk\", \"KeyType\": \"RANGE\"}], \"Projection\": {\"ProjectionType\": \"ALL\"}},
        {\"IndexName\": \"ByStatus\", \"KeySchema\": [{\"AttributeName\": \"status\", \"KeyType\": \"HASH\"}], \"Projection\": {\"ProjectionType\": \"KEYS_ONLY\"}}]}}')->'ImportTableDescription'->>'ImportArn'")
  peak=0
  declare -A cpu_by_pid=()
  while :; do
    st=$(q -c "SELECT status FROM dynindex.imports WHERE import_arn = '$arn'")
    [ "$st" = IN_PROGRESS ] || break
    # the job's processes (its own and its helper): memory summed, CPU per process
    sum=0
    for pid in $(q -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'dynindex job'"); do
      # a process's own memory (anonymous pages; shared buffers are not its own)
      kb=$(awk '/RssAnon/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
      sum=$((sum + ${kb:-0}))
      c=$(cpu_of "$pid"); [ -n "$c" ] && cpu_by_pid[$pid]=$c
    done
    [ "$sum" -gt "$peak" ] && peak=$sum
    sleep 0.5
  done
  job_cpu=0
  for c in "${cpu_by_pid[@]}"; do job_cpu=$(echo "$job_cpu + $c" | bc); done
  t1=$(date +%s.%N)
  import_s=$(echo "$t1 - $t0" | bc)
  [ "$st" = COMPLETED ] || { echo "import $st: $(q -c "SELECT failure_message FROM dynindex.imports WHERE import_arn = '$arn'")" >&2; exit 1; }
  got=$(q -c "SELECT imported_items FROM dynindex.imports WHERE import_arn = '$arn'")
  [ "$got" = "$n" ] || { echo "imported $got of $n" >&2; exit 1; }
  id=$(q -c "SELECT import_id FROM dynindex.imports WHERE import_arn = '$arn'")
  line=$(grep -h "dynindex: import $id completed" "$DATA"/log/* "$DATA"/pg_log/* ${LOGFILE:-} 2>/dev/null | tail -1 || true)
  load_s=$(echo "$line" | sed -n 's/.*loaded in \([0-9.]*\) s.*/\1/p')
  index_s=$(echo "$line" | sed -n 's/.*built in \([0-9.]*\) s.*/\1/p')
  # the job process's CPU seconds in each phase (its log line; its helper's and the index
  # builds' parallel workers' not included)
  load_cpu=$(echo "$line" | sed -n 's/.*loaded in [0-9.]* s (CPU \([0-9.]*\) s).*/\1/p')
  index_cpu=$(echo "$line" | sed -n 's/.*built in [0-9.]* s (CPU \([0-9.]*\) s).*/\1/p')
  printf '%-9s %10.1f %10.1f %8s %8s %8.2f %10d %10.1f %10.1f %9.2f %10s %11s\n' "$n" "$copy_s" "$import_s" "${load_s:--}" "${index_s:--}" \
    "$(echo "$copy_s / $import_s" | bc -l)" "$((peak / 1024))" "$copy_cpu" "$job_cpu" "$(echo "$copy_cpu / $job_cpu" | bc -l)" \
    "${load_cpu:--}" "${index_cpu:--}"
done
