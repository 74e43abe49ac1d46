#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# tools/check-arm64.sh BINARY: the cross-built arm64 peaktrace checked on this x86-64 host under
# qemu-user (make check-arm64). No BPF runs under qemu-user: what is checked is that the binary
# is a static AArch64 executable, that it starts (--version, --help) and that a tracing run,
# which qemu-user's bpf() answers with ENOSYS, stops in one line naming that, exit 7 (the
# kernel check's refusal, user/kernel/features.c), before anything is started. The BPF side is
# checked by loading it in an arm64 VM (issue 24's VM matrix: make vmtest ARCH=arm64), not here.
set -uo pipefail
bin=${1:?usage: check-arm64.sh BINARY}
qemu=${QEMU_AARCH64:-qemu-aarch64-static}
fail=0
check() {  # check NAME CONDITION-STATUS [DETAIL]
	if [ "$2" -eq 0 ]; then echo "ok - arm64: $1"; else echo "not ok - arm64: $1${3:+: $3}"; fail=1; fi
}
command -v "$qemu" >/dev/null || { echo "check-arm64: $qemu not found (make deps-arm64)" >&2; exit 2; }

hdr=$(readelf -h "$bin" 2>&1)
grep -q 'Machine:.*AArch64' <<<"$hdr" && grep -q 'Type:.*EXEC' <<<"$hdr"
check "an AArch64 executable" $? "$(grep -E 'Machine|Type' <<<"$hdr" | tr -s ' ' | tr '\n' ';')"
dyn=$(readelf -d "$bin" 2>&1; readelf -l "$bin" 2>&1 | grep -c INTERP)
grep -q 'no dynamic section' <<<"$dyn" && [ "$(tail -n1 <<<"$dyn")" = 0 ]
check "statically linked: no dynamic section, no interpreter" $?

ver=$("$qemu" "$bin" --version 2>&1); rc=$?
[ $rc -eq 0 ] && grep -qx 'peaktrace [0-9.]*' <<<"$ver"
check "--version under qemu-user" $? "exit $rc: $ver"
help=$("$qemu" "$bin" --help 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q '^Usage: peaktrace' <<<"$help" && [ "$(wc -l <<<"$help")" -gt 20 ]
check "--help under qemu-user" $? "exit $rc"
# The same text as the host's build: the options do not depend on the architecture.
if [ -x build/peaktrace ]; then
	[ "$help" = "$(build/peaktrace --help 2>&1)" ]
	check "--help as the x86-64 build's" $?
fi
# Not refused for the architecture (arm64 is ported, user/arch/arch.c): it gets as far as the
# kernel check, which finds no bpf(). The marker file says the command was never started.
mark=$(mktemp -u /tmp/check-arm64.XXXXXX)
err=$("$qemu" "$bin" -- /bin/touch "$mark" 2>&1); rc=$?
[ $rc -eq 7 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && [ ! -e "$mark" ] &&
	grep -q '^peaktrace: this kernel (.*) has no bpf() system call (ENOSYS: .*qemu-user)$' <<<"$err"
check "a tracing run without bpf() (qemu-user): one line, exit 7, nothing started" $? "exit $rc: $err"
rm -f "$mark"
exit $fail
