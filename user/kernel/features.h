/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * features.h — what the running kernel offers peaktrace's BPF programs, probed once per process
 * before the BPF object is opened: its version, and for each feature the programs use whether it
 * is here, since which mainline version it exists, and what its absence costs.
 *
 * Essential features refuse the run with one line naming them (never the verifier's log of the
 * first program that needs one); optional ones cost something said in the report (report.json
 * "kernel"). `peaktrace --check-kernel` prints the whole table.
 *
 * Tests pretend a feature is missing with PEAKTRACE_PRETEND_MISSING=name[,name...] (the names of
 * pt_kfeat_defs[]; tests/README.md): the run then behaves as on a kernel without it.
 */
#ifndef PEAKTRACE_KFEATURES_H
#define PEAKTRACE_KFEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum pt_kfeat_id {
	/* essential */
	PT_KF_BTF,
	PT_KF_UPROBES,
	PT_KF_RINGBUF,
	PT_KF_TASK_STORAGE,
	PT_KF_TP_BTF,
	PT_KF_PROBE_READ_USER,
	PT_KF_NS_PID,
	PT_KF_TASK_BTF,
	PT_KF_TASK_PT_REGS,
	PT_KF_ATTACH_COOKIE,
	PT_KF_FOR_EACH_MAP,
	PT_KF_LOOP,
	PT_KF_FIND_VMA,
	PT_KF_TP_SCHED,
	PT_KF_TP_PAGE_FAULT,
	PT_KF_FENTRY_FAULT,
	PT_KF_TP_RSS_STAT,
	PT_KF_TP_SYSCALLS,
	/* essential inside a PID namespace of peaktrace's own, else unused */
	PT_KF_TASK_ITER,
	/* optional */
	PT_KF_RDONLY_CAST,
	PT_KF_UPROBE_MULTI,
	PT_KF_MM_LOCK_SEQ,
	PT_KF_RSS_COUNTERS,
	/* informational */
	PT_KF_PRIV_STACK,
	PT_KF_COUNT
};

enum pt_kfeat_need {
	PT_NEED_ESSENTIAL,       /* the BPF object cannot load or attach without it */
	PT_NEED_IN_PIDNS,        /* essential when peaktrace runs in a PID namespace of its own */
	PT_NEED_OPTIONAL,        /* a fallback exists; its cost is said */
	PT_NEED_INFO,            /* shown by --check-kernel, never needed */
};

enum pt_kfeat_state {
	PT_KF_UNKNOWN = 0,       /* could not be probed (not root, tracefs unmounted, no BTF) */
	PT_KF_PRESENT,
	PT_KF_MISSING,
};

struct pt_kfeat_def {
	const char *name;        /* key: --check-kernel, report.json, PEAKTRACE_PRETEND_MISSING */
	const char *label;       /* what the one-line refusal and the report call it */
	const char *since;       /* mainline version, "5.17"; "" when a build option decides */
	const char *note;        /* "x86 only", "CONFIG_FTRACE_SYSCALLS", or NULL */
	enum pt_kfeat_need need;
	const char *without;     /* essential: what needs it; optional: what its absence costs */
	int faults;              /* 0: every architecture; else only where the BPF object learns
				  * of page faults this way (enum pt_arch_faults: the other's row
				  * is neither probed, needed nor shown) */
};
extern const struct pt_kfeat_def pt_kfeat_defs[PT_KF_COUNT];

#define PT_KREL_LEN 65           /* struct utsname's release */
#define PT_KDETAIL_LEN 128

struct pt_kfeats {
	char release[PT_KREL_LEN];   /* uname -r */
	int major, minor;            /* parsed from release; 0.0 when it cannot be */
	char machine[PT_KREL_LEN];   /* uname -m */
	bool in_pidns;               /* peaktrace runs in a PID namespace of its own */
	int faults;                  /* this binary's way to page faults (enum pt_arch_faults) */
	bool privileged;             /* BPF programs could be loaded: the probes that load one ran */
	bool no_bpf_syscall;         /* bpf() answered ENOSYS: no BPF at all (a kernel without
				      * CONFIG_BPF_SYSCALL, or qemu-user, which does not emulate it) */
	enum pt_kfeat_state state[PT_KF_COUNT];
	bool pretended[PT_KF_COUNT]; /* PEAKTRACE_PRETEND_MISSING said so (its state: missing) */
	char detail[PT_KF_COUNT][PT_KDETAIL_LEN];   /* what the probe saw, when worth saying */
	char pretend_error[128];     /* PEAKTRACE_PRETEND_MISSING named no feature: "" when fine */
	uint64_t probe_ns;           /* what probing took */
};

/* What a run measured of an optional feature's absence (the report's "cost"). */
struct pt_kfeat_measured {
	uint32_t uprobe_links;       /* allocator uprobe links attached at the start */
	uint64_t attach_ns;          /* every probe attached (report.h's startup.attach_ns) */
};

/* Before the first pt_kfeats(): also run the probes that patch the kernel (--check-kernel: an
 * fentry program attached to handle_mm_fault where page faults are traced so); a run's check
 * reads the BTF for that instead. */
void pt_kfeat_set_thorough(bool on);
/* The running kernel, probed at the first call (PEAKTRACE_PRETEND_MISSING applied). */
const struct pt_kfeats *pt_kfeats(void);
/* Present on this kernel (pretending included)? Unknown counts as present: the load decides. */
bool pt_kfeat_has(enum pt_kfeat_id id);
/* For the loader's .rodata: may the programs call the bpf_rdonly_cast kfunc? */
bool pt_kfeat_rdonly_cast(void);

/* ---- pure logic (tests/unit/test_kfeatures.c) ------------------------------------------- */

/* "6.1.0-18-amd64" -> 6, 1; 0 or -EINVAL (both left 0). */
int pt_kver_parse(const char *release, int *major, int *minor);
/* "(5.17+)", "(5.5+, x86 only)", "(CONFIG_FTRACE_SYSCALLS)": when a feature came. */
const char *pt_kfeat_since_text(enum pt_kfeat_id id, char *buf, size_t size);
/* Mark the features of a PEAKTRACE_PRETEND_MISSING list missing. 0, or -EINVAL with the first
 * unknown name said in k->pretend_error. */
int pt_kfeat_pretend(struct pt_kfeats *k, const char *list);
/* Does this feature concern this binary at all (a page-fault feature of another architecture's
 * way does not: --check-kernel shows no row for it)? */
bool pt_kfeat_applies(const struct pt_kfeats *k, enum pt_kfeat_id id);
/* Is this feature needed here (essential, or in_pidns and PT_NEED_IN_PIDNS)? */
bool pt_kfeat_essential(const struct pt_kfeats *k, enum pt_kfeat_id id);
/* How many needed features are missing / could not be probed. */
int pt_kfeat_count(const struct pt_kfeats *k, enum pt_kfeat_state state, bool needed);
/* The refusal of a run: "this kernel (REL) lacks A (5.17+), B (...): WITHOUT; peaktrace
 * --check-kernel lists ..." into buf. Returns the number of needed features missing (0: none,
 * buf ""), or -EINVAL after a bad PEAKTRACE_PRETEND_MISSING (buf says so). */
int pt_kfeat_refusal(const struct pt_kfeats *k, char *buf, size_t size);
/* The needed features that could not be probed, named in buf ("BTF raw tracepoints (tp_btf),
 * ..."): their count. A run goes on (the load decides) and says so. */
int pt_kfeat_unknown(const struct pt_kfeats *k, char *buf, size_t size);
/* A feature's state as --check-kernel prints it: "present", "missing", "unknown", with
 * "(pretended)", "(backported)" or "(not in this build)" where the version says more. */
const char *pt_kfeat_state_text(const struct pt_kfeats *k, enum pt_kfeat_id id, char *buf, size_t size);
/* What an optional feature's absence cost this run, with what was measured (m may be NULL). */
void pt_kfeat_cost(enum pt_kfeat_id id, const struct pt_kfeat_measured *m, char *buf, size_t size);

/* ---- --check-kernel ---------------------------------------------------------------------- */

enum pt_kfeat_verdict { PT_KV_CAN_RUN, PT_KV_CANNOT_RUN, PT_KV_CANNOT_TELL };
/* The table, then the verdict line; returns the verdict. */
enum pt_kfeat_verdict pt_kfeat_print(FILE *f, const struct pt_kfeats *k);

#endif
