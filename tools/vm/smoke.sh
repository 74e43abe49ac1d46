#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tools/vm/smoke.sh VERSION [vmtest.sh options]: `make vmtest KERNEL=VERSION`. Runs
# tools/vm/smoke-guest.sh (the test cases of tools/vm/smoke.regex) in a VM of Debian's kernel
# VERSION, the guest's lines prefixed "[vm VERSION] ", and ends with one line
#   vmtest VERSION (KERNEL-RELEASE): N passed, N failed, N skipped
# (its words before the counts keep it from being taken for the host suite's closing line).
# Appends "VERSION KREL passed failed skipped seconds note" to $VMTEST_RESULTS (default
# build/vm/results.tsv). The build directory: $OUT (default build).
# VMTEST_ARCH=arm64 (make vmtest ARCH=arm64): Debian's arm64 kernel, the arm64 guest root, the
# build directory build-arm64 (make static ARCH=arm64's peaktrace-static and the cross-built
# workloads), "[vm arm64 VERSION] " and "vmtest arm64 VERSION (...)". VMTEST_UNPORTED=1 runs the
# guest with PEAKTRACE_UNPORTED=1 (an architecture refusal bypassed: none is left on arm64).
# VMTEST_SUITE=trixie (make vmtest ARCH=arm64 VM_SUITE=trixie): the guest's root is Debian
# trixie's (arm64 only), "[vm arm64 trixie VERSION] ", build/vm/run-arm64-trixie-VERSION/.
# Exit status: the guest's (0 when every case passed).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
ver=${1:?usage: smoke.sh VERSION [vmtest.sh options]}
shift
cd "$repo"
arch=${VMTEST_ARCH:-x86}
if [ "$arch" = arm64 ]; then
	label="arm64 $ver" sub="arm64-" ksub="arm64-" out=${OUT:-build-arm64}
	if [ "${VMTEST_SUITE:-bookworm}" != bookworm ]; then
		label="arm64 $VMTEST_SUITE $ver" sub="arm64-$VMTEST_SUITE-"
	fi
	guest_env=()
	[ "${VMTEST_UNPORTED:-0}" = 1 ] && guest_env=(env PEAKTRACE_UNPORTED=1)
else
	label=$ver sub="" ksub="" out=${OUT:-build} guest_env=()
fi
run="build/vm/run-$sub$ver"
results=${VMTEST_RESULTS:-build/vm/results.tsv}
# Kernels below peaktrace's floor (bpf_loop, 5.17): their test is a clean refusal.
expect=run
for r in ${VM_REFUSED:-5.10}; do [ "$r" = "$ver" ] && expect=refused; done

t0=$(date +%s)
"$here/vmtest.sh" --arch "$arch" --kernel "$ver" --timeout "${VMTEST_TIMEOUT:-900}" \
	--prefix "[vm $label] " "$@" -- \
	"${guest_env[@]}" bash tools/vm/smoke-guest.sh "$out" "" "$expect"
rc=$?
t1=$(date +%s)

krel=$(cat "build/vm/kernel-$ksub$ver/krel" 2>/dev/null || echo "?")
# The counts: tests/run.py's case lines, less the build/ ones (the workloads, prebuilt on the
# host, each reported as a passing case).
if grep -qE '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$run/output.log" 2>/dev/null; then
	p=$(grep -E '^PASS .* \([0-9]+ checks?\)' "$run/output.log" | grep -vc '^PASS build/')
	f=$(grep -E '^FAIL .* \([0-9]+ checks?, [0-9]+ failing\)' "$run/output.log" | grep -vc '^FAIL build/')
	s=$(grep -E '^SKIP .* \([0-9]+ checks?\)' "$run/output.log" | grep -vc '^SKIP build/')
	counts="$p passed, $f failed, $s skipped"
else
	counts=""
fi
note=""
if [ -z "$counts" ]; then
	# No closing line: the suite did not run to its end. Say why in one line.
	case $rc in
	124) note="VM timed out" ;;
	125) note="guest did not finish (see $run/console.log)"
		[ -f "$run/rc" ] && note=$(grep -m1 '^vmtest guest:' "$run/output.log")
		oops=$(grep -m1 -E 'Oops|BUG:|Kernel panic' "$run/console.log" 2>/dev/null | sed 's/^\[ *[0-9.]*\] //')
		[ -n "$oops" ] && note="guest kernel: $oops; $(grep -m1 'RIP:' "$run/console.log" | sed 's/^\[ *[0-9.]*\] //') (see $run/console.log)" ;;
	7) note=$(grep -m1 '^vmtest guest: peaktrace refused' "$run/output.log" | sed 's/^vmtest guest: //') ;;
	*) note="no closing line from tests/run.py (exit $rc)" ;;
	esac
	counts="0 passed, 1 failed, 0 skipped"
elif [ "${p:-0}" = 0 ] && [ "${f:-0}" -gt 0 ]; then
	# Everything failed: peaktrace's own line if one says it failed, else the first failing check.
	note=$(grep -v '^peaktrace: warning: ' "$run/output.log" | grep -m1 -o '^peaktrace: .*')
	[ -n "$note" ] || note=$(grep -m1 '^FAIL ' "$run/output.log")
	note=$(printf '%s' "$note" | cut -c1-160)
fi
read -r p _ f _ s _ <<< "${counts//,/}"
[ -n "$note" ] && echo "vmtest $label: $note"
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$krel" "$p" "$f" "$s" "$((t1 - t0))" "$note" >> "$results"
echo "vmtest $label ($krel): $counts"
exit $rc
