#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tools/vm/arm64-try.sh [VERSION]: one boot of Debian's arm64 kernel (tools/vm/kernel.sh with
# VM_ARCH=arm64; default 6.12) under qemu-system-aarch64 (TCG: -M virt -cpu max,pauth-impdef=on,
# DESIGN §11), with everything in the initramfs: no root file system, no 9p, no modules (the
# guest needs none: BTF, BPF and tracefs are built in). In it: Debian's busybox-static:arm64,
# the cross-built build-arm64/peaktrace-static and tools/vm/arm64-load.c, and the workload
# tests/workloads/wl_basic.c cross-built against bookworm's arm64 glibc (libc6-arm64-cross: its
# loader and libc copied in). The guest runs `peaktrace --check-kernel`, a tracing run (refused:
# exit 5), each BPF program of the arm64 object loaded alone (arm64-load), a run with
# PEAKTRACE_UNPORTED=1 -v, and powers off; the console is the output (also
# build/vm/arm64-run-VERSION/console.log). A first look for issue 24's port, not the VM matrix.
set -euo pipefail
ver=${1:-6.12}
out=build/vm/arm64-run-$ver
kdir=build/vm/kernel-arm64-$ver
[ -x build-arm64/peaktrace-static ] || { echo "arm64-try.sh: make static ARCH=arm64 first" >&2; exit 2; }
VM_ARCH=arm64 tools/vm/kernel.sh "$ver" >/dev/null
rm -rf "$out"
mkdir -p "$out"
tmp=$(mktemp -d /tmp/peaktrace-arm64.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download -qq busybox-static:arm64 2>/dev/null)
dpkg-deb -x "$tmp"/busybox-static_*_arm64.deb "$tmp/bb"
r=$tmp/root
mkdir -p "$r/bin" "$r/lib" "$r/proc" "$r/sys" "$r/dev" "$r/tmp"
cp "$tmp/bb/bin/busybox" "$r/bin/busybox"
cp build-arm64/peaktrace-static "$r/bin/peaktrace"
# Each program of the arm64 object loaded alone, before peaktrace can (tools/vm/arm64-load.c).
aarch64-linux-gnu-gcc -O2 -static tools/vm/arm64-load.c -o "$r/bin/arm64-load" -lbpf -lelf -lz -lzstd \
	2>/dev/null
cp build-arm64/peaktrace.bpf.o "$r/peaktrace.bpf.o"
cp -L /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 /usr/aarch64-linux-gnu/lib/libc.so.6 "$r/lib/"
aarch64-linux-gnu-gcc -O2 -g -fno-omit-frame-pointer -Itests/workloads tests/workloads/wl_basic.c \
	-o "$r/bin/wl_basic"
cat > "$r/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp; mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug; mount -t bpf bpf /sys/fs/bpf
ulimit -l unlimited
echo "=== uname: $(uname -r -m); up $(cut -d' ' -f1 /proc/uptime) s"
echo "=== wl_basic alone"; /bin/wl_basic; echo "rc=$?"
echo "=== peaktrace --check-kernel"; peaktrace --check-kernel; echo "rc=$?"
echo "=== peaktrace -- wl_basic"; peaktrace -- /bin/wl_basic; echo "rc=$?"
echo "=== arm64-load peaktrace.bpf.o (each program alone, the object's .rodata defaults)"
t0=$(cut -d' ' -f1 /proc/uptime)
arm64-load /peaktrace.bpf.o on_page_fault_user on_page_fault_kernel; echo "rc=$? ($t0 -> $(cut -d' ' -f1 /proc/uptime) s)"
echo "=== PEAKTRACE_UNPORTED=1 peaktrace -v -o /tmp/out -- wl_basic"
t0=$(cut -d' ' -f1 /proc/uptime)
PEAKTRACE_UNPORTED=1 peaktrace -v -o /tmp/out -- /bin/wl_basic > /tmp/pt.out 2> /tmp/pt.err
echo "rc=$? ($t0 -> $(cut -d' ' -f1 /proc/uptime) s)"
echo "--- stdout"; head -n 80 /tmp/pt.out
echo "--- stderr: $(wc -l < /tmp/pt.err) lines; errors:"; grep -n -i -E 'error|invalid|refus|too complex|failed|unknown|libbpf:' /tmp/pt.err | head -n 40
echo "--- stderr tail"; tail -n 40 /tmp/pt.err
ls /tmp/out 2>/dev/null
echo "=== done"
poweroff -f
INIT
chmod 755 "$r/init"
(cd "$r" && find . | LC_ALL=C sort | /bin/busybox cpio -o -H newc -R 0:0 2>/dev/null) | gzip -1 > "$out/initrd.img"
echo "arm64-try.sh: kernel $(cat "$kdir/krel"), initramfs $(du -k "$out/initrd.img" | cut -f1) KiB; booting" >&2
t0=$(date +%s)
timeout -k 10 "${ARM64_TRY_TIMEOUT:-900}" qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp 2 -m 2G \
	-accel tcg,thread=single -nographic -no-reboot -kernel "$kdir/vmlinuz" -initrd "$out/initrd.img" \
	-append "console=ttyAMA0 quiet loglevel=3 panic=-1 rdinit=/init" 2>&1 | tee "$out/console.log"
echo "arm64-try.sh: $(( $(date +%s) - t0 )) s" >&2
