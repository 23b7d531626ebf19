#!/bin/sh
# Checks the macOS build's STRUCTURE from a Linux host (issue 19): Bazel analyses (never
# compiles) a build for //:macos_arm64, with this host's compiler standing in as the C++
# toolchain (//:macos_analysis_cc_toolchain), so it proves which targets a Mac build keeps and
# which it skips as Linux-only, NOT that anything compiles or runs on a Mac (docs/macos.md).
#   scripts/check-macos-seams.sh
set -eu
cd "$(dirname "$0")/.."
flags="--nobuild --jobs=2 --platforms=//:macos_arm64 --extra_toolchains=//:macos_analysis_cc_toolchain"

# Kept on macOS: the shared rules, the egress, and the macOS launch as data.
kept="//policy/seatbelt:seatbelt_profile //policy/violations:seatbelt_log //policy/plan:probe
  //policy/plan:egress_wiring //proxy:session_proxies //broker:session_egress
  //launcher/macos:seatbelt_exec //launcher/macos:process_parent //launcher/macos:spawned_process
  //launcher/macos:seatbelt_launch //launcher/macos:log_stream_monitor //launcher/macos:seatbelt_run
  //launcher:supervised_process //launcher:run_control //launcher:run_supervisor"
# shellcheck disable=SC2086
bazel build $flags $kept
echo "kept on macOS: $(echo $kept | tr '\n' ' ')"

# Skipped on macOS (target_compatible_with = LINUX_ONLY, or needing such a target): each must be
# refused as incompatible.
skipped="//launcher:sandbox_process //launcher:seccomp_baseline //launcher:bind_stage
  //launcher:idmap_userns //launcher/create_guard:supervisor //launcher/create_guard:landlock
  //launcher/shim:net_bridge //launcher/cgroups:cgroup //launcher:sandbox_launcherd"
for target in $skipped; do
  # shellcheck disable=SC2086
  if bazel build $flags "$target" 2>&1 | grep -q "didn't satisfy constraint"; then
    echo "skipped on macOS: $target"
  else
    echo "NOT skipped on macOS: $target" >&2
    exit 1
  fi
done
