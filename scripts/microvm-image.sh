#!/usr/bin/env bash
# Builds the microVM probe image into DIR (docs/microvm.md), from Debian packages only:
#   DIR/vmlinuz           the guest kernel, unpacked (not installed) from Debian's generic
#                         linux-image-<version>-amd64 (fetched with apt-get download) and
#                         decompressed to its ELF (qemu boots it by its PVH entry);
#                         DIR/kernel-package names it
#   DIR/modules/          its modules the session image loads, and their load order
#   DIR/probe-initrd.img  a busybox-static initramfs (cpio newc, gzip) whose init prints
#                         CCSANDBOX_MICROVM_PROBE_OK on the serial console and powers off
#   DIR/agent-initrd.img  the session image (broker/microvm/qemu_runtime.h): busybox-static, the
#                         kernel's virtio-mmio, virtio_console and 9p-over-virtio modules, and an
#                         init that runs the guest agent the runtime appends as /ccsandbox-agent
# Then: sandbox_brokerd --microvm-hypervisor=/usr/bin/qemu-system-x86_64
#   --microvm-kernel=DIR/vmlinuz --microvm-initrd=DIR/probe-initrd.img
# Needs busybox-static and xz-utils (and, for the probe, qemu-system-x86). Keeps the generic
# kernel already in DIR; replaces a cloud kernel (no 9p) an older version of this script put there.
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

# The session image's modules (what it needs: virtio-mmio, the agent's virtio_console, 9p over
# virtio for the shared host directories), closed over their dependencies below.
wanted="virtio_mmio virtio_console 9pnet_virtio 9p"
# The generic kernel (the cloud one has no 9p). DIR/kernel-package names what DIR holds (the
# package, and whether vmlinuz is its ELF or its bzImage): a DIR built before it existed holds
# the cloud kernel and is rebuilt.
meta=linux-image-amd64
if [ ! -s "$dir/vmlinuz" ] || [ ! -s "$dir/modules/order" ] ||
  ! grep -qE -- '-[0-9]+-amd64 (elf|bzimage)$' "$dir/kernel-package" 2>/dev/null; then
  # The metapackage names the current kernel package; only the kernel package is fetched.
  (cd "$work" && apt-get download -q "$meta" >/dev/null)
  kernel_pkg=$(dpkg-deb -f "$work"/"$meta"_*.deb Depends | grep -o 'linux-image-[0-9][^ ,]*-amd64' |
    head -1)
  [ -n "$kernel_pkg" ] || { echo "microvm-image: $meta names no kernel package" >&2; exit 1; }
  (cd "$work" && apt-get download -q "$kernel_pkg" >/dev/null)
  dpkg-deb -x "$work/$kernel_pkg"_*.deb "$work/kernel"
  # The modules come from the same package, so they match the kernel. The package has no
  # modules.dep (depmod runs at install): each module's own depends= field gives the order.
  rm -rf "$dir/modules" && mkdir -p "$dir/modules"
  : >"$work/order"
  add_module() {
    grep -qx "$1" "$work/order" && return 0
    local ko deps d
    ko=$(find "$work/kernel/lib/modules" -name "$1.ko" | head -1)
    [ -n "$ko" ] || { echo "microvm-image: $kernel_pkg has no $1.ko" >&2; exit 1; }
    deps=$(tr '\0' '\n' <"$ko" | grep -a '^depends=' | head -1 | cut -d= -f2 | tr ',' ' ')
    for d in $deps; do add_module "$d"; done
    cp "$ko" "$dir/modules/"
    echo "$1" >>"$work/order"
  }
  for m in $wanted; do add_module "$m"; done
  cp "$work/order" "$dir/modules/order"
  # The generic bzImage is xz-compressed, and decompressing it under TCG took ~2 s of every
  # boot: the uncompressed ELF (booted by its PVH entry) is kept instead when it can be cut out.
  bzimage=$(ls "$work"/kernel/boot/vmlinuz-*)
  offset=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$bzimage" | head -1 | cut -d: -f1 || true)
  if [ -n "$offset" ]; then
    tail -c +$((offset + 1)) "$bzimage" | xz -dc >"$dir/vmlinuz.tmp" 2>/dev/null || true
  fi
  if [ "$(head -c 4 "$dir/vmlinuz.tmp" 2>/dev/null | od -An -tx1 | tr -d ' ')" != 7f454c46 ]; then
    echo "microvm-image: no xz-compressed ELF in $bzimage; keeping the bzImage (slower)" >&2
    cp "$bzimage" "$dir/vmlinuz.tmp"
    format=bzimage
  else
    format=elf
  fi
  mv "$dir/vmlinuz.tmp" "$dir/vmlinuz"
  echo "$kernel_pkg $format" >"$dir/kernel-package"
  echo "microvm-image: kernel $kernel_pkg ($format) -> $dir/vmlinuz" \
    "(modules: $(tr '\n' ' ' <"$work/order"))"
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
mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/sysroot" \
  "$root/lib/modules"
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$dir/modules/"*.ko "$dir/modules/order" "$root/lib/modules/"
cat >"$root/init" <<'INIT'
#!/bin/sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=1777 tmpfs /tmp
for m in $(cat /lib/modules/order); do
  insmod /lib/modules/$m.ko
done
export PATH=/bin HOME=/tmp
exec /ccsandbox-agent org.ccsandbox.agent
INIT
chmod 0755 "$root/init"
(cd "$root" && find . | "$busybox" cpio -o -H newc 2>/dev/null) | gzip -9 >"$dir/agent-initrd.img.tmp"
mv "$dir/agent-initrd.img.tmp" "$dir/agent-initrd.img"
echo "microvm-image: session image -> $dir/agent-initrd.img"
