#!/usr/bin/env bash
# The one fuzz runner: builds the libFuzzer targets of tests/fuzz/ with clang++ (libFuzzer + ASan
# + UBSan, outside Bazel) and runs each on a copy of its committed seed corpus.
#
#   tests/fuzz/run_fuzz.sh [--seconds=N] [--runs=N] [--jobs=N] [--work=DIR] [--build-dir=DIR]
#                          [--list] [TARGET...]
#
# No TARGET: every target of the table below. A target stops after --seconds (default 10 when
# neither limit is given) or --runs executions, whichever comes first; --jobs targets (default 2)
# build and run at once. Work files go to --work (default /tmp/ccsandbox-fuzz): corpus/<target>
# (the seeds of tests/fuzz/corpus/<target>, then what the run adds; kept between runs),
# crashes/<target> (libFuzzer's crash-*, leak-*, timeout-*, oom-* inputs), logs/<target>.log.
# Objects and binaries go to --build-dir (default <work>/build) and are rebuilt only when a source
# or a header changed. The repository is never written.
#
# Prints one line per target (executions, exec/s, seconds, corpus size, crashes) and ends with
# "fuzz (...): <target> ok|FAILED, ...". Exits non-zero when any target crashed, broke an
# invariant (fuzz_check.h), leaked, timed out or failed to build; each crashing input is printed.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

# Source groups several targets share.
egress='policy/egress/*.cc'
plan='policy/plan/{create_guard_rules,workdir_visible,trusted_names,spec_validation,push_wiring,push_spec,plan_validation,path_spellings,launch_plan,input_limits,filename_policy,filename_patterns,egress_wiring,deny_sets,create_guard_plan,bwrap_argv}.cc policy/guardrails/guardrails.cc policy/mode.cc base/paths.cc launcher/shim_plan.cc launcher/shim/shim_args.cc'

# target | sources besides tests/fuzz/<target>.cc (globs and {a,b}; *_test.cc never match) |
# libs: absl, proto (the generated messages and libprotobuf), any other NAME is -lNAME | -max_len
TABLE="
http_head_parser_fuzz    | proxy/http_head_parser.cc proxy/http_forward.cc | absl | 20000
socks5_parser_fuzz       | proxy/socks5_parser.cc policy/egress/address.cc | absl | 1200
egress_matcher_fuzz      | $egress | absl | 600
command_policy_fuzz      | policy/command/*.cc policy/mode.cc policy/plan/env_scrub.cc | absl | 8192
receive_pack_fuzz        | gateway/pkt_line.cc gateway/receive_pack.cc gateway/report_status.cc | absl | 4000
violation_line_fuzz      | policy/violations/{parser,line_text,vocabulary}.cc | absl proto | 12000
seatbelt_log_fuzz        | policy/violations/{parser,line_text,vocabulary,seatbelt_log,seatbelt_monitor}.cc | absl proto | 20000
shim_args_fuzz           | launcher/shim/shim_args.cc base/paths.cc | absl | 2000
init_channel_fuzz        | launcher/shim/init_protocol.cc | absl | 8192
pkt_line_fuzz            | gateway/{pkt_line,report_status,receive_pack}.cc | absl | 8192
http_body_fuzz           | gateway/http_body.cc | absl | 4096
ls_refs_fuzz             | gateway/{upstream_symrefs,upstream,pkt_line,receive_pack}.cc | absl curl | 4096
guardrails_fuzz          | policy/guardrails/guardrails.cc | absl | 2048
hosts_file_fuzz          | proxy/{hosts_file_resolver,resolver}.cc policy/egress/{host,address}.cc | absl | 4096
dashed_flags_fuzz        | | absl | 1024
path_confinement_fuzz    | policy/guardrails/path_confinement.cc base/paths.cc | absl | 512
paths_fuzz               | base/paths.cc workspace/layout.cc policy/plan/dispatch_binds.cc | absl proto | 1400
launch_plan_fuzz         | $plan | absl proto | 6000
git_config_fuzz          | policy/plan/git_config_paths.cc base/paths.cc | absl | 2048
credential_fuzz          | gateway/credential_request.cc launcher/shim/git_credential.cc policy/plan/{push_wiring,egress_wiring}.cc | absl | 2048
filename_rules_fuzz      | policy/plan/{filename_patterns,trusted_names}.cc | absl | 4096
proc_status_fuzz         | launcher/create_guard/tracee.cc base/peer_check.cc | absl | 16384
spec_json_fuzz           | $plan broker/cli_spec.cc $egress | absl proto | 6000
"

seconds=""
runs=""
jobs=2
work=/tmp/ccsandbox-fuzz
build=""
list=false
targets=()
for arg in "$@"; do
  case "$arg" in
    --seconds=*) seconds=${arg#*=} ;;
    --runs=*) runs=${arg#*=} ;;
    --jobs=*) jobs=${arg#*=} ;;
    --work=*) work=${arg#*=} ;;
    --build-dir=*) build=${arg#*=} ;;
    --list) list=true ;;
    -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run_fuzz: unknown option '$arg' (see --help)" >&2; exit 2 ;;
    *) targets+=("$arg") ;;
  esac
done
[[ -z "$seconds" && -z "$runs" ]] && seconds=10
build=${build:-$work/build}

declare -A srcs libs max_len
all=()
set -f  # the table's globs are expanded when the Makefile is written, not here
while IFS='|' read -r name sources lib len; do
  name=$(echo $name)
  [[ -z "$name" ]] && continue
  all+=("$name")
  srcs[$name]=$(echo $sources)
  libs[$name]=$(echo $lib)
  max_len[$name]=$(echo $len)
done <<<"$TABLE"
set +f
if $list; then
  printf '%s\n' "${all[@]}"
  exit 0
fi
[[ ${#targets[@]} -eq 0 ]] && targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ -n "${max_len[$t]:-}" ]] || { echo "run_fuzz: unknown target '$t' (--list shows them)" >&2; exit 2; }
done

cxx=${CXX_FUZZ:-clang++}
command -v "$cxx" >/dev/null || { echo "run_fuzz: $cxx not found; install: apt-get install clang" >&2; exit 1; }
command -v make >/dev/null || { echo "run_fuzz: make not found; install: apt-get install make" >&2; exit 1; }
mkdir -p "$work" "$build" || exit 1
# The dependency files name sources by absolute path: objects built from another checkout would
# send make after files that no longer exist, so a build dir follows one checkout at a time.
if [[ -f "$build/root.stamp" && "$(cat "$build/root.stamp")" != "$root" ]]; then
  echo "== fuzz: $build was built from $(cat "$build/root.stamp"); starting it afresh for $root"
  rm -rf "${build:?}/obj" "${build:?}/gen" "${build:?}/bin"
fi
echo "$root" >"$build/root.stamp"

# --- build: a generated Makefile, so objects are shared between targets, built in parallel and
# rebuilt only when their source or a header (-MMD) changed.
flags='-std=c++20 -O1 -gline-tables-only -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined -pthread -DASIO_STANDALONE -DASIO_NO_DEPRECATED'
absl_libs=$(pkg-config --libs absl_statusor absl_strings absl_str_format absl_flat_hash_map \
  absl_synchronization absl_time 2>/dev/null) ||
  absl_libs='-labsl_statusor -labsl_status -labsl_cord -labsl_str_format_internal -labsl_strings -labsl_strings_internal -labsl_throw_delegate -labsl_base -labsl_raw_logging_internal -labsl_int128 -labsl_raw_hash_set -labsl_hash -labsl_city -labsl_low_level_hash -labsl_synchronization -labsl_time'
expand() {  # the .cc files a table entry names
  local pattern f
  for pattern in $(eval echo "$1"); do  # brace expansion first, then the globs
    for f in $(compgen -G "$pattern" | sort); do
      [[ "$f" == *_test.cc ]] || echo "$f"
    done
  done
}
{
  echo "ROOT := $root"
  echo "B := $build"
  echo "CXX := $cxx"
  echo "FLAGS := $flags"
  echo "CXXFLAGS := \$(FLAGS) -I\$(ROOT) -I\$(B)/gen -MMD -MP"
  echo ".DELETE_ON_ERROR:"
  echo ".SECONDARY:"  # protoc's output is no intermediate file to delete after use
  echo "PROTOS := \$(ROOT)/proto/sandbox.proto \$(ROOT)/proto/launcher.proto \$(ROOT)/proto/policy.proto \$(ROOT)/proto/workspace.proto"
  echo "\$(B)/gen/proto.stamp: \$(PROTOS)"
  echo "	@mkdir -p \$(B)/gen && cd \$(ROOT) && /usr/bin/protoc -I. -I/usr/include --cpp_out=\$(B)/gen proto/sandbox.proto proto/launcher.proto proto/policy.proto proto/workspace.proto && touch \$@"
  echo "\$(B)/gen/proto/%.pb.cc: \$(B)/gen/proto.stamp ;"
  # The generated messages: sanitized, without coverage feedback (it would only steer the
  # fuzzer into accessors).
  echo "\$(B)/obj/gen/%.o: \$(B)/gen/%.cc \$(B)/flags.stamp"
  echo "	@mkdir -p \$(@D); echo '   compile \$<'; \$(CXX) \$(CXXFLAGS) -c \$< -o \$@"
  echo "\$(B)/obj/%.o: \$(ROOT)/%.cc \$(B)/flags.stamp | \$(B)/gen/proto.stamp"
  echo "	@mkdir -p \$(@D); echo '   compile \$*.cc'; \$(CXX) \$(CXXFLAGS) -fsanitize=fuzzer-no-link -c \$< -o \$@"
  for t in "${targets[@]}"; do
    objs="\$(B)/obj/tests/fuzz/$t.o"
    for f in $(expand "${srcs[$t]}"); do objs+=" \$(B)/obj/${f%.cc}.o"; done
    link="$absl_libs"
    for lib in ${libs[$t]}; do
      case "$lib" in
        absl) ;;
        proto)
          for p in sandbox launcher policy workspace; do objs+=" \$(B)/obj/gen/proto/$p.pb.o"; done
          link+=" -lprotobuf" ;;
        *) link+=" -l$lib" ;;
      esac
    done
    echo "\$(B)/bin/$t: $objs"
    echo "	@mkdir -p \$(@D); echo '   link $t'; \$(CXX) \$(FLAGS) -fsanitize=fuzzer \$^ $link -lpthread -o \$@"
    echo "all: \$(B)/bin/$t"
  done
  echo "-include \$(shell find \$(B)/obj -name '*.d' 2>/dev/null)"
} >"$build/Makefile"

# Objects depend on the compiler and its flags too.
echo "$cxx $flags" | cmp -s - "$build/flags.stamp" || echo "$cxx $flags" >"$build/flags.stamp"
echo "== fuzz: building ${#targets[@]} target(s) in $build"
build_start=$(date +%s)
unbuilt=()
if ! make -s -k -j"$jobs" -f "$build/Makefile" all >"$build/make.log" 2>&1; then
  grep -v '^   compile\|^   link' "$build/make.log" | head -40
  for t in "${targets[@]}"; do
    make -q -f "$build/Makefile" "$build/bin/$t" 2>/dev/null || unbuilt+=("$t")
  done
  echo "run_fuzz: the build failed for ${unbuilt[*]:-a target}; full log: $build/make.log" >&2
  # An old binary of a target whose new sources do not compile must not run instead.
  for t in "${unbuilt[@]}"; do rm -f "$build/bin/$t"; done
fi
echo "== fuzz: built in $(($(date +%s) - build_start))s ($(grep -c '^   compile' "$build/make.log") compiled)"

# --- run
limit=()
[[ -n "$seconds" ]] && limit+=(-max_total_time="$seconds")
[[ -n "$runs" ]] && limit+=(-runs="$runs")
mkdir -p "$work/results" "$work/logs"

run_one() {  # run_one <target>: writes $work/results/<target>
  local t=$1 corpus=$work/corpus/$1 crashes=$work/crashes/$1 log=$work/logs/$1.log
  mkdir -p "$corpus" "$crashes"
  cp -n "tests/fuzz/corpus/$t/"* "$corpus/" 2>/dev/null
  local dict=()
  [[ -f "tests/fuzz/dict/$t.dict" ]] && dict=(-dict="tests/fuzz/dict/$t.dict")
  local before start end rc
  before=$(ls "$crashes" | wc -l)
  start=$(date +%s.%N)
  "$build/bin/$t" "${limit[@]}" "${dict[@]}" -max_len="${max_len[$t]}" -timeout=10 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" >"$log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  local execs rate found
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  found=$(($(ls "$crashes" | wc -l) - before))
  # An artifact without a non-zero exit is still a failure, and so is an exit without stats.
  [[ $rc -eq 0 && $found -gt 0 ]] && rc=1
  [[ $rc -eq 0 && -z "$execs" ]] && rc=1
  printf '%s %s %s %s %.1f %s %s\n' "$t" "$rc" "${execs:--}" "${rate:--}" \
    "$(echo "$end - $start" | bc)" "$(ls "$corpus" | wc -l)" "$found" >"$work/results/$t"
}

echo "== fuzz: running ${#targets[@]} target(s), $jobs at a time (${seconds:+${seconds}s}${seconds:+${runs:+ or }}${runs:+$runs runs} each)"
rm -f "$work/results/"*
for t in "${targets[@]}"; do
  if [[ " ${unbuilt[*]} " == *" $t "* ]]; then
    echo "$t build - - - - -" >"$work/results/$t"
    continue
  fi
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n; done
  run_one "$t" &
done
wait

status=0
summary=()
printf '%-28s %12s %9s %8s %8s %8s  %s\n' target executions exec/s seconds corpus crashes result
for t in "${targets[@]}"; do
  read -r _ rc execs rate secs corpus found <"$work/results/$t"
  result=ok
  [[ $rc != 0 ]] && result=FAILED && status=1
  [[ $rc == build ]] && result="FAILED TO BUILD"
  printf '%-28s %12s %9s %8s %8s %8s  %s\n' "$t" "$execs" "$rate" "$secs" "$corpus" "$found" "$result"
  summary+=("$t $result")
done
for t in "${targets[@]}"; do
  read -r _ rc _ <"$work/results/$t"
  [[ $rc == 0 || $rc == build ]] && continue
  echo "!! $t: see $work/logs/$t.log"
  grep -E 'invariant failed|ERROR:|SUMMARY:|runtime error|Test unit written|deadly signal|ALARM' \
    "$work/logs/$t.log" | head -8 | sed 's/^/   /'
  for f in $(ls -t "$work/crashes/$t/" 2>/dev/null | head -3); do
    echo "   crashing input $work/crashes/$t/$f ($(stat -c %s "$work/crashes/$t/$f") bytes; cat -v):"
    head -c 768 "$work/crashes/$t/$f" | cat -v | fold -w 96 | head -12 | sed 's/^/     /'
    echo
  done
done
limit_text=${seconds:+${seconds}s}${seconds:+${runs:+ or }}${runs:+$runs runs}
echo "fuzz ($limit_text per target): $(printf '%s, ' "${summary[@]}" | sed 's/, $//')"
exit "$status"
