#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tools/bench/faults.sh BUILD_DIR — what RSS attribution by page (bpf/rss.bpf.h) costs per
# anonymous page fault: faultbench (tools/bench/faultbench.c: THP off, one write per page of a
# fresh 128 MiB mapping, median of 9 rounds, timed by the program itself) untraced and under
# peaktrace (default .eh_frame unwinder, and --unwind fp), interleaved ROUNDS times (default 5)
# in this one run; prints the medians in ns per fault and each as a ratio to the untraced run.
# Not part of `make test`.
set -euo pipefail

BUILD=${1:-build}
ROUNDS=${ROUNDS:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$BUILD/bench"
gcc -O2 -Wall -o "$BUILD/bench/faultbench" "$HERE/faultbench.c"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq "$ROUNDS"); do
	echo "untraced $("$BUILD/bench/faultbench" 128 9)"
	echo "peaktrace $("$BUILD/peaktrace" -q -o "$out/a" -- "$BUILD/bench/faultbench" 128 9 2>/dev/null)"
	echo "peaktrace--unwind-fp $("$BUILD/peaktrace" --unwind fp -q -o "$out/b" -- "$BUILD/bench/faultbench" 128 9 2>/dev/null)"
done | python3 -c '
import collections, statistics, sys
d = collections.defaultdict(list)
for line in sys.stdin:
    name, _, v = line.split()[:3]
    d[name].append(float(v))
u = statistics.median(d["untraced"])
print("%-22s %12s %8s" % ("configuration", "ns/fault", "ratio"))
for name, v in d.items():
    m = statistics.median(v)
    print("%-22s %12.0f %7.2fx" % (name.replace("--", " --").replace("-fp", " fp"), m, m / u))
'
