#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tools/vm/kernel.sh VERSION [OUTDIR]: a Debian amd64 kernel with its modules, unpacked under
# OUTDIR (default build/vm/kernel-VERSION; with VM_ARCH=arm64 Debian's arm64 kernel, default
# OUTDIR build/vm/kernel-arm64-VERSION), without touching the host's apt state (a sources
# list, lists and cache of our own under a temporary directory). Prints the kernel release
# (uname -r of the guest) on stdout; everything else goes to stderr.
#
#   5.10 -> bullseye, 6.1 -> bookworm, 6.12 -> trixie,
#   newest -> the higher linux-image-amd64 of sid and trixie-backports
#   (a suite name, e.g. sid, trixie-backports or bookworm-backports, is taken as is)
#
# OUTDIR/root        the packages unpacked (dpkg-deb -x), then depmod -b root KREL
# OUTDIR/krel        the kernel release, e.g. 6.1.0-37-amd64
# OUTDIR/pkgver      the Debian version of the packages, e.g. 6.1.140-1
# OUTDIR/vmlinuz     -> root/boot/vmlinuz-KREL (root/usr/lib/modules/KREL/vmlinuz from 7.x on)
# OUTDIR/ready       written last: a second run with it present downloads nothing
set -euo pipefail

ver=${1:?usage: kernel.sh VERSION [OUTDIR]}
# The Debian architecture of the kernel: amd64 (default) or arm64 (vmlinux/arm64/vmlinux.h is
# made from its BTF, and the arm64 VM boots it).
arch=${VM_ARCH:-amd64}
case "$arch" in
amd64) sub="" ;;
arm64) sub="arm64-" ;;
*) echo "kernel.sh: VM_ARCH: amd64 or arm64" >&2; exit 2 ;;
esac
out=${2:-build/vm/kernel-$sub$ver}
mirror=${VM_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

log() { echo "kernel.sh: $*" >&2; }

if [ -f "$out/ready" ]; then
	cat "$out/krel"
	exit 0
fi

case "$ver" in
5.10) suites="bullseye" ;;
6.1) suites="bookworm" ;;
6.12) suites="trixie" ;;
newest|latest) suites="sid trixie-backports" ;;
*[a-z]*) suites="$ver" ;;
*) log "unknown kernel '$ver' (5.10, 6.1, 6.12, newest or a Debian suite name)"; exit 2 ;;
esac

t0=$(date +%s%N)
tmp=$(mktemp -d /tmp/peaktrace-vm-apt.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/debs"
for s in $suites; do
	echo "deb [arch=$arch signed-by=$keyring] $mirror $s main"
done > "$tmp/sources.list"
# Our own sources, lists, cache and status-less view: the host's /etc/apt/sources.list*, its
# lists and its package cache are neither read nor written.
apt_opts=(-o Dir::Etc::sourcelist="$tmp/sources.list" -o Dir::Etc::sourceparts=/dev/null
	-o Dir::State::Lists="$tmp/lists" -o Dir::Cache="$tmp/cache"
	-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
	-o Acquire::Languages=none -o APT::Architectures::=$arch -o APT::Architecture=$arch
	-o Debug::NoLocking=1 -o APT::Sandbox::User=root)
log "apt-get update ($suites)"
apt-get "${apt_opts[@]}" -qq update >&2

meta=linux-image-$arch
# The linux-image-$arch metapackage of the suite (the highest version among the suites).
best=""
while read -r v; do
	if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then best=$v; fi
done < <(apt-cache "${apt_opts[@]}" madison "$meta" | awk -F'|' '{gsub(/ /,"",$2); print $2}')
[ -n "$best" ] || { log "no $meta in $suites"; exit 1; }

deps() {  # the Depends of package=version, one name a line (alternatives flattened)
	apt-cache "${apt_opts[@]}" show "$1" | awk '/^Depends:/ {sub(/^Depends: /,""); print; exit}' |
		tr ',|' '\n\n' | sed 's/([^)]*)//; s/^ *//; s/ *$//' | grep -v '^$'
}
# linux-image-amd64 depends on linux-image-KREL (signed; it carries the same BTF as -unsigned).
image=$(deps "$meta=$best" | grep -E '^linux-image-[0-9]' | head -n1)
[ -n "$image" ] || { log "$meta=$best names no linux-image-KREL"; exit 1; }
krel=${image#linux-image-}
# Older suites: linux-image-KREL holds vmlinuz and the modules. Newer ones (7.x): it is empty
# and depends on linux-binary-KREL (vmlinuz), linux-modules-KREL and linux-base-KREL.
pkgs=("$image")
for d in $(deps "$image=$best"); do
	case "$d" in *"-$krel") pkgs+=("$d") ;; esac
done
log "$meta $best: ${pkgs[*]}"
(cd "$tmp/debs" && apt-get "${apt_opts[@]}" -qq download "${pkgs[@]/%/=$best}") >&2

rm -rf "$out"
mkdir -p "$out/root"
for deb in "$tmp"/debs/*.deb; do
	dpkg-deb -x "$deb" "$out/root"
done
vmlinuz=""
for f in "boot/vmlinuz-$krel" "usr/lib/modules/$krel/vmlinuz" "lib/modules/$krel/vmlinuz"; do
	if [ -f "$out/root/$f" ]; then vmlinuz=$f; break; fi
done
[ -n "$vmlinuz" ] || { log "no vmlinuz for $krel in ${pkgs[*]}"; exit 1; }
[ -d "$out/root/lib/modules/$krel" ] || [ -d "$out/root/usr/lib/modules/$krel" ] ||
	{ log "no modules for $krel"; exit 1; }
# Merged /usr: modules may be under usr/lib/modules only; depmod -b looks in BASE/lib/modules.
if [ ! -e "$out/root/lib" ] && [ -d "$out/root/usr/lib/modules" ]; then ln -s usr/lib "$out/root/lib"; fi
# Debian's postinst runs depmod; we have no postinst: modules.dep for the initramfs.
depmod -b "$out/root" "$krel"
echo "$krel" > "$out/krel"
echo "$best" > "$out/pkgver"
ln -sf "root/$vmlinuz" "$out/vmlinuz"
t1=$(date +%s%N)
log "kernel $krel ($best): $(du -cm "$tmp"/debs/*.deb | tail -n1 | cut -f1) MB downloaded and unpacked in $(( (t1 - t0) / 1000000 )) ms"
touch "$out/ready"
echo "$krel"
