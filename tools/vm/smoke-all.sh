#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tools/vm/smoke-all.sh [VERSION...]: `make vmtest-all`. tools/vm/smoke.sh for each kernel
# (default: 5.10 6.1 6.12 newest), one after the other, then a table of the results. Exit
# status 1 if any kernel had a failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
[ $# -gt 0 ] || set -- 5.10 6.1 6.12 newest
mkdir -p build/vm
# VMTEST_ARCH=arm64 (make vmtest-all ARCH=arm64): the arm64 kernels, a table of their own (and
# one of its own for a trixie root: VMTEST_SUITE=trixie).
suite=${VMTEST_SUITE:-bookworm}
[ "$suite" = bookworm ] && suite=
export VMTEST_RESULTS=build/vm/results-all${VMTEST_ARCH:+-$VMTEST_ARCH}${suite:+-$suite}.tsv
: > "$VMTEST_RESULTS"
status=0
for v in "$@"; do
	echo "=== vmtest ${VMTEST_ARCH:+$VMTEST_ARCH }${suite:+$suite }$v"
	"$here/smoke.sh" "$v" || status=1
done
echo
echo "vmtest-all${VMTEST_ARCH:+ $VMTEST_ARCH}${suite:+ $suite}:"
{
	printf 'kernel\trelease\tpassed\tfailed\tskipped\tseconds\tnote\n'
	cat "$VMTEST_RESULTS"
} | awk -F'\t' -v w="$([ -n "$suite" ] && echo 20 || { [ -n "${VMTEST_ARCH:-}" ] && echo 12; } || echo 7)" \
	'{ printf "  %-" w "s %-22s %6s %6s %7s %7s  %s\n", $1, $2, $3, $4, $5, $6, $7 }'
exit $status
