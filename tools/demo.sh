#!/bin/bash
# make demo: the main job on the bundled Lambda-like demo.
#
# Starts the project's Lambda-like host (tools/lambda-host) with the bundled Python function
# (tools/functions/python: buffers its whole response and deep-copies its context per request),
# attaches peaktrace to the runtime process, sends a series of invocations, and writes the
# per-invocation report and flame graphs to demo-out/. The host's REPORT lines (Lambda's
# "Max Memory Used", the sandbox high-water mark) print beside peaktrace's true per-invocation
# peaks. Loopback only. Usage: tools/demo.sh BUILD_DIR (as root; `make demo` builds first).
set -euo pipefail
BUILD=${1:-build}
OUT=${DEMO_OUT:-demo-out}
RT_PORT=${DEMO_RUNTIME_PORT:-9101}
INV_PORT=${DEMO_INVOKE_PORT:-8180}
HOST=$BUILD/tools/lambda-host
INVOKE=$BUILD/tools/invoke
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
rm -rf "$OUT"
mkdir -p "$OUT"
PIDFILE=$OUT/.runtime.pid
HOSTLOG=$OUT/lambda-host.log
PTPID=
HOSTPID=

cleanup() {
	[ -n "$PTPID" ] && kill -INT "$PTPID" 2>/dev/null || true
	[ -n "$HOSTPID" ] && kill -TERM "$HOSTPID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -f "$PIDFILE"
}
trap cleanup EXIT

# Debian's python3 (a version manager's shim would exec it later, after we looked).
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
echo "== lambda-host -m 256 -- $PY tools/functions/python/bootstrap.py  (function.handler)"
"$HOST" -m 256 --runtime-port "$RT_PORT" --invoke-port "$INV_PORT" --pid-file "$PIDFILE" \
	--handler function.handler --task-root tools/functions/python \
	-- "$PY" "$PWD/tools/functions/python/bootstrap.py" >"$HOSTLOG" 2>&1 &
HOSTPID=$!
for _ in $(seq 100); do [ -s "$PIDFILE" ] && break; sleep 0.1; done
[ -s "$PIDFILE" ] || { echo "demo: the host did not start the runtime:"; cat "$HOSTLOG"; exit 1; }
RT=$(cut -d' ' -f1 "$PIDFILE")
# The runtime may start through a wrapper that execs python (pyenv's shim): attach to the python.
for _ in $(seq 100); do readlink "/proc/$RT/exe" 2>/dev/null | grep -q python && break; sleep 0.1; done

echo "== peaktrace -p $RT -o $OUT --per-invocation --emf"
"$BUILD/peaktrace" -p "$RT" -o "$OUT" --per-invocation --emf >"$OUT/stdout.txt" 2>"$OUT/stderr.txt" &
PTPID=$!
for _ in $(seq 100); do grep -q "^peaktrace: tracing" "$OUT/stderr.txt" 2>/dev/null && break; sleep 0.1; done

# A big invocation, then smaller ones: Lambda's Max Memory Used stays at the first one's level.
for mb in 4 48 8 16 8; do
	echo "== invoke {\"mb\": $mb}"
	"$INVOKE" --port "$INV_PORT" "{\"mb\": $mb}"
	echo
	# Paced as a person invoking by hand: peaktrace reads the resident memory by allocator 50 ms
	# after an invocation ends, and skips it when the next one starts first (back to back).
	sleep 0.2
done
sleep 0.5
kill -INT "$PTPID"
wait "$PTPID" || true
PTPID=
kill -TERM "$HOSTPID" 2>/dev/null || true
wait "$HOSTPID" 2>/dev/null || true
HOSTPID=

echo
echo "== Lambda's REPORT lines (lambda-host):"
grep "^REPORT" "$HOSTLOG" || true
echo
echo "== peaktrace, per invocation (true peak, reset at every start):"
grep "^peaktrace: INVOCATION" "$OUT/stderr.txt" | sed 's/^peaktrace: //' || true
echo
sed -n '/^INVOCATIONS/,/^$/p' "$OUT/report.txt"
echo "== files written to $OUT/:"
ls "$OUT"
echo
echo "Open $OUT/report.html in a browser (from file://: memory over time, the invocations -- click"
echo "one for its own flame graph -- and every view); the single graphs are $OUT/peak.svg, live.svg,"
echo "alloc.svg, rss.svg, leaked.svg and invocation-N.peak.svg; $OUT/report.txt has the whole report."

# glibc arenas: the arena function with glibc's defaults, then with MALLOC_MMAP_THRESHOLD_=32768.
echo
DEMO_RUNTIME_PORT=$RT_PORT "$(dirname "$0")/demo-arenas.sh" "$BUILD" "$OUT"
