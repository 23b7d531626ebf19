#!/usr/bin/env bash
# Installs ccsandbox as a service (as root): release builds (-c opt) of the launcher, the broker,
# the in-sandbox shim and sandboxctl into root-owned system paths, the systemd units, a config
# example and the docs; creates the unprivileged `ccsandbox` user the broker runs as. Starts
# nothing: `systemctl enable --now ccsandbox-launcher ccsandbox-broker` does (docs/service.md).
#
#   scripts/install.sh [--prefix=/usr/local] [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=/usr/local
build=1
for arg in "$@"; do
  case "$arg" in
    --prefix=*) prefix=${arg#--prefix=} ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install: unknown argument '$arg' (see --help)" >&2; exit 125 ;;
  esac
done
if [ "$(id -u)" -ne 0 ]; then echo "install: run as root" >&2; exit 1; fi
case "$prefix" in /*) ;; *) echo "install: --prefix must be absolute" >&2; exit 125 ;; esac

scripts/install-deps.sh
targets=(//launcher:sandbox_launcherd //launcher:sandbox_shim //broker:sandbox_brokerd
         //broker:sandboxctl)
if [ "$build" -eq 1 ]; then bazel build -c opt "${targets[@]}"; fi
bin=$(bazel info -c opt bazel-bin)

libexec="$prefix/libexec/ccsandbox"
# Root-owned, not writable by anyone else: the launcher runs these as root or binds them into
# every sandbox.
install -d -o root -g root -m 0755 "$prefix/bin" "$libexec" "$prefix/share/doc/ccsandbox" \
  /etc/ccsandbox /etc/systemd/system
install -o root -g root -m 0755 "$bin/launcher/sandbox_launcherd" "$bin/launcher/sandbox_shim" \
  "$bin/broker/sandbox_brokerd" "$libexec/"
install -o root -g root -m 0755 "$bin/broker/sandboxctl" "$prefix/bin/"
for unit in packaging/systemd/*.service; do
  sed "s|/usr/local/|$prefix/|g" "$unit" > "/etc/systemd/system/$(basename "$unit")"
  chmod 0644 "/etc/systemd/system/$(basename "$unit")"
done
install -o root -g root -m 0644 packaging/ccsandbox.env.example /etc/ccsandbox/
[ -e /etc/ccsandbox/ccsandbox.env ] ||
  install -o root -g root -m 0644 packaging/ccsandbox.env.example /etc/ccsandbox/ccsandbox.env
install -o root -g root -m 0644 README.md docs/*.md "$prefix/share/doc/ccsandbox/"

# The broker's user and group; callers of the broker join the group.
getent group ccsandbox >/dev/null || groupadd --system ccsandbox
getent passwd ccsandbox >/dev/null ||
  useradd --system --gid ccsandbox --home-dir /nonexistent --no-create-home \
    --shell /usr/sbin/nologin ccsandbox
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
"$libexec/sandbox_launcherd" --version
"$libexec/sandbox_brokerd" --version
echo "installed under $prefix; start with: systemctl enable --now ccsandbox-launcher ccsandbox-broker"
echo "callers of the broker (unix:/run/ccsandbox-broker/broker.sock) must be in group ccsandbox"
