#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tools/bench/filefaults.sh BUILD_DIR [BASE_PEAKTRACE] — what charging file-backed and shared-memory
# pages to their object (bpf/rss.bpf.h rss_sh_*) costs per fault, and what the anonymous fault
# pays now: filefaultbench (file: a read fault mapping a 64 KiB fault-around window of a cached
# file; shmem: a write fault on a memfd page) and faultbench (anonymous, THP off), untraced,
# under BUILD_DIR/peaktrace and, when given, under BASE_PEAKTRACE (e.g. the main branch's
# build, without the per-object charging), interleaved ROUNDS times (default 5) in this one run;
# prints the medians in ns per fault and each as a ratio to the untraced run, with the load.
# Not part of `make test`.
set -euo pipefail

BUILD=${1:-build}
BASE=${2:-}
ROUNDS=${ROUNDS:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$BUILD/bench"
gcc -O2 -Wall -o "$BUILD/bench/filefaultbench" "$HERE/filefaultbench.c"
gcc -O2 -Wall -o "$BUILD/bench/faultbench" "$HERE/faultbench.c"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
uptime
for r in $(seq "$ROUNDS"); do
	for kind in file shmem anon; do
		if [ "$kind" = anon ]; then cmd=("$BUILD/bench/faultbench" 128 5)
		else cmd=("$BUILD/bench/filefaultbench" "$kind" 256 5 "$out"); fi
		echo "$kind untraced $("${cmd[@]}")"
		echo "$kind peaktrace $("$BUILD/peaktrace" -q -o "$out/a" -- "${cmd[@]}" 2>/dev/null)"
		if [ -n "$BASE" ]; then
			echo "$kind base $("$BASE" -q -o "$out/b" -- "${cmd[@]}" 2>/dev/null)"
		fi
	done
done | python3 -c '
import collections, statistics, sys
d = collections.defaultdict(list)
for line in sys.stdin:
    kind, name, _, v = line.split()
    d[(kind, name)].append(float(v))
print("%-6s %-10s %10s %8s  %s" % ("fault", "run", "ns/fault", "ratio", "rounds (ns)"))
for (kind, name), v in sorted(d.items()):
    u = statistics.median(d[(kind, "untraced")])
    m = statistics.median(v)
    print("%-6s %-10s %10.0f %7.2fx  %s" % (kind, name, m, m / u, " ".join("%.0f" % x for x in v)))
'
uptime
