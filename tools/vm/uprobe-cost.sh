#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tools/vm/uprobe-cost.sh [VERSION [N]]: what an arm64 uprobe hit costs, simulated against
# single-stepped (tools/vm/uprobe-cost.c), in the arm64 VM of Debian's kernel VERSION (default
# 6.12) under qemu-system-aarch64 (TCG: the figures are the emulator's, to compare the two kinds
# with each other, not with hardware). Builds build-arm64/uprobe-cost (static, cross) and
# build-arm64/uprobe-cost.bpf.o, then runs them in one boot (tools/vm/vmtest.sh --arch arm64).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
ver=${1:-6.12}
n=${2:-20000}
mkdir -p build-arm64
clang -O2 -g -target bpf -I/usr/include/"$(gcc -print-multiarch)" -c tools/vm/uprobe-cost.bpf.c \
	-o build-arm64/uprobe-cost.bpf.o
aarch64-linux-gnu-gcc -O2 -g -Wall -static tools/vm/uprobe-cost.c -o build-arm64/uprobe-cost \
	-lbpf -lelf -lz -lzstd
exec "$here/vmtest.sh" --arch arm64 --kernel "$ver" --prefix "[vm arm64 $ver] " -- \
	build-arm64/uprobe-cost build-arm64/uprobe-cost.bpf.o "$n"
