#!/usr/bin/env bash
# Runs every test: unit tests of each component and the end-to-end tests against the real
# daemons, real bwrap and real sockets. Needs root (CI runs as root).
#   scripts/test.sh                   # what CI runs
#   scripts/test.sh --sanitized-e2e   # and the end-to-end tests under ASan + UBSan too (below)
set -uo pipefail
cd "$(dirname "$0")/.."

sanitized_e2e=${CCSANDBOX_SANITIZED_E2E:-0}
for arg in "$@"; do
  case "$arg" in
    --sanitized-e2e) sanitized_e2e=1 ;;
    *) echo "usage: scripts/test.sh [--sanitized-e2e]" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh || exit 1
trap 'bazel shutdown >/dev/null 2>&1' EXIT

# The Node client example's dependencies, from the npm registry (package-lock.json pins them):
# Bazel's tests are offline, so tests/e2e_examples_test finds them in the source tree (and
# fails under CI without them).
if [ ! examples/node/node_modules/.package-lock.json -nt examples/node/package-lock.json ]; then
  (cd examples/node && npm ci --no-audit --no-fund) || echo "test.sh: npm ci in examples/node failed" >&2
fi

bazel test --nocache_test_results //... 2>&1 | tee /tmp/ccsandbox-test.$$.log
status=${PIPESTATUS[0]}
summary=$(grep -E '^Executed [0-9]+ out of [0-9]+ tests?:' /tmp/ccsandbox-test.$$.log | tail -1)
passed=$(grep -cE '^//.* PASSED in ' /tmp/ccsandbox-test.$$.log)
failed=$(grep -cE '^//.* (FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD)' /tmp/ccsandbox-test.$$.log)
rm -f /tmp/ccsandbox-test.$$.log
if [ "$status" -eq 0 ] && [ "$passed" -eq 0 ]; then
  echo "no test ran" >&2
  exit 1
fi

# The unit tests again under ASan + UBSan (.bazelrc's --config=asan-ubsan): a second full build,
# in its own output tree (the disk cache keeps it between runs). A memory error, a leak or
# undefined behaviour fails it.
# With --sanitized-e2e (or CCSANDBOX_SANITIZED_E2E=1) the tests in tests/ run in it too, against
# daemons of the same sanitized build; the fixture fails a test on a report in a daemon's log
# (tests/sanitizer_report.h). Not by default: it adds more than CI's budget allows (README.md,
# "Quick start", has the figures). The tests that boot the guest agent stay out: it must be a
# static binary, which a sanitizer build cannot link (broker/microvm/agent/BUILD.bazel).
sanitized_targets=(//base/... //broker/... //gateway/... //launcher/... //policy/... //proxy/...
  //workspace/...)
sanitized_name="unit tests"
if [ "$sanitized_e2e" = 1 ]; then
  sanitized_targets+=(//tests:all)
  for agent_test in $(bazel query --output=label \
    'kind(".*_test", rdeps(//tests:all, //broker/microvm/agent:ccsandbox_agent))'); do
    sanitized_targets+=("-$agent_test")
  done
  sanitized_name="unit and end-to-end tests"
fi
sanitized_log=/tmp/ccsandbox-asan.$$.log
bazel test --config=asan-ubsan --nocache_test_results -- "${sanitized_targets[@]}" 2>&1 |
  tee "$sanitized_log"
sanitized=${PIPESTATUS[0]}
sanitized_summary=$(grep -E '^Executed [0-9]+ out of [0-9]+ tests?:' "$sanitized_log" | tail -1)
sanitized_failed=$(grep -E '^//.* (FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD)' "$sanitized_log" |
  awk '{print $1}' | paste -sd' ')
rm -f "$sanitized_log"

# Short fuzz runs (libFuzzer + ASan/UBSan) of every target in tests/fuzz/ (tests/fuzz/README.md):
# a crash, a leak, a timeout or a broken invariant fails the run. Objects are cached between runs
# in the build directory; the corpora start from the committed seeds each time.
fuzz_seconds=${FUZZ_SECONDS:-8}
fuzz_dir=$(mktemp -d /tmp/ccsandbox-fuzz.XXXXXX)
tests/fuzz/run_fuzz.sh --seconds="$fuzz_seconds" --work="$fuzz_dir" \
  --build-dir="${FUZZ_BUILD_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccsandbox-fuzz}" 2>&1 |
  tee "$fuzz_dir/run.log"
fuzz=${PIPESTATUS[0]}
fuzz_line=$(grep -E '^fuzz' "$fuzz_dir/run.log" | tail -1)
rm -rf "$fuzz_dir"
# Every C++ file formatted as .clang-format says (Google style, 100 columns).
scripts/check-format.sh
format=$?

if [ "$format" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; fi
if [ "$fuzz" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; fi
if [ "$sanitized" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; fi
echo "format: $([ $format -eq 0 ] && echo ok || echo FAILED)"
echo "${fuzz_line:-fuzz: FAILED (the runner printed no summary)}"
if [ "$sanitized" -eq 0 ]; then
  echo "asan-ubsan $sanitized_name: ok (${sanitized_summary:-no summary})"
else
  echo "asan-ubsan $sanitized_name: FAILED ${sanitized_failed:-(no test ran or the build failed)}" \
    "(${sanitized_summary:-no summary})"
fi

echo "${summary}"
echo "${passed} passed, ${failed} failed"
exit "$status"
