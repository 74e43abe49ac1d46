#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tools/vm/smoke.sh VERSION [vmtest.sh options]: `make vmtest KERNEL=VERSION`. Runs
# tools/vm/smoke-guest.sh (the test cases of tools/vm/smoke.regex) in a VM of Debian's kernel
# VERSION, the guest's lines prefixed "[vm VERSION] ", and ends with one line
#   vmtest VERSION (KERNEL-RELEASE): N passed, N failed, N skipped
# (its words before the counts keep it from being taken for the host suite's closing line).
# Appends "VERSION KREL passed failed skipped seconds note" to build/vm/results.tsv.
# Exit status: the guest's (0 when every case passed).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
ver=${1:?usage: smoke.sh VERSION [vmtest.sh options]}
shift
cd "$repo"
run="build/vm/run-$ver"

t0=$(date +%s)
"$here/vmtest.sh" --kernel "$ver" --timeout "${VMTEST_TIMEOUT:-900}" --prefix "[vm $ver] " "$@" -- \
	bash tools/vm/smoke-guest.sh build
rc=$?
t1=$(date +%s)

krel=$(cat "build/vm/kernel-$ver/krel" 2>/dev/null || echo "?")
counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$run/output.log" 2>/dev/null | tail -n1)
note=""
if [ -z "$counts" ]; then
	# No closing line: the suite did not run to its end. Say why in one line.
	case $rc in
	124) note="VM timed out" ;;
	125) note="guest did not finish (see $run/console.log)" ;;
	7) note=$(grep -m1 'check-kernel refused' "$run/output.log" | sed 's/^vmtest guest: //') ;;
	*) note="no closing line from tests/run.py (exit $rc)" ;;
	esac
	counts="0 passed, 1 failed, 0 skipped"
else
	read -r p _ f _ s _ <<< "${counts//,/}"
	if [ "$p" = 0 ] && [ "$f" -gt 0 ]; then
		# Everything failed: most likely peaktrace refused to load; its first own line says why.
		note=$(grep -m1 -o 'peaktrace: .*' "$run/output.log" | cut -c1-200)
	fi
fi
read -r p _ f _ s _ <<< "${counts//,/}"
[ -n "$note" ] && echo "vmtest $ver: $note"
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$ver" "$krel" "$p" "$f" "$s" "$((t1 - t0))" "$note" >> build/vm/results.tsv
echo "vmtest $ver ($krel): $counts"
exit $rc
