#!/bin/sh
# make demo: trace the bundled demo function with peaktrace and write the report and flame graphs.
# Usage: tools/demo.sh BUILD_DIR   (run as root; `make demo` builds peaktrace first)
set -eu
BUILD=${1:-build}
OUT=${DEMO_OUT:-demo-out}
mkdir -p "$BUILD/tools"
cc -O2 -g -fno-omit-frame-pointer -pthread tools/demo/demo_app.c -o "$BUILD/tools/demo_app"
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
echo "== peaktrace -o $OUT -- $BUILD/tools/demo_app"
"$BUILD/peaktrace" -o "$OUT" -- "$BUILD/tools/demo_app"
echo
echo "== files written to $OUT/:"
ls -l "$OUT"
echo
echo "Open $OUT/peak.svg (live at the heap peak), $OUT/live.svg (leaks) and $OUT/alloc.svg"
echo "(everything allocated) in a browser; 'go tool pprof -top $OUT/profile.pb.gz' reads the pprof."
