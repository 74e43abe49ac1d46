#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tools/bench/bench.sh BUILD_DIR — what peaktrace costs: allocbench (one thread and several),
# page faults and the bundled Lambda-like functions' invocation durations, untraced, at the probe
# floor (the same probes, empty programs), full, --light and sampled, in interleaved rounds of
# one run (tools/bench/bench.py says how), beside bcc's memleak-bpfcc and heaptrack when
# installed. Not part of `make test` (`make bench`).
#
# Environment: ROUNDS (default 5), OPS (allocbench operations, default 1000000), THREADS
# (allocbench-mt, default 2), INVOKES (invocations per mode and round, default 10), FN_MB (the
# functions' event, default 8), PEAKTRACE_ARGS (extra peaktrace options for every traced mode,
# e.g. "--unwind fp"), PEAKTRACE_VARIANTS (more modes in the same rounds, ';'-separated option
# sets, e.g. "--no-arenas;--unwind fp"), PEERS=0 (skip memleak-bpfcc and heaptrack), BPF_STATS=0
# (skip the per-program kernel time pass), ONLY (a regex of the workloads to run: allocbench-st,
# allocbench-mt, faults, fn-python, fn-node), MODES (a regex of the modes to run: untraced, floor,
# full, light, sampled, "pt ..." variants), BASE_PEAKTRACE (another peaktrace binary, e.g. the main
# branch's copied aside, run as "base MODE" in every traced mode of the same rounds).
#
# What is measured, and why this way:
#  * Every mode and workload runs in interleaved rounds (untraced, floor, full, light, sampled,
#    then again) ROUNDS times in this one run, so the machine's drift hits all of them alike.
#    The table gives median, min and max of every figure and the ratios of the medians (and of
#    the mins: on a loaded machine the least disturbed run of each mode) to the untraced run
#    and to the floor. tools/bench/bench.py says what each workload and mode is.
#  * allocbench's figure is its own timing of its allocation loop (CLOCK_MONOTONIC,
#    allocbench --time): the per-operation overhead a tracer imposes, without start-up and
#    reports. The functions' figure is the host's REPORT Duration, what a Lambda user is billed.
#  * Peers: memleak-bpfcc -c starts the command *before* compiling its BPF program (seconds),
#    so most of the loop would run untraced; it is therefore run as `memleak-bpfcc -p PID`
#    against `allocbench --wait`, released with SIGUSR1 once memleak's probes are in place.
#    heaptrack runs the command itself (LD_PRELOAD, no traps).
#  * The kernel's own per-program run time (kernel.bpf_stats_enabled, in a separate pass: it
#    costs a clock read per program run) is what to compare when cutting BPF work: it moves far
#    less with other users' load than wall time does.
#  * peaktrace's memory: max RSS of the peaktrace process alone. With `-- CMD` the
#    traced program is peaktrace's child and /usr/bin/time's figure could be the
#    child's, so this is one separate attach-mode run (`peaktrace -p` against
#    allocbench --wait: not its child) under /usr/bin/time -f %M. BPF maps live in
#    kernel memory, not in RSS: their size (bpftool's bytes_memlock of the maps held by
#    peaktrace) is printed beside it when bpftool can tell which process holds a map.
#    memleak-bpfcc's RSS is measured the same way for comparison.
#  * The error counters of peaktrace's last full-mode run are printed: overhead numbers
#    only mean something if nothing was dropped.
#  * Every allocbench run's checksum must equal the untraced one (tracing must not change
#    the program's behaviour); a mismatch is reported.
set -euo pipefail

BUILD=${1:-build}
ROUNDS=${ROUNDS:-5}
OPS=${OPS:-1000000}
HERE=$(cd "$(dirname "$0")" && pwd)

if [ ! -x "$BUILD/peaktrace" ]; then
	echo "bench: $BUILD/peaktrace not found (run make first)" >&2
	exit 1
fi
mkdir -p "$BUILD/bench"
# Built like a typical distribution binary: -O2, no frame pointers.
gcc -O2 -g -Wall -pthread -o "$BUILD/bench/allocbench" "$HERE/allocbench.c"
gcc -O2 -Wall -o "$BUILD/bench/faultbench" "$HERE/faultbench.c"

# memleak-bpfcc compiles its BPF C at start-up and needs kernel headers. When the
# running kernel has none (no /lib/modules/$(uname -r)/build, no CONFIG_IKHEADERS),
# give bcc the newest Debian linux-headers tree instead, merged from its -common and
# arch halves into one symlink tree (what /lib/modules/.../build normally is). With
# -p, memleak only attaches uprobes whose programs read pt_regs and call helpers, so
# headers of another kernel version do not change what it measures.
if command -v memleak-bpfcc >/dev/null 2>&1 && [ -z "${BCC_KERNEL_SOURCE:-}" ] &&
   [ ! -e "/lib/modules/$(uname -r)/build" ] && [ ! -e /sys/kernel/kheaders.tar.xz ]; then
	common=$(ls -d /usr/src/linux-headers-*-common 2>/dev/null | sort -V | tail -n 1 || true)
	archdir=""
	if [ -n "$common" ]; then
		archdir=$(ls -d "${common%-common}"-* 2>/dev/null | grep -v -- '-common$' | head -n 1 || true)
	fi
	if [ -n "$common" ] && [ -n "$archdir" ]; then
		kh="$BUILD/bench/kheaders"
		rm -rf "$kh" && mkdir -p "$kh"
		cp -rs "$common/." "$kh/" 2>/dev/null || true
		cp -rsn "$archdir/." "$kh/" 2>/dev/null || true
		export BCC_KERNEL_SOURCE=$(cd "$kh" && pwd)
		echo "bench: no headers for kernel $(uname -r); memleak-bpfcc uses $(basename "$archdir")"
	fi
fi

exec python3 "$HERE/bench.py" "$BUILD" "$ROUNDS" "$OPS"
