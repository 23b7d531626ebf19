#!/usr/bin/env bash
# Runs every test: unit tests of each component and the end-to-end tests against the real
# daemons, real bwrap and real sockets. Needs root (CI runs as root).
set -uo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh || exit 1
trap 'bazel shutdown >/dev/null 2>&1' EXIT

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

# Short fuzz runs (libFuzzer + ASan/UBSan): the HTTP head and SOCKS5 parsers, the egress matcher,
# the shell command policy, the push gateway's receive-pack parser. A crash, or an unparseable
# line allowed, fails the run.
fuzz_seconds=${FUZZ_SECONDS:-15}
fuzz_dir=$(mktemp -d /tmp/ccsandbox-fuzz.XXXXXX)
EGRESS_FUZZ_DIR=$fuzz_dir/egress tests/fuzz/run_egress_fuzz.sh "$fuzz_seconds"
egress_fuzz=$?
COMMAND_FUZZ_DIR=$fuzz_dir/command tests/fuzz/run_command_policy_fuzz.sh "$fuzz_seconds"
command_fuzz=$?
GATEWAY_FUZZ_DIR=$fuzz_dir/gateway tests/fuzz/run_gateway_fuzz.sh "$fuzz_seconds"
gateway_fuzz=$?
rm -rf "$fuzz_dir"
# Every C++ file formatted as .clang-format says (Google style, 100 columns).
scripts/check-format.sh
format=$?

if [ "$format" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; fi
if [ "$egress_fuzz" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; fi
if [ "$command_fuzz" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; fi
if [ "$gateway_fuzz" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); status=1; fi
echo "format: $([ $format -eq 0 ] && echo ok || echo FAILED)"
echo "fuzz (${fuzz_seconds}s per target): egress parsers and matcher $([ $egress_fuzz -eq 0 ] && echo ok || echo FAILED), command policy $([ $command_fuzz -eq 0 ] && echo ok || echo FAILED), push gateway $([ $gateway_fuzz -eq 0 ] && echo ok || echo FAILED)"

echo "${summary}"
echo "${passed} passed, ${failed} failed"
exit "$status"
