#!/usr/bin/env bash
# Builds the microVM probe image into DIR (docs/microvm.md), from Debian packages only:
#   DIR/vmlinuz           the guest kernel, unpacked (not installed) from Debian's
#                         linux-image-<version>-cloud-amd64 (fetched with apt-get download)
#   DIR/probe-initrd.img  a busybox-static initramfs (cpio newc, gzip) whose init prints
#                         CCSANDBOX_MICROVM_PROBE_OK on the serial console and powers off
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

if [ ! -s "$dir/vmlinuz" ]; then
  # The metapackage names the current kernel package; only the kernel image is fetched.
  meta=linux-image-cloud-amd64
  (cd "$work" && apt-get download -q "$meta" >/dev/null)
  kernel_pkg=$(dpkg-deb -f "$work"/"$meta"_*.deb Depends | grep -o 'linux-image-[^ ,]*-cloud-amd64' |
    head -1)
  (cd "$work" && apt-get download -q "$kernel_pkg" >/dev/null)
  dpkg-deb -x "$work/$kernel_pkg"_*.deb "$work/kernel"
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
