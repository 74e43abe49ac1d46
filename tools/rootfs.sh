#!/bin/sh
# tools/rootfs.sh DIR — a Debian trixie root filesystem (minbase + python3) made with debootstrap
# from the Debian archive this machine's apt uses (ROOTFS_MIRROR overrides), for the container test
# section (tests/sections/container.py).
# Built in DIR.tmp and renamed to DIR when debootstrap succeeded; DIR/.peaktrace-rootfs-complete is
# the stamp: a DIR that has it is not rebuilt. Exit 0 when DIR is complete, non-zero with one
# "rootfs: ..." line otherwise (no network, no debootstrap).
set -eu
dir=${1:?usage: tools/rootfs.sh DIR}
# The archive apt already uses: the first ".../debian" URI of a deb822 sources file, else of a
# one-line "deb URI suite ..." entry.
apt_mirror() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && awk '$1 == "URIs:" { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }' "$f"
	done
	[ -f /etc/apt/sources.list ] && awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\// && $i ~ /\/debian\/?$/) { print $i; exit } }' /etc/apt/sources.list
}
mirror=${ROOTFS_MIRROR:-$(apt_mirror | head -n 1)}
[ -n "$mirror" ] || { echo "rootfs: no Debian archive in apt's sources (set ROOTFS_MIRROR)" >&2; exit 3; }
stamp="$dir/.peaktrace-rootfs-complete"
if [ -f "$stamp" ]; then
	echo "rootfs: $dir is complete (remove it to rebuild)"
	exit 0
fi
command -v debootstrap >/dev/null || { echo "rootfs: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 3; }
tmp="$dir.tmp"
# A failed debootstrap can leave proc/sys mounted inside: unmount before removing anything.
unmount_below() {
	for m in $(awk -v d="$(realpath -m "$1")" 'index($2, d "/") == 1 { print $2 }' /proc/mounts | sort -r); do
		umount -l "$m" || return 1
	done
}
unmount_below "$tmp" && unmount_below "$dir" || { echo "rootfs: cannot unmount below $tmp" >&2; exit 4; }
rm -rf --one-file-system "$tmp" "$dir"
mkdir -p "$tmp"
start=$(date +%s)
# Two tries: a download cut short once made debootstrap fail on one package here.
ok=
for try in 1 2; do
	if nice debootstrap --variant=minbase --include=python3 trixie "$tmp" "$mirror" >"$tmp.log" 2>&1; then
		ok=1
		break
	fi
	cp "$tmp/debootstrap/debootstrap.log" "$tmp.debootstrap.log" 2>/dev/null || true
	unmount_below "$tmp" || true
	grep -q 'Failed getting release file' "$tmp.log" && break   # no archive: a retry cannot help
	[ "$try" = 1 ] && { rm -rf --one-file-system "$tmp"; mkdir -p "$tmp"; }
done
if [ -z "$ok" ]; then
	echo "rootfs: debootstrap failed (log: $tmp.log): $(tail -n 1 "$tmp.log")" >&2
	exit 4
fi
rm -rf "$tmp/var/cache/apt/archives/"*.deb
mv "$tmp" "$dir"
echo "built in $(( $(date +%s) - start )) s" > "$stamp"
echo "rootfs: $dir built in $(( $(date +%s) - start )) s"
