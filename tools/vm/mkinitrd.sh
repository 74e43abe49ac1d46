#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tools/vm/mkinitrd.sh KDIR: KDIR/initrd.img for the kernel unpacked by tools/vm/kernel.sh in
# KDIR: busybox (Debian's busybox-static), tools/vm/initramfs-init as /init, and the modules of
# exactly that kernel that virtio-pci, 9p over virtio, overlayfs and virtio-rng need (in
# dependency order from modules.dep, via modprobe --show-depends; the built-in ones skipped;
# compressed ones unpacked, as busybox insmod reads plain ELF). Rebuilt only when missing or
# older than its inputs.
set -euo pipefail
kdir=${1:?usage: mkinitrd.sh KDIR}
here=$(cd "$(dirname "$0")" && pwd)
# BUSYBOX: the one put in the initramfs (the arm64 guest's: its root's); this host's runs cpio.
busybox=${BUSYBOX:-/bin/busybox}
host_busybox=/bin/busybox
krel=$(cat "$kdir/krel")
out="$kdir/initrd.img"
# MKINITRD_EXTRA: more (the arm64 guest's virtio_console, a module on 6.1, built in from 6.12).
WANT="virtio_pci 9pnet_virtio 9p overlay virtio_rng ${MKINITRD_EXTRA:-}"

if [ -f "$out" ] && [ "$out" -nt "$here/initramfs-init" ] && [ "$out" -nt "$0" ] && [ "$out" -nt "$kdir/ready" ] &&
	[ "$out" -nt "$busybox" ]; then
	exit 0
fi
[ -x "$busybox" ] || { echo "mkinitrd.sh: $busybox missing (apt-get install busybox-static)" >&2; exit 1; }
[ -x "$host_busybox" ] ||
	{ echo "mkinitrd.sh: $host_busybox missing (apt-get install busybox-static)" >&2; exit 1; }
# A dynamically linked busybox would need its libraries in the initramfs.
if file -L "$busybox" 2>/dev/null | grep -q dynamically; then
	echo "mkinitrd.sh: $busybox is dynamically linked; install busybox-static" >&2; exit 1
fi

tmp=$(mktemp -d /tmp/peaktrace-vm-initrd.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/modules"
cp "$busybox" "$tmp/bin/busybox"
cp "$here/initramfs-init" "$tmp/init"
chmod 755 "$tmp/init"

: > "$tmp/modules/order"
for m in $WANT; do
	modprobe -d "$kdir/root" -S "$krel" --show-depends "$m" || { echo "mkinitrd.sh: $m: not in $krel" >&2; exit 1; }
done | while read -r kind path _; do
	[ "$kind" = insmod ] || continue          # "builtin NAME": nothing to load
	name=$(basename "$path"); name=${name%.xz}; name=${name%.zst}; name=${name%.gz}
	grep -qx "$name" "$tmp/modules/order" && continue
	case "$path" in
	*.xz) xz -dc "$path" > "$tmp/modules/$name" ;;
	*.zst) zstd -qdc "$path" > "$tmp/modules/$name" ;;
	*.gz) gzip -dc "$path" > "$tmp/modules/$name" ;;
	*) cp "$path" "$tmp/modules/$name" ;;
	esac
	echo "$name" >> "$tmp/modules/order"
done
(cd "$tmp" && find . -mindepth 1 | LC_ALL=C sort | "$host_busybox" cpio -o -H newc -R 0:0 2>/dev/null) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
echo "mkinitrd.sh: $out ($krel: $(tr '\n' ' ' < "$tmp/modules/order"))" >&2
