#!/usr/bin/env bash
# Builds the push gateway's fuzz target with clang++ (libFuzzer + ASan + UBSan, Debian's clang)
# and runs it for N seconds (default 60). Not part of `bazel test //...`.
#   tests/fuzz/run_gateway_fuzz.sh [seconds]
# Work files (binary, corpus, crash inputs) go to ${GATEWAY_FUZZ_DIR:-/tmp/gateway_fuzz}.
# Exits non-zero when the target finds a crash; the input that crashed is printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
work=${GATEWAY_FUZZ_DIR:-/tmp/gateway_fuzz}
cxx=${CXX_FUZZ:-clang++}
command -v "$cxx" >/dev/null || { echo "run_gateway_fuzz: $cxx not found; install: apt-get install clang" >&2; exit 1; }
target=receive_pack_fuzz
mkdir -p "$work/corpus/$target" "$work/crashes/$target"

flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I.)
absl=(-labsl_statusor -labsl_status -labsl_cord -labsl_str_format_internal -labsl_strings
      -labsl_strings_internal -labsl_throw_delegate -labsl_base -labsl_raw_logging_internal
      -labsl_int128)

# Seeds: what git sends for a push (the first byte picks the chunk size), and a push with
# shallow lines and push options.
a=$(printf 'a%.0s' $(seq 40)); b=$(printf 'b%.0s' $(seq 40))
python3 - "$work/corpus/$target" "$a" "$b" <<'PY'
import sys
out, a, b = sys.argv[1], sys.argv[2], sys.argv[3]
def pkt(s):
    return b"%04x" % (len(s) + 4) + s
push = pkt(f"{a} {b} refs/heads/feature/x\0report-status side-band-64k agent=git/2.39.5".encode()) + b"0000PACK"
opts = (pkt(f"shallow {a}".encode()) +
        pkt(f"{a} {b} refs/heads/main\0report-status push-options".encode()) +
        pkt(f"{'0'*40} {b} refs/tags/v1\n".encode()) + b"0000" + pkt(b"ci.skip") + b"0000PACK")
open(f"{out}/push", "wb").write(b"\x07" + push)
open(f"{out}/options", "wb").write(b"\x01" + opts)
PY

echo "== $target: building"
"$cxx" "${flags[@]}" "tests/fuzz/$target.cc" gateway/pkt_line.cc gateway/receive_pack.cc \
  gateway/report_status.cc "${absl[@]}" -o "$work/$target"
echo "== $target: fuzzing for ${seconds}s"
log=$work/$target.log
if "$work/$target" -max_total_time="$seconds" -max_len=4000 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$work/crashes/$target/" "$work/corpus/$target" >"$log" 2>&1; then
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE" "$log" | tail -3
  echo "   corpus: $(ls "$work/corpus/$target" | wc -l) inputs; no crash"
else
  echo "!! $target found a problem:"
  grep -E "ERROR|SUMMARY|Test unit written|invariant" "$log" | head -5
  exit 1
fi
