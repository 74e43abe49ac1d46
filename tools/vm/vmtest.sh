#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tools/vm/vmtest.sh --kernel VERSION [options] -- CMD ARGS...
#
# Boots Debian's kernel VERSION (5.10, 6.1, 6.12, newest: tools/vm/kernel.sh) under
# qemu-system-x86_64 (TCG) with the host's root file system as the guest's (9p, read-only, under
# a tmpfs overlay: the guest writes anywhere, nothing reaches the host), runs CMD ARGS as root in
# the current directory, and exits with CMD's exit status. With --arch arm64: Debian's arm64
# kernel under qemu-system-aarch64, the guest's root a bookworm arm64 one made on this host
# (tools/vm/rootfs-arm64.sh, cached in build/vm/rootfs-arm64/; --suite trixie: trixie's, in
# build/vm/rootfs-arm64-trixie/), and this tree shared at its own
# path (the current directory must be below it), both the same way. CMD's output (stdout and
# stderr) is streamed to stdout; the whole console (kernel messages, the initramfs) is kept in
# build/vm/run-VERSION/console.log (arm64: build/vm/run-arm64-VERSION/, trixie's root:
# build/vm/run-arm64-trixie-VERSION/).
#
# Options:
#   --kernel VERSION   5.10 | 6.1 | 6.12 | newest | a Debian suite name (required)
#   --arch x86|arm64   the guest's architecture (default x86)
#   --suite SUITE      arm64: the guest root's Debian suite, bookworm or trixie (default
#                      $VMTEST_SUITE, else bookworm); x86's guest runs the host's root
#   --timeout SEC      kill qemu after SEC seconds of wall time (default 900): exit 124
#   --mem SIZE         guest memory (default 4G); --smp N: vCPUs (default 2)
#   --prefix STR       put STR before every line of CMD's output (vm.mk: "[vm 6.1] ")
#   --shell            an interactive shell on the guest's console instead of CMD
#   --console          show the whole console (kernel messages) on stderr as it comes
#
# Exit status: CMD's; 124 if the VM timed out; 125 if the guest did not run CMD to its end
# (boot failure, kernel panic: see console.log); 2 for bad usage.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
kernel="" arch=x86 suite=${VMTEST_SUITE:-bookworm} timeout=900 mem=4G smp=2 prefix="" shell=0 console=0
usage() { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=${2:?}; shift 2 ;;
	--arch) arch=${2:?}; shift 2 ;;
	--suite) suite=${2:?}; shift 2 ;;
	--timeout) timeout=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--prefix) prefix=$2; shift 2 ;;
	--shell) shell=1; shift ;;
	--console) console=1; shift ;;
	--) shift; break ;;
	-h|--help) usage ;;
	*) echo "vmtest: unknown option $1" >&2; usage ;;
	esac
done
[ -n "$kernel" ] || usage
[ $# -gt 0 ] || [ $shell = 1 ] || usage
case "$arch" in
x86) qemu_bin=qemu-system-x86_64 qemu_pkg=qemu-system-x86 sub="" ;;
arm64) qemu_bin=qemu-system-aarch64 qemu_pkg=qemu-system-arm sub="arm64-" ;;
*) echo "vmtest: --arch $arch: x86 or arm64" >&2; exit 2 ;;
esac
case "$arch/$suite" in
*/bookworm) rsub="" ;;
arm64/trixie) rsub="trixie-" ;;
arm64/*) echo "vmtest: --suite $suite: bookworm or trixie" >&2; exit 2 ;;
*) echo "vmtest: --suite $suite: the x86 guest runs this host's root (--arch arm64 only)" >&2; exit 2 ;;
esac
command -v $qemu_bin >/dev/null ||
	{ echo "vmtest: $qemu_bin missing (apt-get install $qemu_pkg, or make vm-deps)" >&2; exit 2; }

vmdir="$repo/build/vm"
kdir="$vmdir/kernel-$sub$kernel"
run="$vmdir/run-$sub$rsub$kernel"
rootfs="$vmdir/rootfs-arm64${rsub:+-${rsub%-}}"
if [ "$arch" = arm64 ]; then
	case "$PWD/" in
	"$repo"/*) ;;
	*) echo "vmtest: --arch arm64: the current directory must be below $repo" \
		"(the guest sees only it)" >&2; exit 2 ;;
	esac
	if [ -f "$rootfs/.peaktrace-rootfs-complete" ]; then
		echo "vmtest: arm64 root ${rootfs#"$repo/"}" \
			"(cached; made: $(cat "$rootfs/.peaktrace-rootfs-complete"))" >&2
	else
		echo "vmtest: making the arm64 guest root ${rootfs#"$repo/"} (tools/vm/rootfs-arm64.sh)" >&2
		"$here/rootfs-arm64.sh" "$rootfs" "$suite"
	fi
fi
t0=$(date +%s%N)
krel=$(VM_ARCH=${sub:+arm64} "$here/kernel.sh" "$kernel" "$kdir")
t1=$(date +%s%N)
if [ "$arch" = arm64 ]; then
	# The arm64 busybox of the guest's root; the virtio console carries the command's output.
	MKINITRD_EXTRA=virtio_console BUSYBOX="$rootfs/bin/busybox" "$here/mkinitrd.sh" "$kdir"
else
	"$here/mkinitrd.sh" "$kdir"
fi
echo "vmtest: kernel $kernel: $krel (Debian $(cat "$kdir/pkgver"))" >&2

rm -rf "$run"
mkdir -p "$run"
modules="$kdir/root/lib/modules/$krel"
[ -d "$modules" ] || modules="$kdir/root/usr/lib/modules/$krel"
{
	printf 'VMTEST_MODULES=%q\n' "$(readlink -f "$modules")"
	printf 'VMTEST_CWD=%q\n' "$PWD"
	printf 'VMTEST_KERNEL=%q\n' "$kernel"
	printf 'VMTEST_ARCH=%q\n' "$arch"
	printf 'VMTEST_RUN=%q\n' "${run#"$repo/"}"
	[ "$arch" = arm64 ] && printf 'VMTEST_TTY=/dev/hvc0\n'
} > "$run/env"
{
	echo "cd $(printf '%q' "$PWD") || { echo 'vmtest guest: this directory is not visible in the guest'; exit 125; }"
	printf 'exec'; printf ' %q' "$@"; echo
} > "$run/cmd.sh"

# tsc=reliable: without it 5.10 and 6.1 pick the HPET as clocksource under TCG, and every
# clock_gettime() becomes a syscall and an emulated MMIO read instead of a vDSO rdtsc.
append="console=ttyS0 quiet loglevel=3 panic=-1 tsc=reliable vmtest.init=$here/guest-init.sh ${VMTEST_APPEND:-}"
[ "$arch" = arm64 ] &&
	append="console=ttyAMA0 quiet loglevel=3 panic=-1 vmtest.init=$here/guest-init.sh"\
" vmtest.repo=$repo ${VMTEST_APPEND:-}"
# thread=single: with multi-threaded TCG, 6.12 oopsed twice in three smoke runs ("Oops: int3"
# in mm_trace_rss_stat while peaktrace attached its tracepoint: a vCPU ran the int3 of a
# text_poke_bp() after the patch had finished, which real CPUs never see). One host thread for
# both vCPUs costs ~10 s on the smoke run here; VMTEST_TCG_THREAD=multi to try the other.
qemu=(qemu-system-x86_64 -accel "tcg,thread=${VMTEST_TCG_THREAD:-single}" -cpu "${VMTEST_CPU:-max}" -smp "$smp" -m "$mem"
	-nodefaults -no-user-config -display none -no-reboot
	-kernel "$kdir/vmlinuz" -initrd "$kdir/initrd.img"
	-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot
	-fsdev "local,id=vmout,path=$run,security_model=none,multidevs=remap"
	-device virtio-9p-pci,fsdev=vmout,mount_tag=vmout
	-device virtio-rng-pci)
# arm64: qemu's virt board; pauth-impdef=on: -cpu max's pointer authentication with QARMA
# emulated is twice as slow (DESIGN §11). The guest's root is the arm64 one, this tree a second
# share; the command's output goes to a virtio console (virt has one UART: the kernel's console).
[ "$arch" = arm64 ] &&
	qemu=(qemu-system-aarch64 -M virt -accel "tcg,thread=${VMTEST_TCG_THREAD:-single}"
	-cpu "${VMTEST_CPU:-max,pauth-impdef=on}" -smp "$smp" -m "$mem"
	-nodefaults -no-user-config -display none -no-reboot
	-kernel "$kdir/vmlinuz" -initrd "$kdir/initrd.img"
	-fsdev "local,id=hostroot,path=$rootfs,security_model=none,readonly=on,multidevs=remap"
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot
	-fsdev "local,id=repo,path=$repo,security_model=none,readonly=on,multidevs=remap"
	-device virtio-9p-pci,fsdev=repo,mount_tag=repo
	-fsdev "local,id=vmout,path=$run,security_model=none,multidevs=remap"
	-device virtio-9p-pci,fsdev=vmout,mount_tag=vmout
	-device virtio-rng-pci -device virtio-serial-pci)

# The command's output: the second serial port (x86), the virtio console (arm64).
out_dev=(-serial stdio)
shell_out=(-serial null)
if [ "$arch" = arm64 ]; then
	out_dev=(-chardev stdio,id=cmdout -device virtconsole,chardev=cmdout)
	shell_out=(-chardev null,id=cmdout -device virtconsole,chardev=cmdout)
fi

if [ $shell = 1 ]; then
	# The console on this terminal (^A x quits qemu), no time limit.
	exec "${qemu[@]}" -append "$append vmtest.shell" -serial mon:stdio "${shell_out[@]}"
fi

# ttyS0, the console: console.log. ttyS1, CMD's output: qemu's stdout.
if [ $console = 1 ]; then
	: > "$run/console.log"
	tail -n +1 -f "$run/console.log" >&2 &
	tailpid=$!
fi
set +e
timeout -k 10 "$timeout" "${qemu[@]}" -append "$append" \
	-serial "file:$run/console.log" "${out_dev[@]}" </dev/null 2>"$run/qemu.stderr" |
	tr -d '\r' | tee "$run/output.log" | { if [ -n "$prefix" ]; then sed -u "s/^/$(printf '%s' "$prefix" | sed 's/[\/&]/\\&/g')/"; else cat; fi; }
qrc=${PIPESTATUS[0]}
set -e
[ $console = 1 ] && kill "$tailpid" 2>/dev/null
t2=$(date +%s%N)

boot=$(sed -n 's/.* up after \([0-9.]*\) s/\1/p' "$run/booted" 2>/dev/null || true)
secs() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 1e9 }'; }
echo "vmtest: kernel $krel: fetch $(secs $((t1 - t0))) s, boot ${boot:-?} s (to the guest's init), qemu $(secs $((t2 - t1))) s in all" >&2
echo "$(secs $((t2 - t1)))" > "$run/seconds"
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "vmtest: TIMEOUT: the VM ran over ${timeout} s and was killed; last console lines ($run/console.log):" >&2
	tail -n 20 "$run/console.log" >&2
	exit 124
fi
if [ ! -f "$run/rc" ]; then
	echo "vmtest: the guest did not run the command to its end (qemu exit $qrc); last console lines ($run/console.log):" >&2
	if grep -q 'Kernel panic' "$run/console.log"; then
		# The oops that led to it and its first lines, rather than the register dump's end.
		grep -m1 -A4 -E 'Oops|BUG:|Kernel panic' "$run/console.log" >&2
		grep -m1 'Kernel panic' "$run/console.log" >&2
	else
		tail -n 30 "$run/console.log" >&2
	fi
	[ -s "$run/qemu.stderr" ] && sed 's/^/qemu: /' "$run/qemu.stderr" >&2
	exit 125
fi
exit "$(cat "$run/rc")"
