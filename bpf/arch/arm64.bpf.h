/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * arch/arm64.bpf.h — AArch64: what arch/x86.bpf.h names, for arm64's struct pt_regs
 * (regs[0..30], sp, pc, orig_x0, syscallno: arch/arm64/include/asm/ptrace.h) and the generic
 * syscall table (include/uapi/asm-generic/unistd.h: no open, no mmap2), and the hidden result
 * pointer's map. Included only through arch/arch.bpf.h (after bpf_helpers.h).
 */
#ifndef PEAKTRACE_ARCH_ARM64_BPF_H
#define PEAKTRACE_ARCH_ARM64_BPF_H

#include "sysnr.h"

#define PT_ARCH_IP      pc
#define PT_ARCH_SP      sp
/* x29: the frame-record chain, laid out as x86's rbp chain ([x29] = the caller's x29,
 * [x29 + 8] = the saved x30, its return address). */
#define PT_ARCH_FP      regs[29]
#define PT_ARCH_SYSNR   syscallno /* an int: -1 (NO_SYSCALL) outside a syscall, as orig_ax */
/* The first argument from orig_x0: x0 takes the return value, so at a syscall's exit regs[0]
 * is no longer the argument; the others are not written by the syscall's return. */
#define PT_ARCH_SYSARG0 orig_x0
#define PT_ARCH_SYSARG1 regs[1]
#define PT_ARCH_SYSARG2 regs[2]
#define PT_ARCH_SYSARG3 regs[3]
#define PT_ARCH_SYSARG4 regs[4]

#define PT_ARCH_NR_MMAP PT_ARM64_NR_MMAP
#define PT_ARCH_NR_MUNMAP PT_ARM64_NR_MUNMAP
#define PT_ARCH_NR_BRK PT_ARM64_NR_BRK
#define PT_ARCH_NR_MREMAP PT_ARM64_NR_MREMAP
#define PT_ARCH_NR_MADVISE PT_ARM64_NR_MADVISE
#define PT_ARCH_NR_WRITEV PT_ARM64_NR_WRITEV

/*
 * AAPCS64 passes a by-value class's hidden result pointer in x8, beside the arguments, and does
 * not return it: at get_next()'s return x8 is whatever the callee left there. Its entry probe
 * (the cookie PT_BOUNDARY_AWS_NEXT_CALL) keeps x8 per thread, its return probe takes it back.
 * A call already inside get_next when the probes are set is not seen at all (a return probe
 * takes the return address at the entry, on x86-64 too); one entered between the attach of
 * the return probe and the entry probe's returns without x8 kept: its invocation starts
 * without a request id, counted (PT_ERR_SRET_UNKNOWN). The N-th declared argument is xN-1:
 * `this` is x0. Measured in Debian's arm64 6.12 under qemu (a stand-in for aws-lambda-cpp,
 * its get_next and post_success alone probed): each start's id from x8, each end's from x1.
 */
#define PT_ARCH_SRET_KEPT 1
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);   /* threads inside get_next at once: one per runtime */
	__type(key, __u64);          /* bpf_get_current_pid_tgid() */
	__type(value, __u64);        /* x8 at the entry */
} sret_x8 SEC(".maps");

static __always_inline void pt_arch_sret_keep(struct pt_regs *ctx)
{
	__u64 tid = bpf_get_current_pid_tgid();
	__u64 x8 = ((const struct user_pt_regs *)ctx)->regs[8];

	bpf_map_update_elem(&sret_x8, &tid, &x8, BPF_ANY);
}

/* The pointer kept at the entry, or 0; the slot freed. */
static __always_inline __u64 pt_arch_sret_take(void)
{
	__u64 tid = bpf_get_current_pid_tgid(), *x8 = bpf_map_lookup_elem(&sret_x8, &tid), p = 0;

	if (x8) {
		p = *x8;
		bpf_map_delete_elem(&sret_x8, &tid);
	}
	return p;
}

/* A statement expression: count_err (state.bpf.h) is declared where the macro is used. */
#define PT_ARCH_SRET_ENTRY(ctx) pt_arch_sret_keep(ctx)
#define PT_ARCH_SRET_AT_RETURN(ctx) ({                                     \
	__u64 __p = pt_arch_sret_take();                                   \
	if (!__p)                                                          \
		count_err(PT_ERR_SRET_UNKNOWN);                            \
	__p;                                                               \
})
#define PT_ARCH_SRET_ARG2(ctx)      PT_REGS_PARM2(ctx)

/*
 * Stacks (stack.bpf.h, unwind.bpf.h). A bl pushes nothing: at a function's entry (a uprobe on
 * an allocator, or a syscall wrapper, a leaf) the return address is in x30 and the caller's
 * sp is sp itself. x30 is PT_REGS_RET(ctx) for a uprobe, regs[30] of the registers a syscall
 * or a fault saved (PT_ARCH_REGS_LR: a direct load from bpf_task_pt_regs()'s BTF pointer).
 * The captures find it in the thread's state, stored by their callers with PT_ARCH_KEEP_LR:
 * frame 0 at an entry, the first frame's return address at a fault in a leaf or a prologue.
 */
#define PT_ARCH_REGS_LR(regs)         ((regs)->regs[30])
#define PT_ARCH_KEEP_LR(ts, lr)       ((ts)->uw_lr = (lr))
#define PT_ARCH_ENTRY_RA(ts)          PT_ARCH_STRIP_RA((ts)->uw_lr)
#define PT_ARCH_ENTRY_SP_ADJ          0
/* Frame 0 at an entry is not read from the stack: sp may point at a stack page the program
 * never touched (a caller's frame made by `sub sp, sp, #N` whose lowest bytes were never
 * written), which bpf_probe_read_user cannot fault in from a uprobe. The capture then keeps
 * frame 0 from x30 and walks the frames above with single reads (stack.bpf.h unwind), as at a
 * fault's ip. */
#define PT_ARCH_ENTRY_RA_IN_REG       1
/*
 * Pointer authentication: code built with -mbranch-protection (trixie's glibc) signs x30 with
 * paciasp before saving it, so the return addresses on the stack (and x30 itself once the
 * prologue ran: a probe placed past paciasp, a fault in a signed leaf) carry a PAC in the bits
 * above the virtual address size. Stripped always, signed or not: the bits are never address
 * in user space (bit 55 clear; the PAC fills [54:VA] and, for instruction addresses, which
 * TBI does not cover, [63:56]). 48 bits: Debian's arm64 kernels are built with
 * CONFIG_ARM64_VA_BITS_48; a 52-bit kernel maps user code below 2^48 too (DEFAULT_MAP_WINDOW,
 * unless an mmap hint asks for more), so no code address loses a bit. The same mask as
 * user/arch/arm64.c pt_arm64_strip_pac(addr, 48); a JIT mapping above 2^48 would give frames
 * that name no mapping, reported as unknown frames, not dropped.
 */
#define PT_ARCH_VA_BITS               48
#define PT_ARCH_STRIP_RA(ra)          ((ra) & ((1ULL << PT_ARCH_VA_BITS) - 1))
/* The frame record sits at the bottom of a frame (GCC and LLVM): at a call, the caller's x29
 * is often sp itself, not above it as x86's rbp is above the pushed return address. */
#define PT_ARCH_FP_FLOOR(sp)          ((sp) - 1)
/* CFI rows: the arm64 layout of unwind.h (kind in the low 3 bits of cfa_reg, the return
 * address's slot in the high 5). */
#define PT_ARCH_ROW_KIND(row)         ((row).cfa_reg & PT_CFA_KIND_MASK)
/* x29's slot counts from the CFA's base register (0: not saved). */
#define PT_ARCH_ROW_FP_AT(row, cfa, bp_at) \
	bp_at = pt_unwind_a64_fp_at((row).cfa_off, (row).rbp_off8, cfa)
#define PT_ARCH_ROW_RA_IN_LR(row)     (((row).cfa_reg >> PT_CFA_RA_SHIFT) == PT_CFA_RA_IN_LR)
/* The slot is computed once and kept in the thread's state (ts->uw_ra_at), not in a register
 * the frame's helper calls would make the compiler spill to pt_unw_frame's stack. */
#define PT_ARCH_ROW_RA_KEEP(ts, row, cfa) \
	((ts)->uw_ra_at = pt_unwind_a64_ra_at((row).cfa_reg, (row).cfa_off, (row).rbp_off8, cfa))
#define PT_ARCH_ROW_RA_AT(ts, cfa)    ((ts)->uw_ra_at)
/* The frame-pointer fallback: [x29] = the caller's x29, [x29 + 8] its saved x30; the caller's
 * sp is not known from x29 (the record is at the bottom of the frame, its locals above it):
 * x29 + 16 is a lower bound, enough for the next frame's x29-based rule or frame record. */
#define PT_ARCH_FP_RA_KEEP(ts, cfa)   ((ts)->uw_ra_at = (cfa) - 8)
#define PT_ARCH_FP_CFA(fp)            ((fp) + 16)

/* Page faults: arm64 has no exceptions:page_fault_user/kernel (x86's tracepoints); the fault
 * handler's calls of handle_mm_fault are traced at their entry instead (fentry: 6.4+ on arm64,
 * where ftrace has direct calls), peaktrace.bpf.c's on_mm_fault and rss.bpf.h's rss_mm_fault. */
#define PT_ARCH_FAULT_FENTRY 1

#endif /* PEAKTRACE_ARCH_ARM64_BPF_H */
