#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tools/vm/smoke-guest.sh [BUILD [REGEX [run|refused]]]: the smoke run inside a vmtest guest (tools/vm/smoke.sh
# starts it through vmtest.sh), from the repo root. `peaktrace --check-kernel` first where the
# binary has it, else `peaktrace -- /bin/true` (exit 7 here if peaktrace refuses the kernel: the
# suite is not run), then
# tests/run.py --filter REGEX (default: tools/vm/smoke.regex) with each case's line stamped with
# the seconds since the run started. Exits with tests/run.py's status. With "refused" (a kernel
# below peaktrace's floor: vm.mk's VM_REFUSED) the case is the refusal: exit 7 and one line.
build=${1:-build}
regex=${2:-$(sed 's/#.*//; /^[[:space:]]*$/d' tools/vm/smoke.regex | paste -sd'|')}
expect=${3:-run}
# The python case is the guest root's own CPython, /usr/bin/python3's version: 3.11 in the host's
# root (x86) and bookworm's arm64 one, 3.13 in trixie's (tests/sections/python.py takes Debian's
# /usr/bin/python3.X when no pyenv build of it is there). smoke.regex names 3.11.
pyver=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
if [ -z "${2:-}" ] && [ -n "$pyver" ] && [ "$pyver" != 3.11 ]; then
	old='python/3\.11/' new="python/${pyver%%.*}\\.${pyver#*.}/"
	regex=${regex//"$old"/"$new"}
fi
pt="$build/peaktrace"
# build-arm64 (make static ARCH=arm64) has only the static binary; tests/run.py takes it too.
[ -e "$pt" ] || pt="$build/peaktrace-static"
echo "vmtest guest: $(uname -r) $(uname -m), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%d MiB", $2/1024}' /proc/meminfo), python3 $(python3 -c 'import platform; print(platform.python_version())')"
if [ "${PEAKTRACE_UNPORTED:-}" = 1 ]; then
	# An architecture whose port is not complete (user/arch/arch.c; none now): peaktrace refuses
	# to trace there unless asked to go on. Said here so that no result below is read as the
	# port's.
	echo "vmtest guest: PEAKTRACE_UNPORTED=1: peaktrace's refusal of $(uname -m) is bypassed" \
		"(its port is not complete)"
fi
if [ "$expect" = refused ]; then
	# A kernel below peaktrace's floor (vm.mk's VM_REFUSED): the test is the refusal itself.
	# --check-kernel exits 7; a run exits 7 with one line naming what is missing and the
	# version that has it, and no verifier log. Printed as tests/run.py prints a case.
	"$pt" --check-kernel > /tmp/vmtest-ck.out 2>&1
	ck=$?
	sed 's/^/check-kernel: /' /tmp/vmtest-ck.out
	"$pt" -q -o /tmp/vmtest-refused -- /bin/true > /tmp/vmtest-run.all 2>&1
	rc=$?
	sed 's/^/run: /' /tmp/vmtest-run.all
	# Under PEAKTRACE_UNPORTED=1 (arm64) the run's first line is that warning, asked for: the
	# refusal is the rest.
	grep -v '^peaktrace: warning: PEAKTRACE_UNPORTED=1: ' /tmp/vmtest-run.all > /tmp/vmtest-run.out
	fails=0
	check() {   # check WHAT CONDITION-STATUS DETAIL
		if [ "$2" != 0 ]; then echo "FAIL vm/refused: $1: $3"; fails=$((fails + 1)); fi
	}
	check "--check-kernel exits 7" "$([ $ck = 7 ]; echo $?)" "exit $ck"
	check "a run exits 7" "$([ $rc = 7 ]; echo $?)" "exit $rc"
	check "a run prints one line" "$([ "$(wc -l < /tmp/vmtest-run.out)" = 1 ]; echo $?)" "$(wc -l < /tmp/vmtest-run.out) lines"
	check "that line names what is missing and since when" \
		"$(grep -qE '^peaktrace: this kernel \(.*\) lacks .*\([0-9]+\.[0-9]+\+' /tmp/vmtest-run.out; echo $?)" \
		"$(head -c 200 /tmp/vmtest-run.out)"
	check "no verifier log" "$(! grep -q 'libbpf\|PROG LOAD LOG' /tmp/vmtest-run.out; echo $?)" "libbpf lines"
	if [ $fails = 0 ]; then
		echo "PASS vm/refused (5 checks)"
		echo "1 passed, 0 failed, 0 skipped"
		exit 0
	fi
	echo "FAIL vm/refused (5 checks, $fails failing)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
if "$pt" --help 2>&1 | grep -q -- '--check-kernel'; then
	out=$("$pt" --check-kernel 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/check-kernel: /'
	if [ $rc != 0 ] && [ "${PEAKTRACE_UNPORTED:-}" = 1 ]; then
		# The unported architecture's kernel is refused for what the port has yet to do: run the
		# suite anyway, each case failing for itself.
		lacks=$(printf '%s\n' "$out" | awk '$2 == "essential" && / missing/ { print $1 }' | paste -sd' ')
		echo "vmtest guest: peaktrace refused $(uname -r) (--check-kernel, exit $rc; essential and" \
			"missing: ${lacks:-?}); the suite runs anyway (PEAKTRACE_UNPORTED=1)"
	elif [ $rc != 0 ]; then
		echo "vmtest guest: peaktrace refused $(uname -r) (--check-kernel, exit $rc): $(printf '%s\n' "$out" | grep -m1 .)"
		exit 7
	fi
else
	# No --check-kernel in this build: trace /bin/true once. Exit 7 is peaktrace's "this kernel
	# cannot load it": say its line and the end of the verifier's log, and skip the suite (every
	# case would fail the same way, lambda/launch after a 60 s wait).
	pre=/tmp/vmtest-preflight
	"$pt" -q -o "$pre" -- /bin/true > "$pre.out" 2>&1
	rc=$?
	if [ $rc = 7 ]; then
		echo "vmtest guest: peaktrace refused $(uname -r) (exit 7): $(grep -m1 '^peaktrace: ' "$pre.out")"
		# The whole -v log in /vmout (the host's build/vm/run-VERSION/), and here the lines that
		# say what failed, then the verifier's last words before the end of a program's log.
		"$pt" -v -q -o "$pre" -- /bin/true > "$pre.v" 2>&1
		cp "$pre.v" /vmout/peaktrace-v.log 2>/dev/null
		echo "vmtest guest: from 'peaktrace -v -- /bin/true' (all of it: ${VMTEST_RUN:-build/vm/run-$VMTEST_KERNEL}/peaktrace-v.log on the host):"
		grep -iE 'fail|error|invalid|not (allowed|supported)|unknown|too (large|complex)|denied|unsupported|missing' "$pre.v" |
			grep -vE "relo #|found (data )?map|map '" | head -n 12 | sed 's/^/  /'
		if grep -q -- '-- END PROG LOAD LOG --' "$pre.v"; then
			echo "  ... the verifier's log ends:"
			grep -B8 -m1 -- '-- END PROG LOAD LOG --' "$pre.v" | cut -c1-200 | sed 's/^/  /'
		fi
		exit 7
	fi
	echo "vmtest guest: peaktrace -- /bin/true: exit $rc (no --check-kernel in this build)"
fi
echo "vmtest guest: python3 tests/run.py --build $build --filter '$regex'"
start=${EPOCHREALTIME/./}
set -o pipefail
python3 -u tests/run.py --build "$build" --filter "$regex" 2>&1 | tee /tmp/vmtest-run.log | while IFS= read -r line; do
	case "$line" in
	PASS\ *\(*|FAIL\ *\(*|SKIP\ *\(*)
		t=$(( (${EPOCHREALTIME/./} - start) / 100000 ))
		printf '%s [%d.%d s]\n' "$line" $((t / 10)) $((t % 10)) ;;
	*) printf '%s\n' "$line" ;;
	esac
done
rc=$?
# The outputs tests/run.py kept (it keeps them when a check failed) die with the guest: a
# tarball of them in /vmout (the host's build/vm/run-VERSION/test-outputs.tgz).
kept=$(sed -n 's/^outputs kept in //p' /tmp/vmtest-run.log | tail -n1)
if [ -n "$kept" ] && [ -d "$kept" ]; then
	timeout 120 tar -C "$kept" -czf /vmout/test-outputs.tgz . 2>/dev/null &&
		echo "vmtest guest: $kept saved as ${VMTEST_RUN:-build/vm/run-${VMTEST_KERNEL:-VERSION}}/test-outputs.tgz on the host"
fi
exit $rc
