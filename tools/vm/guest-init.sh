#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# PID 1 of a vmtest guest (tools/vm/vmtest.sh), started by the initramfs (initramfs-init) in the
# host's root file system (9p, read-only, under a tmpfs overlay). Mounts what peaktrace and its
# tests need, runs /vmout/cmd.sh (written by the host) with its output on ttyS1 (arm64: hvc0;
# the host's stdout), stores its exit status in /vmout/rc and powers off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb
umask 022
echo "vmtest guest [$(cut -d' ' -f1 /proc/uptime)]: $0 started"
out=/vmout
# VMTEST_MODULES (this kernel's unpacked modules, a host path), VMTEST_CWD: from the host.
[ -f "$out/env" ] && { set -a; . "$out/env"; set +a; }

off() {
	sync
	# 'b' reboots at once; qemu runs with -no-reboot, so it exits. A panic (PID 1 exiting) does
	# the same (panic=-1), but noisily.
	echo b > /proc/sysrq-trigger
	sleep 10
}

m() {  # m TYPE TARGET [OPTIONS]
	mkdir -p "$2"
	mountpoint -q "$2" || mount -t "$1" ${3:+-o "$3"} "$1" "$2" ||
		echo "vmtest guest: mount -t $1 $2 failed" >&2
}

m devpts /dev/pts newinstance,ptmxmode=0666,mode=0620,gid=5
[ -e /dev/ptmx ] || ln -sf pts/ptmx /dev/ptmx
m tmpfs /dev/shm mode=1777
# The overlay root is writable already (its upper layer is a tmpfs); these are plain tmpfs so
# that the host's own files there are not seen, and for speed.
# Not over the directory the command runs in (a clone under /tmp, as CI may make): there the
# overlay's own tmpfs layer takes the writes.
for d in /tmp /var/tmp /run; do
	mode=1777
	[ "$d" = /run ] && mode=0755
	case "${VMTEST_CWD:-/}/" in
	"$d"/*) echo "vmtest guest: no tmpfs on $d (the command's directory is below it)" ;;
	*) m tmpfs "$d" "mode=$mode" ;;
	esac
done
m tmpfs /var/cache/peaktrace mode=0755
m tracefs /sys/kernel/tracing
m debugfs /sys/kernel/debug
m bpf /sys/fs/bpf mode=0700
m cgroup2 /sys/fs/cgroup
m securityfs /sys/kernel/security
# This kernel's modules at the usual place, for anything that modprobes.
krel=$(uname -r)
if [ -n "${VMTEST_MODULES:-}" ] && [ -d "$VMTEST_MODULES" ]; then
	mkdir -p "/lib/modules/$krel" && mount --bind "$VMTEST_MODULES" "/lib/modules/$krel"
fi
hostname vmtest 2>/dev/null
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up 2>/dev/null ||
	echo "vmtest guest: could not bring up lo" >&2
ulimit -c 0
ulimit -l unlimited 2>/dev/null   # BPF maps on kernels before 5.11 are charged to RLIMIT_MEMLOCK

# The command's output: the second serial port; the arm64 guest's is a virtio console (hvc0:
# qemu's virt machine has one UART), named by the host in /vmout/env.
tty=${VMTEST_TTY:-/dev/ttyS1}
stty -F "$tty" raw -echo 2>/dev/null
if grep -qw vmtest.shell /proc/cmdline; then
	# --shell: an interactive shell on the console (ttyS0; arm64: ttyAMA0), the command not run.
	con=/dev/ttyS0
	[ "${VMTEST_ARCH:-x86}" = arm64 ] && con=/dev/ttyAMA0
	stty -F $con sane 2>/dev/null
	echo "vmtest guest: shell on $(uname -r); exit (or ^D) powers off"
	cd "${VMTEST_CWD:-/}" && setsid -c bash -i <$con >$con 2>&1
	echo 0 > "$out/rc"
	off
fi
echo "vmtest guest: $(uname -r) up after $(cut -d' ' -f1 /proc/uptime) s" > "$out/booted"
bash "$out/cmd.sh" </dev/null >"$tty" 2>&1
echo $? > "$out/rc.tmp" && mv "$out/rc.tmp" "$out/rc"
off
