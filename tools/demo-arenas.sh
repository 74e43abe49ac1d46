#!/bin/bash
# The glibc arenas part of the demo, run by tools/demo.sh at its end or on its own:
#   tools/demo-arenas.sh BUILD_DIR OUT_DIR
#
# Runs the bundled arena function (tools/functions/arena: 8 worker threads, each with its own glibc
# arena, free everything they allocate but keep one small record on top of their heap) under the
# Lambda-like host twice: with glibc's defaults, then with -e MALLOC_MMAP_THRESHOLD_=32768 (the
# environment form of mallopt(M_MMAP_THRESHOLD, 32768)). Each time peaktrace attaches to the
# runtime (-p), N invocations go through build/tools/invoke, peaktrace is stopped with SIGINT, then
# the host. Reports go to OUT_DIR/arenas-default and OUT_DIR/arenas-threshold; the ARENAS sections
# of both report.txt and a side-by-side comparison read from both report.json are printed.
# Loopback only; as root. Env: DEMO_ARENA_INVOCATIONS (default 8), DEMO_RUNTIME_PORT (default 9111;
# the invoke endpoint is the next port), DEMO_MEMORY_MB (default 256).
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-demo-out}
N=${DEMO_ARENA_INVOCATIONS:-8}
RT_PORT=${DEMO_RUNTIME_PORT:-9111}
INV_PORT=$((RT_PORT + 1))
MEM=${DEMO_MEMORY_MB:-256}
HOST=$BUILD/tools/lambda-host
INVOKE=$BUILD/tools/invoke
FN=$BUILD/tools/functions/arena
PT=$BUILD/peaktrace
for f in "$HOST" "$INVOKE" "$FN" "$PT"; do
	[ -x "$f" ] || { echo "demo-arenas: $f missing (make all lambda-host)" >&2; exit 1; }
done
# Debian's python3 (a version manager's shim may be first on PATH).
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
mkdir -p "$OUT"
PTPID=
HOSTPID=
PIDFILE=

cleanup() {
	[ -n "$PTPID" ] && kill -INT "$PTPID" 2>/dev/null || true
	[ -n "$HOSTPID" ] && kill -TERM "$HOSTPID" 2>/dev/null || true
	wait 2>/dev/null || true
	if [ -n "$PIDFILE" ]; then rm -f "$PIDFILE"; fi
}
trap cleanup EXIT

# run NAME [HOST OPTIONS...]: host + arena function, peaktrace attached, N invocations.
run() {
	local name=$1 dir=$OUT/arenas-$1 rt i
	shift
	rm -rf "$dir"
	mkdir -p "$dir"
	PIDFILE=$dir/.runtime.pid
	echo "== [$name] lambda-host -m $MEM $* -- $FN"
	"$HOST" -m "$MEM" --runtime-port "$RT_PORT" --invoke-port "$INV_PORT" --pid-file "$PIDFILE" \
		"$@" -- "$FN" >"$dir/lambda-host.log" 2>&1 &
	HOSTPID=$!
	for _ in $(seq 100); do [ -s "$PIDFILE" ] && break; sleep 0.1; done
	[ -s "$PIDFILE" ] || { echo "demo-arenas: the host did not start the runtime:"; cat "$dir/lambda-host.log"; exit 1; }
	rt=$(cut -d' ' -f1 "$PIDFILE")

	echo "== [$name] peaktrace -p $rt -o $dir"
	"$PT" -p "$rt" -o "$dir" >"$dir/stdout.txt" 2>"$dir/stderr.txt" &
	PTPID=$!
	for _ in $(seq 100); do grep -q "^peaktrace: tracing" "$dir/stderr.txt" 2>/dev/null && break; sleep 0.1; done
	grep -q "^peaktrace: tracing" "$dir/stderr.txt" || { echo "demo-arenas: peaktrace did not start:"; cat "$dir/stderr.txt"; exit 1; }

	for i in $(seq "$N"); do
		"$INVOKE" --port "$INV_PORT" '{}' >"$dir/invoke-$i.json"
		# What the process keeps resident between invocations (what Lambda's next one starts from).
		echo "   invocation $i: VmRSS $(awk '/^VmRSS/ {printf "%.1f MiB", $2 / 1024}' "/proc/$rt/status")"
		# Apart, so that peaktrace reads each one's arenas 50 ms after its end (it skips the
		# reading when the next invocation starts first).
		sleep 0.2
	done
	sleep 0.3
	kill -INT "$PTPID"
	wait "$PTPID" || true
	PTPID=
	kill -TERM "$HOSTPID" 2>/dev/null || true
	wait "$HOSTPID" 2>/dev/null || true
	HOSTPID=
	rm -f "$PIDFILE"
	PIDFILE=
}

run default
run threshold -e MALLOC_MMAP_THRESHOLD_=32768

for name in default threshold; do
	echo
	echo "== [$name] ARENAS ($OUT/arenas-$name/report.txt)"
	grep -q '^ARENAS' "$OUT/arenas-$name/report.txt" || echo "   (no ARENAS section in this report)"
	sed -n '/^ARENAS/,/^$/p' "$OUT/arenas-$name/report.txt"
	echo "   per invocation (arena retained when it ended, and its change):"
	sed -n '/^INVOCATIONS/,/^$/p' "$OUT/arenas-$name/report.txt" | tail -n +2
done

echo "== side by side (report.json)"
"$PY" - "$OUT/arenas-default/report.json" "$OUT/arenas-threshold/report.json" <<'EOF'
import json, sys

def load(path):
    with open(path) as f:
        return json.load(f)

def mib(v):
    if not isinstance(v, (int, float)):
        return "?"
    return "%.1f MiB" % (v / 1048576.0) if abs(v) >= 1048576 else "%.1f KiB" % (v / 1024.0)

reps = [load(p) for p in sys.argv[1:3]]
rows = []
for r in reps:
    ar = r.get("arenas") or {}
    tot = ar.get("totals") or {}
    lst = ar.get("list") or []
    rows.append({
        "peak RSS": r.get("rss", {}).get("peak_bytes"),
        "RSS at the end": r.get("rss", {}).get("last_bytes"),
        "arena resident": tot.get("resident_bytes"),
        "arena retained (resident - live)": tot.get("retained_bytes"),
        "live chunks in arenas": tot.get("live_chunk_bytes"),
        "mmapped chunks live": (ar.get("mmapped") or {}).get("live_chunk_bytes"),
        "live heap (requested)": r.get("totals", {}).get("live_bytes"),
        "arenas": ar.get("count", len(lst)) if ar else None,
    })
print("%-34s %16s %16s" % ("", "default", "MMAP_THRESHOLD=32K"))
for k in rows[0]:
    a, b = rows[0][k], rows[1][k]
    fmt = (lambda v: str(v) if v is not None else "?") if k == "arenas" else mib
    print("%-34s %16s %16s" % (k, fmt(a), fmt(b)))
ra, rb = rows[0]["arena retained (resident - live)"], rows[1]["arena retained (resident - live)"]
if isinstance(ra, (int, float)) and isinstance(rb, (int, float)) and ra > 0:
    print("retained in arenas: %s -> %s (%.0f %% less)" % (mib(ra), mib(rb), 100.0 * (ra - rb) / ra))
EOF
echo
echo "Reports: $OUT/arenas-default/ and $OUT/arenas-threshold/ (report.txt, report.json, flame graphs)."
