#!/usr/bin/env bash
# Builds the microVM probe image into DIR (docs/microvm.md), from Debian packages only:
#   DIR/vmlinuz           the guest kernel, unpacked (not installed) from Debian's
#                         linux-image-<version>-cloud-amd64 (fetched with apt-get download)
#   DIR/probe-initrd.img  a busybox-static initramfs (cpio newc, gzip) whose init prints
#                         CCSANDBOX_MICROVM_PROBE_OK on the serial console and powers off
#   DIR/agent-initrd.img  the session image (broker/microvm/qemu_runtime.h): busybox-static, the
#                         kernel's virtio-mmio and virtio_console modules, and an init that
#                         runs the guest agent the runtime appends as /ccsandbox-agent
# Then: sandbox_brokerd --microvm-hypervisor=/usr/bin/qemu-system-x86_64
#   --microvm-kernel=DIR/vmlinuz --microvm-initrd=DIR/probe-initrd.img
# Needs busybox-static (and, for the probe, qemu-system-x86). Keeps a kernel already in DIR.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
dir=$(realpath -m "$1")
busybox=/bin/busybox
if ! "$busybox" --list 2>/dev/null | grep -qx cpio; then
  echo "microvm-image: $busybox with cpio is missing: apt-get install busybox-static" >&2
  exit 1
fi
mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

modules="virtio_ring virtio virtio_mmio virtio_console"
if [ ! -s "$dir/vmlinuz" ] || [ ! -s "$dir/modules/virtio_console.ko" ]; then
  # The metapackage names the current kernel package; only the kernel image is fetched.
  meta=linux-image-cloud-amd64
  (cd "$work" && apt-get download -q "$meta" >/dev/null)
  kernel_pkg=$(dpkg-deb -f "$work"/"$meta"_*.deb Depends | grep -o 'linux-image-[^ ,]*-cloud-amd64' |
    head -1)
  (cd "$work" && apt-get download -q "$kernel_pkg" >/dev/null)
  dpkg-deb -x "$work/$kernel_pkg"_*.deb "$work/kernel"
  # The session image's modules come from the same package, so they match the kernel.
  rm -rf "$dir/modules" && mkdir -p "$dir/modules"
  for m in $modules; do
    find "$work/kernel/lib/modules" -name "$m.ko" -exec cp {} "$dir/modules/" \;
    [ -s "$dir/modules/$m.ko" ] || { echo "microvm-image: $kernel_pkg has no $m.ko" >&2; exit 1; }
  done
  cp "$work"/kernel/boot/vmlinuz-* "$dir/vmlinuz.tmp"
  mv "$dir/vmlinuz.tmp" "$dir/vmlinuz"
  echo "microvm-image: kernel $kernel_pkg -> $dir/vmlinuz"
fi

root="$work/root"
mkdir -p "$root/bin" "$root/dev" "$root/proc"
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cat >"$root/init" <<'INIT'
#!/bin/sh
/bin/busybox echo CCSANDBOX_MICROVM_PROBE_OK
/bin/busybox reboot -f
INIT
chmod 0755 "$root/init"
(cd "$root" && find . | "$busybox" cpio -o -H newc 2>/dev/null) | gzip -9 >"$dir/probe-initrd.img.tmp"
mv "$dir/probe-initrd.img.tmp" "$dir/probe-initrd.img"
echo "microvm-image: probe image -> $dir/probe-initrd.img"

# The session image: /init loads the virtio modules (dependencies first), mounts what a shell
# needs, then execs the agent on the virtio-serial port named org.ccsandbox.agent.
root="$work/agent-root"
mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/lib/modules"
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
for m in $modules; do cp "$dir/modules/$m.ko" "$root/lib/modules/"; done
cat >"$root/init" <<'INIT'
#!/bin/sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=1777 tmpfs /tmp
for m in virtio_ring virtio virtio_mmio virtio_console; do
  insmod /lib/modules/$m.ko
done
export PATH=/bin HOME=/tmp
exec /ccsandbox-agent org.ccsandbox.agent
INIT
chmod 0755 "$root/init"
(cd "$root" && find . | "$busybox" cpio -o -H newc 2>/dev/null) | gzip -9 >"$dir/agent-initrd.img.tmp"
mv "$dir/agent-initrd.img.tmp" "$dir/agent-initrd.img"
echo "microvm-image: session image -> $dir/agent-initrd.img"
