#!/usr/bin/env bash
# The main job, end to end on this machine: installs what is missing, builds, starts the
# launcher and the broker on private sockets, runs a real sandboxed command through
# sandboxctl and shows its events, then stops both daemons and removes their sockets.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

scripts/install-deps.sh
bazel build //launcher:sandbox_launcherd //broker:sandbox_brokerd //broker:sandboxctl
bin="$repo/bazel-bin"

run_dir=$(mktemp -d /tmp/ccsandbox.XXXXXX)
work=$(mktemp -d /var/tmp/ccsandbox-demo.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$run_dir" "$work"
  bazel shutdown >/dev/null 2>&1 || true
}
trap cleanup EXIT

"$bin/launcher/sandbox_launcherd" --socket="$run_dir/launcher.sock" --allowed-uids="$(id -u)" \
  2> >(sed 's/^/[launcher] /' >&2) &
pids+=($!)
"$bin/broker/sandbox_brokerd" --listen="unix:$run_dir/broker.sock" \
  --launcher="unix:$run_dir/launcher.sock" 2> >(sed 's/^/[broker]   /' >&2) &
pids+=($!)
# Wait (at most 10 s) for both sockets; stop at once, saying so, if a daemon exits instead.
deadline=$((SECONDS + 10))
until [ -S "$run_dir/broker.sock" ] && [ -S "$run_dir/launcher.sock" ]; do
  for pid in "${pids[@]}"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "quickstart: a daemon exited while starting (its log is above)" >&2
      exit 1
    fi
  done
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "quickstart: the daemons did not create their sockets within 10 s" >&2
    exit 1
  fi
  sleep 0.05
done

ctl() { "$bin/broker/sandboxctl" --broker="unix:$run_dir/broker.sock" "$@"; }

echo "== sandboxctl probe"
ctl probe
echo
cd "$work"
mkdir -p .ssh project/.git/hooks
echo "not for agents" > .ssh/id_demo
echo "# rc" > project/.bashrc
set +e
echo "== a writable run with the full policy (the working directory is bound read-write)"
ctl run -- sh -c 'echo "hello from the sandbox: $(id -un) in $PWD";
  echo "uid 0 here is host uid $(awk "{print \$2}" /proc/self/uid_map) (never host root)";
  (echo x > /proc/sys/kernel/core_pattern) 2>/dev/null || echo "kernel tunables: read-only";
  echo "visible: $(ls / | tr "\n" " ")"; echo note > note.txt && echo "wrote note.txt";
  ls .ssh; echo "# planted" >> project/.bashrc; touch /etc/planted; touch .env;
  mkdir -p .config/autostart 2>/dev/null; touch .zprofile project/.git/hooks/pre-commit;
  curl -sS -o /dev/null -w "curl to a host outside the allowlist: HTTP %{http_code}\n" http://exfil.example/'
echo "exit code: $?"
echo
echo "== the same run as events (sandboxctl run --json)"
ctl run --json -- sh -c 'echo out; echo err >&2; exit 3'
echo "exit code: $?"
set -e
echo
echo "== on the host afterwards:"
echo "   $work: $(ls -A "$work" | tr "\n" " ")(note.txt, no .env)"
echo "   project/.bashrc: $(cat "$work/project/.bashrc")   .ssh/id_demo: $(cat "$work/.ssh/id_demo")"
echo "   /etc/planted: $(ls /etc/planted 2>&1 | sed 's/.*: //')"
echo "   .zprofile, project/.git/hooks/pre-commit: $(ls "$work/.zprofile" "$work/project/.git/hooks/pre-commit" 2>&1 | sed 's/.*: //' | sort -u)"
