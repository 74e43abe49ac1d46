#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tools/vm/rootfs-arm64.sh DIR [SUITE]: a Debian arm64 root file system in DIR for the arm64
# vmtest guest (tools/vm/README.md), SUITE bookworm (the default) or trixie (VM_SUITE=trixie:
# glibc 2.41 and python3.13, built with pointer authentication and BTI), made on this host
# without running any arm64 code:
# `debootstrap --foreign` fetches the packages (and unpacks the required ones), then every other
# .deb it fetched is unpacked with dpkg-deb | tar (--keep-directory-symlink: bookworm's /bin,
# /lib, /sbin are symlinks into /usr). No maintainer script runs (debootstrap's second stage
# under qemu-user took 81 min here, DESIGN §11): what the scripts would have made and the guest
# needs is made below (/etc/passwd and /etc/group, the alternatives' symlinks, /bin/sh).
# bookworm, because the arm64 static binary and the workloads are cross-built against bookworm's
# arm64 glibc (Debian 12's cross gcc; trixie's sysroot wants glibc 2.38 symbols).
# The binaries run unchanged in a trixie root (a newer glibc runs what was linked against 2.36).
# Packages: minbase, and what the smoke set runs in the guest: python3 (Debian's
# /usr/bin/python3.11, trixie's python3.13, is the python case's interpreter), binutils (nm and readelf, the tests'
# symbol truth), procps, iproute2 (lo up), libmicrohttpd12 (the Lambda-like host; trixie's is
# libmicrohttpd12t64, the 64-bit time_t rename: the same libmicrohttpd.so.12), busybox-static
# (the initramfs' /init shell: tools/vm/mkinitrd.sh takes it from here).
# DIR/.peaktrace-rootfs-complete is the stamp: a DIR that has it is not rebuilt (rm -rf DIR).
set -euo pipefail
dir=${1:?usage: rootfs-arm64.sh DIR [bookworm|trixie]}
mirror=${VM_MIRROR:-http://deb.debian.org/debian}
suite=${2:-bookworm}
case "$suite" in
bookworm) mhd=libmicrohttpd12 ;;
trixie) mhd=libmicrohttpd12t64 ;;
*) echo "rootfs-arm64: suite $suite: bookworm or trixie" >&2; exit 2 ;;
esac
pkgs=python3,binutils,procps,iproute2,$mhd,busybox-static
stamp="$dir/.peaktrace-rootfs-complete"
if [ -f "$stamp" ]; then
	exit 0
fi
command -v debootstrap >/dev/null || { echo "rootfs-arm64: debootstrap is not installed" >&2; exit 3; }
tmp="$dir.tmp"
rm -rf --one-file-system "$tmp" "$dir"
mkdir -p "$tmp"
t0=$(date +%s)
# Two tries: a download cut short can fail one package.
ok=
for try in 1 2; do
	if nice debootstrap --foreign --arch=arm64 --variant=minbase --include="$pkgs" \
		"$suite" "$tmp" "$mirror" > "$tmp.log" 2>&1; then
		ok=1
		break
	fi
	grep -q 'Failed getting release file' "$tmp.log" && break
	[ "$try" = 1 ] && { rm -rf --one-file-system "$tmp"; mkdir -p "$tmp"; }
done
[ -n "$ok" ] ||
	{ echo "rootfs-arm64: debootstrap failed (log: $tmp.log): $(tail -n 1 "$tmp.log")" >&2; exit 4; }
t1=$(date +%s)
# The first stage unpacked the required packages; debpaths lists every package it fetched.
n=0
while read -r _ deb; do
	dpkg-deb --fsys-tarfile "$tmp$deb" | tar -x --keep-directory-symlink -C "$tmp"
	n=$((n + 1))
done < "$tmp/debootstrap/debpaths"
# What the maintainer scripts would have made, as far as the guest needs it.
cp "$tmp/usr/share/base-passwd/passwd.master" "$tmp/etc/passwd"
cp "$tmp/usr/share/base-passwd/group.master" "$tmp/etc/group"
echo "root:*:19000:0:99999:7:::" > "$tmp/etc/shadow"
[ -e "$tmp/usr/bin/sh" ] || ln -s dash "$tmp/usr/bin/sh"
[ -e "$tmp/usr/bin/awk" ] || ln -s mawk "$tmp/usr/bin/awk"
# debootstrap's first stage leaves /proc a symlink to the host's (for its chroot): a mount point.
[ -L "$tmp/proc" ] && rm "$tmp/proc"
mkdir -p "$tmp/proc" "$tmp/sys" "$tmp/dev"
echo vmtest > "$tmp/etc/hostname"
: > "$tmp/etc/fstab"
mkdir -p "$tmp/vmout"
rm -rf "$tmp/var/cache/apt/archives/"*.deb "$tmp/debootstrap"
mv "$tmp" "$dir"
t2=$(date +%s)
echo "$suite, fetched in $((t1 - t0)) s, $n packages unpacked in $((t2 - t1)) s" > "$stamp"
echo "rootfs-arm64: $dir: $(cat "$stamp"), $(du -sm "$dir" | cut -f1) MB" >&2
