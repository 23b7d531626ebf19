#!/usr/bin/env bash
# Runs every benchmark of the project and prints one table: each figure, the baseline measured in
# the same run, their ratio and the target (tests/bench/README.md, "scripts/bench.sh: how to read
# the table"). Everything is built once with -c opt. Each bench prints its figures as
# `@row<TAB>...` lines (tests/bench/bench_table.h) among its own output; this script keeps each
# bench's whole output in a log directory and collects the rows.
#
#   scripts/bench.sh                      # modest counts: ~6 minutes on 2 cores at load 5
#   scripts/bench.sh --full               # each bench's own default counts (longer)
#   scripts/bench.sh --only=exec,proxy    # some benches: exec proxy egress command_policy push
#                                         #   worktree create_guard microvm
#   BENCH_ARGS_exec="--warm-runs=400" scripts/bench.sh --only=exec   # a bench's arguments
#
# Options: --logs=DIR (default: a new /tmp/ccsbench-logs.XXXXXX), --no-build, --timeout=SECONDS
# per bench (default 1200). Needs root (the create guard, the worktree volumes, the sandboxes).
# Exits non-zero only when a bench failed to build or run; a missed target is a "no" in the
# table, not a failure.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

benches=(exec proxy egress command_policy push worktree create_guard microvm)
full=0
only=""
logs=""
build=1
timeout_s=1200
for arg in "$@"; do
  case "$arg" in
    --full) full=1 ;;
    --only=*) only=${arg#--only=} ;;
    --logs=*) logs=${arg#--logs=} ;;
    --no-build) build=0 ;;
    --timeout=*) timeout_s=${arg#--timeout=} ;;
    -h | --help)
      sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "bench.sh: unknown argument $arg (see --help)" >&2
      exit 2
      ;;
  esac
done
if [ -n "$only" ]; then
  IFS=, read -r -a benches <<<"$only"
fi

# The modest counts of the default run, per bench (--full: none, the bench's own defaults).
modest_args() {
  case "$1" in
    exec) echo "--idle-sessions=50" ;;
    proxy) echo "--bulk_mib=1024 --rate_seconds=2" ;;
    egress) echo "--bulk-mib=1024 --rate-seconds=2" ;;
    command_policy) echo "--seconds=1" ;;
    push) echo "--mib=50 --rounds=3" ;;
    worktree) echo "--files=10000 --rounds=2" ;;
    create_guard) echo "20000" ;;
    microvm) echo "--launches=3 --execs=30" ;;
  esac
}

targets=(//launcher:sandbox_launcherd //broker:sandbox_brokerd //broker:sandboxctl)
for bench in "${benches[@]}"; do
  case "$bench" in
    exec | proxy | command_policy | push | worktree) targets+=("//tests/bench:${bench}_bench") ;;
    microvm) targets+=(//tests/bench:microvm_bench //broker/microvm/agent:ccsandbox_agent) ;;
    egress) targets+=(//tests/bench:egress_bench //tests/bench:egress_bench_client) ;;
    create_guard) targets+=(//launcher/create_guard:create_guard_bench) ;;
    *)
      echo "bench.sh: no bench '$bench' (${benches[*]})" >&2
      exit 2
      ;;
  esac
done

if [ -z "$logs" ]; then
  logs=$(mktemp -d /tmp/ccsbench-logs.XXXXXX)
else
  mkdir -p "$logs"
fi
if [ "$build" -eq 1 ]; then
  if ! bazel build -c opt "${targets[@]}" >"$logs/build.log" 2>&1; then
    tail -30 "$logs/build.log" >&2
    echo "bench.sh: the build failed (log: $logs/build.log)" >&2
    exit 1
  fi
fi
bin=$(bazel info -c opt bazel-bin 2>/dev/null)

command_of() {
  case "$1" in
    exec)
      echo "$bin/tests/bench/exec_bench --launcherd=$bin/launcher/sandbox_launcherd" \
        "--brokerd=$bin/broker/sandbox_brokerd --sandboxctl=$bin/broker/sandboxctl"
      ;;
    egress)
      echo "$bin/tests/bench/egress_bench --launcherd=$bin/launcher/sandbox_launcherd" \
        "--brokerd=$bin/broker/sandbox_brokerd --sandboxctl=$bin/broker/sandboxctl" \
        "--client=$bin/tests/bench/egress_bench_client"
      ;;
    command_policy)
      echo "$bin/tests/bench/command_policy_bench --cases=tests/testdata/command_policy_cases.tsv"
      ;;
    create_guard) echo "$bin/launcher/create_guard/create_guard_bench" ;;
    microvm)
      echo "$bin/tests/bench/microvm_bench --launcherd=$bin/launcher/sandbox_launcherd" \
        "--brokerd=$bin/broker/sandbox_brokerd --agent=$bin/broker/microvm/agent/ccsandbox_agent"
      ;;
    *) echo "$bin/tests/bench/${1}_bench" ;;
  esac
}

load() { cut -d' ' -f1-3 /proc/loadavg; }
{
  echo "scripts/bench.sh at $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo '+dirty')" \
    "on $(date -u '+%Y-%m-%d %H:%M UTC'), -c opt, $(nproc) CPUs, $(uname -r)"
  echo "counts: $([ "$full" -eq 1 ] && echo "each bench's defaults (--full)" || echo modest)"
  echo "logs: $logs"
} | tee "$logs/header.txt"

failed=()
: >"$logs/rows.tsv"
: >"$logs/runs.txt"
for bench in "${benches[@]}"; do
  var="BENCH_ARGS_$bench"
  if [ -n "${!var:-}" ]; then
    args=${!var}
  elif [ "$full" -eq 1 ]; then
    args=""
  else
    args=$(modest_args "$bench")
  fi
  cmd="$(command_of "$bench") $args"
  before=$(load)
  start=$(date +%s)
  echo "== $bench: $cmd" >&2
  # shellcheck disable=SC2086  # the command and its arguments are words
  timeout --signal=TERM --kill-after=30 "$timeout_s" $cmd >"$logs/$bench.log" 2>&1
  status=$?
  seconds=$(($(date +%s) - start))
  result="ok"
  if [ "$status" -ne 0 ]; then
    result="FAILED (exit $status$([ "$status" -eq 124 ] && echo ", timed out"))"
    failed+=("$bench")
    tail -15 "$logs/$bench.log" | sed "s/^/  $bench: /" >&2
  fi
  printf '%-15s %-28s %5d s   load %s -> %s   args: %s\n' "$bench" "$result" "$seconds" \
    "$before" "$(load)" "${args:-(defaults)}" | tee -a "$logs/runs.txt" >&2
  # A row may follow output that did not end its line: take it from its prefix on.
  grep -ao $'@row\t.*' "$logs/$bench.log" | sed "s/^@row\t/$bench\t/" >>"$logs/rows.tsv"
done

# The table: columns as wide as their widest cell.
{
  cat "$logs/header.txt"
  echo
  printf 'bench\tfigure\tours\tbaseline\tratio\ttarget\tmet\n' >"$logs/table.tsv"
  awk -F'\t' -v OFS='\t' '{
    baseline = $4 == "-" ? "-" : $4 " = " $5
    print $1, $2, $3, baseline, $6, $7, $8
  }' "$logs/rows.tsv" >>"$logs/table.tsv"
  awk -F'\t' '
    { for (i = 1; i <= NF; i++) { cell[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } }
    END {
      for (r = 1; r <= NR; r++) {
        line = ""
        for (i = 1; i <= 7; i++) line = line sprintf(i < 7 ? "%-" w[i] "s  " : "%s", cell[r, i])
        print line
        if (r == 1) {
          rule = ""
          for (i = 1; i <= 7; i++) rule = rule sprintf("%" w[i] "s", "") (i < 7 ? "  " : "")
          gsub(/ /, "-", rule)
          print rule
        }
      }
    }' "$logs/table.tsv"
  echo
  met=$(awk -F'\t' '$8 == "yes"' "$logs/rows.tsv" | wc -l)
  missed=$(awk -F'\t' '$8 == "no"' "$logs/rows.tsv" | wc -l)
  echo "$(wc -l <"$logs/rows.tsv") figures; targets met $met, missed $missed"
  echo "runs (bench, result, wall time, load average before -> after, arguments):"
  sed 's/^/  /' "$logs/runs.txt"
} | tee "$logs/table.txt"

if [ "${#failed[@]}" -gt 0 ]; then
  echo "bench.sh: FAILED to run: ${failed[*]} (logs in $logs)" >&2
  exit 1
fi
