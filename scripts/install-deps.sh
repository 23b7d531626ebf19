#!/usr/bin/env bash
# Installs the Debian 12 packages the build, the daemons and the tests need (as root).
# Does nothing when all are present; never downloads anything but Debian packages.
set -euo pipefail

packages=(
  bazel-bootstrap bazel-platforms
  g++ pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libspdlog-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
  libseccomp-dev libasio-dev libcli11-dev libssl-dev libc-ares-dev libre2-dev zlib1g-dev
  libcurl4-openssl-dev  # the push gateway's upstream client
  prometheus-cpp-dev  # the daemons' opt-in metrics endpoint (base/metrics)
  bubblewrap socat
  python3 python3-grpcio python3-protobuf
  curl git nodejs  # real clients the end-to-end tests drive inside the sandbox
  tmux  # drives `sandboxctl term` as a person would (e2e_terminal_test)
  prometheus  # the real server e2e_metrics_test scrapes both daemons with
  lighttpd  # the tests' git smart-HTTP upstream (git-http-backend behind real auth)
  xfsprogs btrfs-progs  # the reflink volumes (XFS reflink=1, btrfs) the worktree tests mount
  clang libclang-rt-14-dev  # libFuzzer + sanitizers for the short fuzz runs of scripts/test.sh
  clang-format-14  # scripts/check-format.sh
  python3-yaml  # packaging/kubernetes's manifest test
  qemu-system-x86 busybox-static xz-utils  # the microVM images (scripts/microvm-image.sh)
)
# npm installs examples/node's dependencies (scripts/test.sh). Debian's nodejs leaves it to the
# npm package; NodeSource's nodejs bundles it (and conflicts with that package).
command -v npm >/dev/null || packages+=(npm)

# The microVM probe image (guest kernel from Debian's package, busybox initramfs) that
# tests/e2e_microvm_test boots, and the session image tests/microvm_qemu_runtime_test boots;
# built once, after the packages.
microvm_image() {
  local dir=/var/cache/ccsandbox/microvm
  if [ -s "$dir/vmlinuz" ] && [ -s "$dir/probe-initrd.img" ] && [ -s "$dir/agent-initrd.img" ]; then
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: no microVM probe image; run as root: scripts/microvm-image.sh $dir" >&2
    return 1
  fi
  "$(dirname "$0")/microvm-image.sh" "$dir"
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  microvm_image
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}; run as root: apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"

# The tests start their own prometheus and lighttpd on loopback ports; on a host run by systemd
# the packages would also start (and enable) system-wide servers listening on every interface
# (prometheus :9090, lighttpd :80). Only what this script just installed is stopped and disabled.
if [ -d /run/systemd/system ]; then
  for p in prometheus lighttpd; do
    if [[ " ${missing[*]} " == *" $p "* ]]; then
      echo "install-deps: $p is a test dependency here: stopping and disabling its system service"
      systemctl disable --now "$p.service" || true
    fi
  done
fi
microvm_image
