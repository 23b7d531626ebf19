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
echo "${summary}"
echo "${passed} passed, ${failed} failed"
if [ "$status" -eq 0 ] && [ "$passed" -eq 0 ]; then
  echo "no test ran" >&2
  exit 1
fi
exit "$status"
