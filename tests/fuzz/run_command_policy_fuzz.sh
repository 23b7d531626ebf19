#!/usr/bin/env bash
# Builds the shell command policy fuzz target with clang++ (libFuzzer + ASan + UBSan, Debian's
# clang) and runs it for N seconds (default 60). Not part of `bazel test //...`.
#   tests/fuzz/run_command_policy_fuzz.sh [seconds]
# Seeds: every command line of tests/testdata/command_policy_cases.tsv. Work files (binary,
# corpus, crash inputs) go to ${COMMAND_FUZZ_DIR:-/tmp/command_policy_fuzz}.
# Exits non-zero when the target crashes or an invariant traps; the input is printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
work=${COMMAND_FUZZ_DIR:-/tmp/command_policy_fuzz}
cxx=${CXX_FUZZ:-clang++}
command -v "$cxx" >/dev/null || { echo "run_command_policy_fuzz: $cxx not found; install: apt-get install clang" >&2; exit 1; }
mkdir -p "$work/corpus" "$work/crashes"

flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I.)
absl=(-labsl_statusor -labsl_status -labsl_cord -labsl_str_format_internal -labsl_strings
      -labsl_strings_internal -labsl_throw_delegate -labsl_base -labsl_raw_logging_internal
      -labsl_int128 -labsl_raw_hash_set -labsl_hash -labsl_city -labsl_low_level_hash)
# The sources of //policy/command:command_policy and everything it depends on in this tree (no
# generated code: the command policy is proto-free).
mapfile -t sources < <(bazel query --noshow_progress \
  'kind("source file", deps(//policy/command:command_policy))' 2>/dev/null |
  sed -n 's|^//\([^:]*\):\(.*\.cc\)$|\1/\2|p')
[[ ${#sources[@]} -gt 0 ]] || { echo "run_command_policy_fuzz: bazel query found no sources" >&2; exit 1; }

echo "== command_policy_fuzz: building"
"$cxx" "${flags[@]}" tests/fuzz/command_policy_fuzz.cc "${sources[@]}" "${absl[@]}" \
  -o "$work/command_policy_fuzz"

# One seed file per table row ('↵' is a newline there).
i=0
while IFS=$'\t' read -r command _; do
  [[ -z "$command" || "$command" == \#* ]] && continue
  printf '%s' "${command//↵/$'\n'}" >"$work/corpus/seed_$i"
  i=$((i + 1))
done <tests/testdata/command_policy_cases.tsv

cat >"$work/shell.dict" <<'DICT'
"&&"
"||"
";;"
"|&"
"$("
"`"
"${"
"$(("
"<("
">("
"<<'EOF'\x0a"
"\x0aEOF\x0a"
"<<<"
"2>&1"
"&>"
"bash -c '"
"eval "
"sudo "
"git push "
"rm -rf /"
"if "
"then "
"fi"
"case "
" in "
"esac"
"for "
"do "
"done"
"{ "
" }"
"function "
"()"
"$'\\x"
"[["
"]]"
DICT

echo "== command_policy_fuzz: fuzzing for ${seconds}s ($i seeds)"
status=0
"$work/command_policy_fuzz" "$work/corpus" -dict="$work/shell.dict" -max_total_time="$seconds" \
  -max_len=8192 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
  -artifact_prefix="$work/crashes/" 2>&1 | tee "$work/last_run.log" | grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|stat::|==|SUMMARY|.*(ERROR|crash|deadly|timeout))' || true
if grep -qE 'ERROR: libFuzzer|ERROR: AddressSanitizer|runtime error|deadly signal|ALARM' "$work/last_run.log"; then
  status=1
  for f in "$work"/crashes/*; do
    [[ -e "$f" ]] || continue
    echo "== crashing input $f:"
    od -c "$f" | head -20
  done
fi
exit "$status"
