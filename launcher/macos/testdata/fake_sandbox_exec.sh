#!/bin/sh
# TEST-ONLY stand-in for /usr/bin/sandbox-exec. It enforces NOTHING: it checks it was called as
# `sandbox-exec -f PROFILE -- COMMAND...`, records its arguments, its environment and the
# profile file into PROFILE.record/, and execs the command (keeping its pid, as sandbox-exec
# does). Linux tests use it to check the launcher's plumbing, never Seatbelt.
set -eu
if [ "$#" -lt 4 ] || [ "$1" != "-f" ] || [ "$3" != "--" ]; then
  echo "fake sandbox-exec: expected -f PROFILE -- COMMAND..." >&2
  exit 64
fi
record="$2.record"
mkdir "$record"
for arg in "$@"; do printf '%s\n' "$arg"; done >"$record/argv"
env >"$record/env"
cat "$2" >"$record/profile"
shift 3
exec "$@"
