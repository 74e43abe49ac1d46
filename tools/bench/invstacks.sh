#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tools/bench/invstacks.sh BUILD_A BUILD_B — what keeping each invocation's biggest stacks at its
# peak by default (for report.html) costs peaktrace: two builds (e.g. before and after) on the
# same work, interleaved ROUNDS times in this one run, so machine drift hits both alike. Not part
# of `make test`.
#
# Work: tools/functions/python under lambda-host, peaktrace -p attached, INVOKES invocations of
# {"mb": 2}. Measured per run: peaktrace's own CPU (user + sys, /usr/bin/time), its max RSS and
# the size of what it wrote (report.html when there). The table shows medians and B/A ratios.
set -euo pipefail
A=$1 B=$2
ROUNDS=${ROUNDS:-3}
INVOKES=${INVOKES:-100}
PORT=${PORT:-33100}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d /tmp/pt-invstacks-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
PY=/usr/bin/python3

one() {   # BUILD OUTDIR -> "cpu_s maxrss_kib html_bytes"
	local build=$1 out=$2 pidf=$TMP/rt.pid hostpid rt ptpid timepid
	rm -f "$pidf"
	"$build/tools/lambda-host" -m 512 --runtime-port "$PORT" --invoke-port $((PORT + 1)) --pid-file "$pidf" \
		--handler function.handler --task-root "$ROOT/tools/functions/python" \
		-- "$PY" "$ROOT/tools/functions/python/bootstrap.py" >"$TMP/host.log" 2>&1 &
	hostpid=$!
	for _ in $(seq 100); do [ -s "$pidf" ] && break; sleep 0.1; done
	rt=$(cut -d' ' -f1 "$pidf")
	sleep 1
	/usr/bin/time -f "%U %S %M" -o "$TMP/time" "$build/peaktrace" -q -p "$rt" -o "$out" 2>"$TMP/pt.err" &
	timepid=$!
	for _ in $(seq 200); do grep -q "^peaktrace: tracing" "$TMP/pt.err" 2>/dev/null && break; sleep 0.1; done
	for _ in $(seq "$INVOKES"); do "$build/tools/invoke" --port $((PORT + 1)) '{"mb": 2}' >/dev/null; done
	ptpid=$(pgrep -P "$timepid" | head -1)
	kill -INT "$ptpid"
	wait "$timepid" || true
	kill -TERM "$hostpid"; wait "$hostpid" 2>/dev/null || true
	read -r u s m <"$TMP/time"
	echo "$(echo "$u + $s" | bc) $m $(stat -c %s "$out/report.html" 2>/dev/null || echo 0)"
}

for r in $(seq "$ROUNDS"); do
	for v in A B; do
		build=$A; [ $v = B ] && build=$B
		echo "$v $(one "$build" "$TMP/out-$v-$r")" >>"$TMP/results"
		rm -rf "$TMP/out-$v-$r"
	done
done
python3 - "$TMP/results" "$A" "$B" "$INVOKES" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {v: [statistics.median(float(r[i]) for r in rows if r[0] == v) for i in (1, 2, 3)] for v in "AB"}
print("%d invocations, %d rounds, medians" % (int(sys.argv[4]), len(rows) // 2))
print("%-3s %-40s %10s %12s %14s" % ("", "build", "cpu s", "max RSS KiB", "report.html B"))
for v, b in (("A", sys.argv[2]), ("B", sys.argv[3])):
    print("%-3s %-40s %10.3f %12.0f %14.0f" % (v, b, med[v][0], med[v][1], med[v][2]))
print("B/A: cpu %.3f, max RSS %.3f" % (med["B"][0] / med["A"][0], med["B"][1] / med["A"][1]))
PY
