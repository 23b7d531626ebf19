#!/usr/bin/env bash
# Builds the daemons, sandboxctl and exec_bench, then prints the bench's figures.
# Extra arguments go to exec_bench, e.g. --warm-runs=50 --cli-runs=30 --figures=A,E,F.
set -euo pipefail
cd "$(dirname "$0")/../.."

bazel build //launcher:sandbox_launcherd //broker:sandbox_brokerd //broker:sandboxctl \
  //tests/bench:exec_bench
bin=bazel-bin
exec "$bin/tests/bench/exec_bench" \
  --launcherd="$bin/launcher/sandbox_launcherd" \
  --brokerd="$bin/broker/sandbox_brokerd" \
  --sandboxctl="$bin/broker/sandboxctl" \
  "$@"
