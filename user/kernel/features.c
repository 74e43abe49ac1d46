// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * features.c — the kernel check: each feature bpf/ uses, probed the way the load will need it.
 *
 * How each is decided (probes that load a BPF program or create a map need root; without it
 * they stay "unknown", never "present": libbpf_probe_bpf_helper() answers "supported" when the
 * load fails for want of privilege, its log then being empty):
 *   BTF             /sys/kernel/btf/vmlinux opens and indexes (btfscan.h)
 *   uprobes         the uprobe PMU (/sys/bus/event_source/devices/uprobe/type), else the tracefs
 *                   uprobe_events file libbpf falls back to
 *   map types       libbpf_probe_bpf_map_type()
 *   helpers         libbpf_probe_bpf_helper() in each program type that calls them (kprobe for
 *                   the uprobes, tracepoint for tp/); the tp_btf programs (tracing type, which
 *                   libbpf cannot probe) get the same tracing helpers as raw tracepoints
 *   tp_btf          a tracing program of attach type BPF_TRACE_RAW_TP loaded against
 *                   btf_trace_sched_process_exec, as libbpf loads on_exec
 *   tracepoints     tp_btf ones: their btf_trace_<name> typedef in the BTF (what libbpf looks up
 *                   at load); tp/ ones: their tracefs id file (what attach/probes.c reads)
 *   fentry          where page faults are traced so (arm64): handle_mm_fault and ftrace's direct
 *                   calls (register_ftrace_direct, 6.4's register_ftrace_direct_multi) in the
 *                   BTF: arm64 loads such a program from 6.0 on but attaches it only with them
 *                   (error 524 before); --check-kernel also loads one and attaches it (which
 *                   patches the function: ~0.15-0.4 s under TCG with the close, so a run's own
 *                   check does not, its attach of on_mm_fault follows)
 *   kfunc, iter     a FUNC of that name in the BTF (bpf_rdonly_cast, bpf_iter_task)
 *   mm_lock_seq     mm_struct's member, in either form bpf/unwind.bpf.h reads: the int of
 *                   6.4 on, or the seqcount_t it became (with "sequence")
 *   uprobe-multi    attach/umulti.c's probe: a program loaded and a link asked for on "/"
 *   private stack   bpf_jit_supports_private_stack in the BTF on x86-64 (informational)
 */
#include <errno.h>
#include <linux/btf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "util/file.h"
#include "attach/nspid.h"
#include "attach/umulti.h"
#include "arch/arch.h"
#include "kernel/btfscan.h"
#include "kernel/features.h"

/*
 * Essential: the object cannot load or attach without it, and no .rodata setting or CO-RE check
 * in bpf/ takes its use out of every path the verifier walks (grep bpf/ for each):
 *   - CO-RE relocations and tp_btf need the kernel's BTF;
 *   - uprobes carry the allocator probes (the uprobe/uretprobe SEC()s). --light attaches none
 *     (without --boundary uprobe), yet the check refuses it too: it runs before the options
 *     matter, and a kernel of 5.17 or later built without CONFIG_UPROBE_EVENTS is rare;
 *   - state.bpf.h: the ring buffer "events" and the task storage "threads" are in every
 *     program's path;
 *   - helpers called unconditionally: bpf_get_current_task_btf (everywhere), bpf_task_pt_regs
 *     (memstat, rss, invocation), bpf_get_attach_cookie (heap, invocation), bpf_loop (rss,
 *     invocation, unwind), bpf_find_vma (unwind, rss), bpf_for_each_map_elem (rss at exec),
 *     bpf_get_ns_current_pid_tgid (python), bpf_probe_read_user (everywhere);
 *   - the tracepoints: attach/probes.c attaches every one and fails the run without it, and a
 *     tp_btf program whose btf_trace_ typedef is missing fails the load; the page faults' by
 *     architecture (arch/arch.h): x86's tracepoints exceptions:page_fault_user/kernel, arm64's
 *     fentry on handle_mm_fault (arm64 has no such tracepoints).
 * Optional: bpf_rdonly_cast (a .rodata flag takes it out, set from pt_kfeat_rdonly_cast()),
 * uprobe-multi (perf-event uprobes instead: session.c's s->multi), mm_lock_seq (CO-RE checks
 * for either form; without it JIT frames are looked up at every walk).
 */
const struct pt_kfeat_def pt_kfeat_defs[PT_KF_COUNT] = {
	[PT_KF_BTF] = { "btf", "BTF (/sys/kernel/btf/vmlinux)", "5.4", "CONFIG_DEBUG_INFO_BTF",
		PT_NEED_ESSENTIAL, "every BPF program is relocated against the kernel's own types (CO-RE)" },
	[PT_KF_UPROBES] = { "uprobes", "uprobes", "", "CONFIG_UPROBE_EVENTS", PT_NEED_ESSENTIAL,
		"the allocator's functions are probed with uprobes" },
	[PT_KF_RINGBUF] = { "ringbuf", "the BPF ring buffer", "5.8", NULL, PT_NEED_ESSENTIAL,
		"events reach peaktrace through a BPF ring buffer" },
	/* 5.11 brought task storage to BPF LSM programs only; 5.12 to tracing programs ("bpf:
	 * Enable task local storage for tracing programs"): the helper is probed in ours. */
	[PT_KF_TASK_STORAGE] = { "task_storage", "BPF task storage", "5.12", NULL, PT_NEED_ESSENTIAL,
		"each thread's state is kept in task storage" },
	[PT_KF_TP_BTF] = { "tp_btf", "BTF raw tracepoints (tp_btf)", "5.5", NULL, PT_NEED_ESSENTIAL,
		"exec, exit and page faults are traced as BTF raw tracepoints" },
	[PT_KF_PROBE_READ_USER] = { "bpf_probe_read_user", "bpf_probe_read_user", "5.5", NULL,
		PT_NEED_ESSENTIAL, "the programs read the target's stacks and chunk headers with it" },
	[PT_KF_NS_PID] = { "bpf_get_ns_current_pid_tgid", "bpf_get_ns_current_pid_tgid", "5.7", NULL,
		PT_NEED_ESSENTIAL, "Python frames are matched to their thread with it" },
	[PT_KF_TASK_BTF] = { "bpf_get_current_task_btf", "bpf_get_current_task_btf", "5.11", NULL,
		PT_NEED_ESSENTIAL, "every program reads the current task through it" },
	[PT_KF_TASK_PT_REGS] = { "bpf_task_pt_regs", "bpf_task_pt_regs", "5.15", NULL, PT_NEED_ESSENTIAL,
		"the syscall, fault and RSS programs read the thread's user registers with it" },
	[PT_KF_ATTACH_COOKIE] = { "bpf_get_attach_cookie", "bpf_get_attach_cookie", "5.15", NULL,
		PT_NEED_ESSENTIAL, "each allocator probe learns which function it is in from its cookie" },
	[PT_KF_FOR_EACH_MAP] = { "bpf_for_each_map_elem", "bpf_for_each_map_elem", "5.13", NULL,
		PT_NEED_ESSENTIAL, "an exec clears the page owners with it" },
	[PT_KF_LOOP] = { "bpf_loop", "bpf_loop", "5.17", NULL, PT_NEED_ESSENTIAL,
		"page walks and header searches run under it" },
	[PT_KF_FIND_VMA] = { "bpf_find_vma", "bpf_find_vma", "5.17", NULL, PT_NEED_ESSENTIAL,
		"stacks and faults find their mapping with it" },
	[PT_KF_TP_SCHED] = { "tp_sched_process", "the tracepoints sched:sched_process_exec/exit", "5.5",
		NULL, PT_NEED_ESSENTIAL, "the target's exec and exit are traced there" },
	[PT_KF_TP_PAGE_FAULT] = { "tp_page_fault", "the tracepoints exceptions:page_fault_user/kernel",
		"5.5", "x86 only", PT_NEED_ESSENTIAL, "RSS attribution by page: who faulted each page in",
		PT_FAULTS_TRACEPOINTS },
	/* arm64's BPF trampolines (6.0) reach ftrace-managed kernel functions through ftrace's
	 * direct calls, arm64's from 6.4 ("arm64: ftrace: Add direct call support"). */
	[PT_KF_FENTRY_FAULT] = { "fentry_fault", "fentry on handle_mm_fault", "6.4", "arm64",
		PT_NEED_ESSENTIAL, "RSS attribution by page: who faulted each page in (arm64 has no "
		"page-fault tracepoints)", PT_FAULTS_FENTRY },
	[PT_KF_TP_RSS_STAT] = { "tp_rss_stat", "the tracepoint kmem:rss_stat", "5.5", NULL,
		PT_NEED_ESSENTIAL, "the RSS counters and their peak" },
	[PT_KF_TP_SYSCALLS] = { "tp_syscalls", "the syscall tracepoints", "", "CONFIG_FTRACE_SYSCALLS",
		PT_NEED_ESSENTIAL, "mmap, munmap, mremap, brk, madvise and the Runtime API's socket traffic" },
	/* Comes with the ring buffer in mainline; probed apart for kernels with backports. */
	[PT_KF_TASK_ITER] = { "task_iter", "the BPF task iterator", "5.8", NULL, PT_NEED_IN_PIDNS,
		"in a PID namespace of its own peaktrace finds the target's host PID with it" },
	[PT_KF_RDONLY_CAST] = { "bpf_rdonly_cast", "the bpf_rdonly_cast kfunc", "6.2", NULL,
		PT_NEED_OPTIONAL, "the unwinder reads the task through its trusted pointer: the same "
		"loads, verified slower (on 6.18: ~10% more verifier time at start-up, 95 ms against 86)" },
	[PT_KF_UPROBE_MULTI] = { "uprobe_multi", "uprobe-multi links", "6.6", NULL, PT_NEED_OPTIONAL,
		"one perf-event uprobe per allocator address and direction instead of 3 links: each "
		"waits for an RCU grace period to detach (on 6.18: 17 uprobes, the exit 0.8 s longer), "
		"~8% more time per probe hit (attach/umulti.c)" },
	/* Per-VMA locks (6.4): an int, later a seqcount_t ("mm: convert mm_lock_seq to a proper
	 * seqcount"); bpf/unwind.bpf.h reads either. */
	[PT_KF_MM_LOCK_SEQ] = { "mm_lock_seq", "mm_struct.mm_lock_seq", "6.4", NULL,
		PT_NEED_OPTIONAL, "stacks through JIT code (V8) look their mapping up with bpf_find_vma at "
		"every walk instead of reusing the last lookup while no mapping changed" },
	/* Split RSS counting (SPLIT_RSS_COUNTING, gone in 6.2 with "mm: convert mm's rss stats
	 * into percpu_counter"): a thread's own changes stay in task_struct.rss_stat until its
	 * 64th event, then reach the mm's counter, /proc and kmem:rss_stat in one step. Measured
	 * in Debian's 6.1 (VM): wl_rss's own RssAnon deltas were 0 for two written pages and the
	 * attribution by page missed most of each scenario's pages. */
	[PT_KF_RSS_COUNTERS] = { "rss_counters", "RSS counters exact at every change", "6.2", NULL,
		PT_NEED_OPTIONAL, "each thread's RSS changes reach kmem:rss_stat (and /proc) in batches, "
		"after up to 64 of its page faults: RSS figures and peaks may lag by 64 pages a thread, "
		"and the pages of a batch are attributed to the fault that flushed it, not to each "
		"fault that made one resident" },
	/* "bpf: Support private stack for bpf progs" (x86-64 JIT). peaktrace keeps within the
	 * shared 512 bytes (docs: DESIGN §11): nothing depends on it. */
	[PT_KF_PRIV_STACK] = { "private_stack", "private BPF stacks", "6.13", "x86-64 JIT",
		PT_NEED_INFO, "nothing: every call chain keeps within the 512 bytes it shares" },
};

/* ---- pure logic -------------------------------------------------------------------------- */

int pt_kver_parse(const char *release, int *major, int *minor)
{
	char *end;
	long a, b;

	*major = *minor = 0;
	if (!release || *release < '0' || *release > '9')
		return -EINVAL;
	a = strtol(release, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return -EINVAL;
	b = strtol(end + 1, &end, 10);
	/* "6.1.0-18-amd64", "6.10.14-linuxkit", "7.2-rc1", "6.8": a separator or the end next. */
	if ((*end && *end != '.' && *end != '-' && *end != '+' && *end != '_') || a > 99 || b > 999)
		return -EINVAL;
	*major = (int)a;
	*minor = (int)b;
	return 0;
}

/* The kernel is older than the feature's mainline version: 1; newer or as old: 0; -1 when
 * either version is unknown. */
static int older_than(const struct pt_kfeats *k, enum pt_kfeat_id id)
{
	int ma, mi;

	if (!k->major || pt_kver_parse(pt_kfeat_defs[id].since, &ma, &mi))
		return -1;
	return k->major < ma || (k->major == ma && k->minor < mi);
}

const char *pt_kfeat_since_text(enum pt_kfeat_id id, char *buf, size_t size)
{
	const struct pt_kfeat_def *d = &pt_kfeat_defs[id];

	if (*d->since && d->note)
		snprintf(buf, size, "(%s+, %s)", d->since, d->note);
	else if (*d->since)
		snprintf(buf, size, "(%s+)", d->since);
	else
		snprintf(buf, size, "(%s)", d->note ? d->note : "?");
	return buf;
}

int pt_kfeat_pretend(struct pt_kfeats *k, const char *list)
{
	const char *p = list;

	k->pretend_error[0] = 0;
	while (p && *p) {
		size_t n = strcspn(p, ", ");
		int id;

		for (id = 0; n && id < PT_KF_COUNT; id++)
			if (strlen(pt_kfeat_defs[id].name) == n && !strncmp(pt_kfeat_defs[id].name, p, n))
				break;
		if (n && id == PT_KF_COUNT) {
			snprintf(k->pretend_error, sizeof(k->pretend_error),
				 "PEAKTRACE_PRETEND_MISSING: no feature named %.*s (--check-kernel lists them)",
				 (int)(n < 64 ? n : 64), p);
			return -EINVAL;
		}
		if (n) {
			k->state[id] = PT_KF_MISSING;
			k->pretended[id] = true;
		}
		p += n;
		p += strspn(p, ", ");
	}
	return 0;
}

bool pt_kfeat_applies(const struct pt_kfeats *k, enum pt_kfeat_id id)
{
	return !pt_kfeat_defs[id].faults || pt_kfeat_defs[id].faults == k->faults;
}

bool pt_kfeat_essential(const struct pt_kfeats *k, enum pt_kfeat_id id)
{
	enum pt_kfeat_need need = pt_kfeat_defs[id].need;

	if (!pt_kfeat_applies(k, id))
		return false;
	return need == PT_NEED_ESSENTIAL || (need == PT_NEED_IN_PIDNS && k->in_pidns);
}

int pt_kfeat_count(const struct pt_kfeats *k, enum pt_kfeat_state state, bool needed)
{
	int n = 0;

	for (int id = 0; id < PT_KF_COUNT; id++)
		if (k->state[id] == state && pt_kfeat_essential(k, id) == needed &&
		    (needed || pt_kfeat_defs[id].need == PT_NEED_OPTIONAL))
			n++;
	return n;
}

int pt_kfeat_refusal(const struct pt_kfeats *k, char *buf, size_t size)
{
	size_t len;
	int id, n = 0, first = -1;

	buf[0] = 0;
	if (k->pretend_error[0]) {
		snprintf(buf, size, "%s", k->pretend_error);
		return -EINVAL;
	}
	/* No bpf() at all: every feature would be "unknown" and the load fail with ENOSYS; one
	 * line says why instead. */
	if (k->no_bpf_syscall) {
		snprintf(buf, size, "this kernel (%s) has no bpf() system call (ENOSYS: built without "
			 "CONFIG_BPF_SYSCALL, or an emulator that does not pass it on, as qemu-user)",
			 k->release[0] ? k->release : "?");
		return 1;
	}
	len = (size_t)snprintf(buf, size, "this kernel (%s) lacks ", k->release[0] ? k->release : "?");
	for (id = 0; id < PT_KF_COUNT; id++) {
		char since[64];

		if (k->state[id] != PT_KF_MISSING || !pt_kfeat_essential(k, id))
			continue;
		if (first < 0)
			first = id;
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s %s%s", n ? ", " : "",
						pt_kfeat_defs[id].label, pt_kfeat_since_text(id, since, sizeof(since)),
						k->pretended[id] ? " [pretended: PEAKTRACE_PRETEND_MISSING]" : "");
		n++;
	}
	if (!n) {
		buf[0] = 0;
		return 0;
	}
	if (len < size)
		snprintf(buf + len, size - len, ": %s; `peaktrace --check-kernel` lists what it has",
			 pt_kfeat_defs[first].without);
	return n;
}

int pt_kfeat_unknown(const struct pt_kfeats *k, char *buf, size_t size)
{
	size_t len = 0;
	int n = 0;

	buf[0] = 0;
	for (int id = 0; id < PT_KF_COUNT; id++) {
		if (k->state[id] != PT_KF_UNKNOWN || !pt_kfeat_essential(k, id))
			continue;
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", n ? ", " : "", pt_kfeat_defs[id].label);
		n++;
	}
	return n;
}

const char *pt_kfeat_state_text(const struct pt_kfeats *k, enum pt_kfeat_id id, char *buf, size_t size)
{
	switch (k->state[id]) {
	case PT_KF_PRESENT:
		/* RHEL's 4.18 and 5.14 carry much of later kernels' BPF. */
		snprintf(buf, size, "%s", older_than(k, id) == 1 ? "present (backported)" : "present");
		break;
	case PT_KF_MISSING:
		snprintf(buf, size, "%s", k->pretended[id] ? "missing (pretended)" :
			 older_than(k, id) == 0 ? "missing (not built in)" : "missing");
		break;
	default:
		snprintf(buf, size, "%s", "unknown");
	}
	return buf;
}

void pt_kfeat_cost(enum pt_kfeat_id id, const struct pt_kfeat_measured *m, char *buf, size_t size)
{
	if (id == PT_KF_UPROBE_MULTI && m && m->uprobe_links)
		snprintf(buf, size, "%u allocator uprobes attached one by one as perf events instead of 3 "
				    "links (every probe attached in %.3f s), each waiting for an RCU grace "
				    "period to detach (on 6.18 ~50 ms each, at the exit), ~8%% more time per "
				    "probe hit (attach/umulti.c)", m->uprobe_links, m->attach_ns / 1e9);
	else
		snprintf(buf, size, "%s", pt_kfeat_defs[id].without);
}

/* ---- probes ------------------------------------------------------------------------------ */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static enum pt_kfeat_state yes(bool present)
{
	return present ? PT_KF_PRESENT : PT_KF_MISSING;
}

/* libbpf's 1 / 0 / -errno as a state. */
static enum pt_kfeat_state libbpf_answer(int r)
{
	return r > 0 ? PT_KF_PRESENT : r == 0 ? PT_KF_MISSING : PT_KF_UNKNOWN;
}

/* "r0 = 0; exit" loaded: the later probes' loads fail with EPERM without privilege, and
 * libbpf's helper probe reads that as "supported". */
static bool can_load(struct pt_kfeats *k)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, NULL, "GPL", insns, 2, NULL);

	if (fd < 0) {
		k->no_bpf_syscall = errno == ENOSYS;
		return false;
	}
	close(fd);
	return true;
}

/* A helper in every program type given: missing if one lacks it. */
static enum pt_kfeat_state helper(enum bpf_func_id fn, bool kprobe, bool tracepoint)
{
	enum pt_kfeat_state s = PT_KF_PRESENT, t;

	if (kprobe && (t = libbpf_answer(libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, fn, NULL))) != PT_KF_PRESENT)
		s = t;
	if (tracepoint && s != PT_KF_MISSING &&
	    (t = libbpf_answer(libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, fn, NULL))) != PT_KF_PRESENT)
		s = t;
	return s;
}

/* A tracing program attached as a BTF raw tracepoint (as libbpf loads a tp_btf program). */
static enum pt_kfeat_state tp_btf_loads(uint32_t btf_id)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_RAW_TP,
		    .attach_btf_id = btf_id);
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd;

	if (!btf_id)
		return PT_KF_UNKNOWN;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, 2, &o);
	if (fd < 0)
		return errno == EPERM ? PT_KF_UNKNOWN : PT_KF_MISSING;
	close(fd);
	return PT_KF_PRESENT;
}

static bool thorough;

void pt_kfeat_set_thorough(bool on)
{
	thorough = on;
}

/* A tracing program at a kernel function's entry (fentry), loaded and attached as libbpf
 * attaches on_mm_fault, then closed: arm64 kernels before 6.4 load it, the attach fails. */
static enum pt_kfeat_state fentry_attaches(uint32_t btf_id, char *detail)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FENTRY,
		    .attach_btf_id = btf_id);
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd, lfd, err;

	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns, 2, &o);
	if (fd < 0) {
		err = errno;
		if (err == EPERM)
			return PT_KF_UNKNOWN;
		snprintf(detail, PT_KDETAIL_LEN, "the load fails: %s", strerror(err));
		return PT_KF_MISSING;
	}
	lfd = bpf_raw_tracepoint_open(NULL, fd);
	err = errno;
	close(fd);
	if (lfd >= 0) {
		close(lfd);
		return PT_KF_PRESENT;
	}
	/* 524: the kernel's ENOTSUPP, no trampoline for an ftrace-managed function. */
	snprintf(detail, PT_KDETAIL_LEN, "it loads, the attach fails: %s%s", strerror(err),
		 err == 524 ? " (no ftrace direct calls: arm64 before 6.4)" : "");
	return err == EPERM ? PT_KF_UNKNOWN : PT_KF_MISSING;
}

/* fentry on handle_mm_fault (hmf: its BTF id; direct: ftrace's direct calls are in the BTF). */
static enum pt_kfeat_state fentry_fault(const struct pt_kfeats *k, uint32_t hmf, bool direct,
					char *detail)
{
	if (!hmf) {
		snprintf(detail, PT_KDETAIL_LEN, "no handle_mm_fault in the kernel's BTF");
		return PT_KF_MISSING;
	}
	if (!direct) {
		snprintf(detail, PT_KDETAIL_LEN, "no ftrace direct calls (register_ftrace_direct): "
			 "a BPF trampoline cannot be attached there");
		return PT_KF_MISSING;
	}
	if (!thorough)
		return PT_KF_PRESENT;
	return k->privileged ? fentry_attaches(hmf, detail) : PT_KF_UNKNOWN;
}

/* Where tracefs is (session.c mounts it when it is nowhere: so does the check, as root); NULL
 * with errno EACCES when it is there but not ours to read (/sys/kernel/tracing is 0700). */
static const char *tracefs(void)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char p[64];
	bool denied = false;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
			snprintf(p, sizeof(p), "%s/events", roots[i]);
			if (!access(p, F_OK))
				return roots[i];
			denied |= errno == EACCES;
		}
		if (pass || denied || geteuid() || mount("nodev", roots[0], "tracefs", 0, NULL))
			break;
	}
	errno = denied ? EACCES : ENOENT;
	return NULL;
}

static void probe_tracefs(struct pt_kfeats *k)
{
	/* attach/probes.c's list: the memory syscalls, and the Runtime API's socket traffic. */
	static const char *const sys[] = {
		"sys_enter_mmap", "sys_enter_munmap", "sys_enter_mremap", "sys_enter_brk",
		"sys_enter_madvise", "sys_enter_write", "sys_enter_sendto", "sys_enter_writev",
		"sys_exit_mmap", "sys_exit_munmap", "sys_exit_mremap", "sys_exit_brk", "sys_exit_read",
		"sys_exit_recvfrom",
	};
	const char *root = tracefs();
	char p[160];
	int missing = 0;

	if (!root) {
		snprintf(k->detail[PT_KF_TP_SYSCALLS], PT_KDETAIL_LEN, "%s", errno == EACCES ?
			 "tracefs is root's to read" : geteuid() ? "tracefs is not mounted (root mounts it)" :
			 "tracefs is not mounted and cannot be");
		k->state[PT_KF_TP_SYSCALLS] = k->state[PT_KF_TP_RSS_STAT] = PT_KF_UNKNOWN;
		return;
	}
	snprintf(p, sizeof(p), "%s/events/kmem/rss_stat/id", root);
	k->state[PT_KF_TP_RSS_STAT] = !access(p, R_OK) ? PT_KF_PRESENT :
				      errno == ENOENT ? PT_KF_MISSING : PT_KF_UNKNOWN;
	k->state[PT_KF_TP_SYSCALLS] = PT_KF_PRESENT;
	for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++) {
		snprintf(p, sizeof(p), "%s/events/syscalls/%s/id", root, sys[i]);
		if (!access(p, R_OK))
			continue;
		if (errno != ENOENT) {
			k->state[PT_KF_TP_SYSCALLS] = PT_KF_UNKNOWN;
			return;
		}
		if (!missing++)
			snprintf(k->detail[PT_KF_TP_SYSCALLS], PT_KDETAIL_LEN, "no syscalls:%s", sys[i]);
		k->state[PT_KF_TP_SYSCALLS] = PT_KF_MISSING;
	}
	if (missing > 1)
		snprintf(k->detail[PT_KF_TP_SYSCALLS] + strlen(k->detail[PT_KF_TP_SYSCALLS]),
			 PT_KDETAIL_LEN - strlen(k->detail[PT_KF_TP_SYSCALLS]), " and %d more", missing - 1);
}

static void probe_uprobes(struct pt_kfeats *k)
{
	const char *root;
	char p[96];

	if (!access("/sys/bus/event_source/devices/uprobe/type", R_OK)) {
		k->state[PT_KF_UPROBES] = PT_KF_PRESENT;
		return;
	}
	/* No uprobe PMU (before 4.17): libbpf attaches through tracefs's uprobe_events. */
	root = tracefs();
	if (root)
		snprintf(p, sizeof(p), "%s/uprobe_events", root);
	k->state[PT_KF_UPROBES] = !root ? PT_KF_UNKNOWN : yes(!access(p, F_OK));
	if (k->state[PT_KF_UPROBES] == PT_KF_PRESENT)
		snprintf(k->detail[PT_KF_UPROBES], PT_KDETAIL_LEN, "no uprobe PMU: through %s", p);
}

/* mm_struct.mm_lock_seq: a seqcount_t, an int (its first form, 6.4 on), or none (before 6.4,
 * or without CONFIG_PER_VMA_LOCK). */
static enum pt_kfeat_state mm_lock_seq(const struct pt_btf *b, uint32_t mm, char *detail)
{
	uint32_t t = mm ? pt_btf_member(b, mm, "mm_lock_seq") : 0;

	if (!mm)
		return PT_KF_UNKNOWN;
	if (!t) {
		snprintf(detail, PT_KDETAIL_LEN, "no such member (before 6.4, or no CONFIG_PER_VMA_LOCK)");
		return PT_KF_MISSING;
	}
	if (pt_btf_kind(b, t) == BTF_KIND_STRUCT && pt_btf_member(b, t, "sequence"))
		return PT_KF_PRESENT;
	if (pt_btf_kind(b, t) == BTF_KIND_INT) {
		snprintf(detail, PT_KDETAIL_LEN, "an int here (before it became a seqcount_t)");
		return PT_KF_PRESENT;
	}
	snprintf(detail, PT_KDETAIL_LEN, "of a type the programs do not read (BTF kind %d)", pt_btf_kind(b, t));
	return PT_KF_MISSING;
}

/* Everything the kernel's BTF answers. */
static void probe_btf(struct pt_kfeats *k)
{
	enum { Q_RDONLY, Q_ITER, Q_PRIV, Q_EXEC, Q_EXIT, Q_PFU, Q_PFK, Q_MM, Q_TASK, Q_HMF, Q_DIRECT,
	       Q_DIRECT_MULTI, NQ };
	struct pt_btf_query q[NQ] = {
		[Q_RDONLY] = { "bpf_rdonly_cast", BTF_KIND_FUNC },
		[Q_ITER] = { "bpf_iter_task", BTF_KIND_FUNC },
		[Q_PRIV] = { "bpf_jit_supports_private_stack", BTF_KIND_FUNC },
		[Q_EXEC] = { "btf_trace_sched_process_exec", BTF_KIND_TYPEDEF },
		[Q_EXIT] = { "btf_trace_sched_process_exit", BTF_KIND_TYPEDEF },
		[Q_PFU] = { "btf_trace_page_fault_user", BTF_KIND_TYPEDEF },
		[Q_PFK] = { "btf_trace_page_fault_kernel", BTF_KIND_TYPEDEF },
		[Q_MM] = { "mm_struct", BTF_KIND_STRUCT },
		[Q_TASK] = { "task_struct", BTF_KIND_STRUCT },
		[Q_HMF] = { "handle_mm_fault", BTF_KIND_FUNC },
		[Q_DIRECT] = { "register_ftrace_direct", BTF_KIND_FUNC },
		[Q_DIRECT_MULTI] = { "register_ftrace_direct_multi", BTF_KIND_FUNC },
	};
	struct pt_btf b;
	int err = pt_btf_open_vmlinux(&b);

	if (err) {
		k->state[PT_KF_BTF] = err == -ENOENT ? PT_KF_MISSING : PT_KF_UNKNOWN;
		if (err != -ENOENT)
			snprintf(k->detail[PT_KF_BTF], PT_KDETAIL_LEN, "/sys/kernel/btf/vmlinux: %s",
				 strerror(-err));
		return;
	}
	k->state[PT_KF_BTF] = PT_KF_PRESENT;
	pt_btf_find(&b, q, NQ);
	k->state[PT_KF_RDONLY_CAST] = yes(q[Q_RDONLY].id);
	k->state[PT_KF_TASK_ITER] = yes(q[Q_ITER].id);
	k->state[PT_KF_TP_SCHED] = yes(q[Q_EXEC].id && q[Q_EXIT].id);
	k->state[PT_KF_TP_PAGE_FAULT] = yes(q[Q_PFU].id && q[Q_PFK].id);
	if (!q[Q_PFU].id)
		snprintf(k->detail[PT_KF_TP_PAGE_FAULT], PT_KDETAIL_LEN, "none on %s", k->machine);
	k->state[PT_KF_MM_LOCK_SEQ] = mm_lock_seq(&b, q[Q_MM].id, k->detail[PT_KF_MM_LOCK_SEQ]);
	/* task_struct.rss_stat exists only with SPLIT_RSS_COUNTING. */
	k->state[PT_KF_RSS_COUNTERS] = !q[Q_TASK].id ? PT_KF_UNKNOWN :
				       yes(!pt_btf_member(&b, q[Q_TASK].id, "rss_stat"));
	if (k->state[PT_KF_RSS_COUNTERS] == PT_KF_MISSING)
		snprintf(k->detail[PT_KF_RSS_COUNTERS], PT_KDETAIL_LEN,
			 "task_struct.rss_stat: split RSS counting (before 6.2)");
	k->state[PT_KF_PRIV_STACK] = !q[Q_PRIV].id ? PT_KF_MISSING :
				     strcmp(k->machine, "x86_64") ? PT_KF_UNKNOWN : PT_KF_PRESENT;
	if (q[Q_PRIV].id)
		snprintf(k->detail[PT_KF_PRIV_STACK], PT_KDETAIL_LEN, "the kernel has it; whether a "
			 "program gets one is the verifier's call at each load");
	k->state[PT_KF_TP_BTF] = k->privileged ? tp_btf_loads(q[Q_EXEC].id) : PT_KF_UNKNOWN;
	/* Probed only where it is this binary's way to page faults. */
	if (pt_kfeat_applies(k, PT_KF_FENTRY_FAULT))
		k->state[PT_KF_FENTRY_FAULT] = fentry_fault(k, q[Q_HMF].id,
							    q[Q_DIRECT].id || q[Q_DIRECT_MULTI].id,
							    k->detail[PT_KF_FENTRY_FAULT]);
	pt_btf_close(&b);
}

/* The probes that load a program or create a map (root only). */
static void probe_bpf(struct pt_kfeats *k)
{
	enum pt_kfeat_state ts;

	k->state[PT_KF_RINGBUF] = libbpf_answer(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL));
	ts = libbpf_answer(libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL));
	k->state[PT_KF_TASK_STORAGE] = ts != PT_KF_PRESENT ? ts : helper(BPF_FUNC_task_storage_get, true, true);
	if (ts == PT_KF_PRESENT && k->state[PT_KF_TASK_STORAGE] == PT_KF_MISSING)
		snprintf(k->detail[PT_KF_TASK_STORAGE], PT_KDETAIL_LEN,
			 "the map exists, but tracing programs cannot use it (5.11: BPF LSM only)");
	k->state[PT_KF_PROBE_READ_USER] = helper(BPF_FUNC_probe_read_user, true, true);
	k->state[PT_KF_NS_PID] = helper(BPF_FUNC_get_ns_current_pid_tgid, true, true);
	k->state[PT_KF_TASK_BTF] = helper(BPF_FUNC_get_current_task_btf, true, true);
	k->state[PT_KF_TASK_PT_REGS] = helper(BPF_FUNC_task_pt_regs, false, true);
	k->state[PT_KF_ATTACH_COOKIE] = helper(BPF_FUNC_get_attach_cookie, true, false);
	/* Called from the tp_btf exec program: a tracing type libbpf cannot probe; its helpers are
	 * a raw tracepoint's, a superset of a tracepoint's. */
	k->state[PT_KF_FOR_EACH_MAP] = helper(BPF_FUNC_for_each_map_elem, false, true);
	k->state[PT_KF_LOOP] = helper(BPF_FUNC_loop, true, true);
	k->state[PT_KF_FIND_VMA] = helper(BPF_FUNC_find_vma, true, true);
	k->state[PT_KF_UPROBE_MULTI] = yes(pt_umulti_supported());
}

/* A fresh probe of this kernel into k (no pretending). */
static void probe_all(struct pt_kfeats *k)
{
	struct utsname u;
	uint64_t t = now_ns();
	char *jit;

	memset(k, 0, sizeof(*k));
	if (!uname(&u)) {
		snprintf(k->release, sizeof(k->release), "%s", u.release);
		snprintf(k->machine, sizeof(k->machine), "%s", u.machine);
		pt_kver_parse(k->release, &k->major, &k->minor);
	}
	k->in_pidns = pt_in_pid_namespace();
	k->faults = pt_arch_host()->faults;
	k->privileged = can_load(k);
	probe_uprobes(k);
	probe_tracefs(k);
	probe_btf(k);
	if (k->privileged)
		probe_bpf(k);
	/* The interpreter has no private stack (bpf_jit_enable 0; root-only on recent kernels). */
	jit = pt_read_file("/proc/sys/net/core/bpf_jit_enable", 16, NULL);
	if (jit && jit[0] == '0')
		k->state[PT_KF_PRIV_STACK] = PT_KF_MISSING;
	free(jit);
	k->probe_ns = now_ns() - t;
}

static struct pt_kfeats probed;
static bool probed_once;

const struct pt_kfeats *pt_kfeats(void)
{
	if (!probed_once) {
		probe_all(&probed);
		pt_kfeat_pretend(&probed, getenv("PEAKTRACE_PRETEND_MISSING"));
		probed_once = true;
	}
	return &probed;
}

bool pt_kfeat_has(enum pt_kfeat_id id)
{
	return pt_kfeats()->state[id] != PT_KF_MISSING;
}

bool pt_kfeat_rdonly_cast(void)
{
	return pt_kfeat_has(PT_KF_RDONLY_CAST);
}

/* ---- --check-kernel ---------------------------------------------------------------------- */

static const char *const need_names[] = { "essential", "in pidns", "optional", "info" };

/* The table's SINCE column: "5.5, x86 only", "CONFIG_FTRACE_SYSCALLS". */
static const char *since_col(enum pt_kfeat_id id, char *buf, size_t size)
{
	const struct pt_kfeat_def *d = &pt_kfeat_defs[id];

	snprintf(buf, size, "%s%s%s", d->since, *d->since && d->note ? ", " : "", d->note ? d->note : "");
	return buf;
}

enum pt_kfeat_verdict pt_kfeat_print(FILE *f, const struct pt_kfeats *k)
{
	char since[64], state[64], line[1024];
	int id, miss, unknown, opt;

	fprintf(f, "kernel %s (%d.%d), %s%s; probed in %.1f ms\n", k->release, k->major, k->minor,
		k->machine, k->in_pidns ? ", peaktrace in a PID namespace of its own" : "",
		k->probe_ns / 1e6);
	fprintf(f, "%-27s %-9s %-26s %-22s %s\n", "FEATURE", "NEED", "SINCE", "HERE",
		"WHAT NEEDS IT / WHAT ITS ABSENCE COSTS");
	for (id = 0; id < PT_KF_COUNT; id++) {
		const struct pt_kfeat_def *d = &pt_kfeat_defs[id];

		if (!pt_kfeat_applies(k, id))
			continue;
		fprintf(f, "%-27s %-9s %-26s %-22s %s\n", d->name, need_names[d->need],
			since_col(id, since, sizeof(since)), pt_kfeat_state_text(k, id, state, sizeof(state)),
			d->without);
		if (k->detail[id][0])
			fprintf(f, "%-27s %s\n", "", k->detail[id]);
	}
	miss = pt_kfeat_refusal(k, line, sizeof(line));
	if (miss < 0) {
		fprintf(f, "peaktrace cannot tell: %s\n", line);
		return PT_KV_CANNOT_TELL;
	}
	if (miss) {
		fprintf(f, "peaktrace cannot run here: %s\n", line);
		return PT_KV_CANNOT_RUN;
	}
	unknown = pt_kfeat_count(k, PT_KF_UNKNOWN, true);
	if (unknown) {
		fprintf(f, "peaktrace cannot tell whether it can run here: %d essential feature%s could not "
			   "be probed%s\n", unknown, unknown == 1 ? "" : "s",
			k->privileged ? "" : " (loading BPF programs needs root: run this as root)");
		return PT_KV_CANNOT_TELL;
	}
	opt = pt_kfeat_count(k, PT_KF_MISSING, false);
	fprintf(f, "peaktrace can run here");
	if (opt)
		fprintf(f, ", without %d optional feature%s (its cost above)", opt, opt == 1 ? "" : "s");
	fputc('\n', f);
	return PT_KV_CAN_RUN;
}
