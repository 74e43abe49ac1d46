// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_kfeatures: the kernel check's pure logic (kernel/features.h: versions, the one-line
 * refusal, what --check-kernel and the report say, PEAKTRACE_PRETEND_MISSING) and its BTF reader
 * (kernel/btfscan.h) on a hand-made blob and, against libbpf's own parser, on this machine's
 * /sys/kernel/btf/vmlinux. */
#include <errno.h>
#include <linux/btf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "check.h"
#include "kernel/btfscan.h"
#include "arch/arch.h"
#include "kernel/features.h"

static void test_versions(void)
{
	static const struct { const char *rel; int ret, major, minor; } v[] = {
		{ "6.18.44-fc-v1252", 0, 6, 18 },  { "6.1.0-18-amd64", 0, 6, 1 },
		{ "5.15.0-1051-aws", 0, 5, 15 },   { "6.10.14-linuxkit", 0, 6, 10 },
		{ "6.1.155-176.282.amzn2023.x86_64", 0, 6, 1 }, { "4.18.0-553.el8_10.x86_64", 0, 4, 18 },
		{ "7.2-rc1", 0, 7, 2 },            { "6.8", 0, 6, 8 },
		{ "6.12+deb13", 0, 6, 12 },        { "", -EINVAL, 0, 0 },
		{ "linux", -EINVAL, 0, 0 },        { "6", -EINVAL, 0, 0 },
		{ "6.x", -EINVAL, 0, 0 },          { "6.1a", -EINVAL, 0, 0 },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int ma = -1, mi = -1, r = pt_kver_parse(v[i].rel, &ma, &mi);

		CHECK(r == v[i].ret && ma == v[i].major && mi == v[i].minor,
		      "version of \"%s\": %d.%d (ret %d), want %d.%d (ret %d)", v[i].rel, ma, mi, r,
		      v[i].major, v[i].minor, v[i].ret);
	}
	CHECK_STR(pt_kfeat_since_text(PT_KF_LOOP, buf, sizeof(buf)), "(5.17+)", "since: a helper");
	CHECK_STR(pt_kfeat_since_text(PT_KF_TP_PAGE_FAULT, buf, sizeof(buf)), "(5.5+, x86 only)",
		  "since: with a note");
	CHECK_STR(pt_kfeat_since_text(PT_KF_TP_SYSCALLS, buf, sizeof(buf)), "(CONFIG_FTRACE_SYSCALLS)",
		  "since: a build option alone");
}

/* Every feature present on a 6.18 kernel, outside any PID namespace. */
static void all_present(struct pt_kfeats *k, const char *rel)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->release, sizeof(k->release), "%s", rel);
	pt_kver_parse(rel, &k->major, &k->minor);
	k->privileged = true;
	for (int id = 0; id < PT_KF_COUNT; id++)
		k->state[id] = PT_KF_PRESENT;
}

static void test_table(void)
{
	int ess = 0, opt = 0, info = 0, dup = 0;

	for (int id = 0; id < PT_KF_COUNT; id++) {
		const struct pt_kfeat_def *d = &pt_kfeat_defs[id];
		int ma, mi;

		CHECK(d->name && d->label && d->since && d->without && *d->without,
		      "feature %d has a name, label, since and why", id);
		CHECK(!*d->since || pt_kver_parse(d->since, &ma, &mi) == 0,
		      "%s: since \"%s\" is a version", d->name, d->since);
		CHECK(*d->since || d->note, "%s: a version or a note says when", d->name);
		for (int j = 0; j < id; j++)
			dup += !strcmp(d->name, pt_kfeat_defs[j].name);
		ess += d->need == PT_NEED_ESSENTIAL;
		opt += d->need == PT_NEED_OPTIONAL;
		info += d->need == PT_NEED_INFO;
	}
	CHECK(!dup, "one name per feature (%d shared)", dup);
	/* What the BPF code can do without, and nothing else (features.c says why). */
	CHECK(opt == 4 && pt_kfeat_defs[PT_KF_RDONLY_CAST].need == PT_NEED_OPTIONAL &&
	      pt_kfeat_defs[PT_KF_UPROBE_MULTI].need == PT_NEED_OPTIONAL &&
	      pt_kfeat_defs[PT_KF_MM_LOCK_SEQ].need == PT_NEED_OPTIONAL &&
	      pt_kfeat_defs[PT_KF_RSS_COUNTERS].need == PT_NEED_OPTIONAL,
	      "optional: bpf_rdonly_cast, uprobe_multi, mm_lock_seq, rss_counters (%d optional)", opt);
	CHECK(info == 1 && pt_kfeat_defs[PT_KF_PRIV_STACK].need == PT_NEED_INFO,
	      "informational: the private stack alone");
	CHECK(ess == PT_KF_COUNT - 6, "every other feature essential (%d), the task iterator in a "
	      "PID namespace", ess);
	CHECK_STR(pt_kfeat_defs[PT_KF_LOOP].name, "bpf_loop", "bpf_loop's name");
	CHECK_STR(pt_kfeat_defs[PT_KF_UPROBE_MULTI].name, "uprobe_multi", "uprobe_multi's name");
}

static void test_refusal(void)
{
	struct pt_kfeats k;
	char buf[1024], st[64];
	int n;

	all_present(&k, "6.18.44-fc-v1252");
	CHECK(pt_kfeat_refusal(&k, buf, sizeof(buf)) == 0 && !buf[0], "everything present: no refusal");
	k.state[PT_KF_UPROBE_MULTI] = k.state[PT_KF_RDONLY_CAST] = k.state[PT_KF_MM_LOCK_SEQ] =
		k.state[PT_KF_PRIV_STACK] = PT_KF_MISSING;
	CHECK(pt_kfeat_refusal(&k, buf, sizeof(buf)) == 0, "optional and informational missing: no refusal");
	CHECK(pt_kfeat_count(&k, PT_KF_MISSING, false) == 3, "3 optional features missing (the "
	      "informational one not counted)");
	k.state[PT_KF_TASK_ITER] = PT_KF_MISSING;
	CHECK(pt_kfeat_refusal(&k, buf, sizeof(buf)) == 0, "no task iterator, outside a PID namespace: runs");
	k.in_pidns = true;
	n = pt_kfeat_refusal(&k, buf, sizeof(buf));
	CHECK(n == 1 && strstr(buf, "task iterator (5.8+)"), "no task iterator in a PID namespace: "
	      "refused (%d): %s", n, buf);

	all_present(&k, "6.1.0-18-amd64");
	k.state[PT_KF_LOOP] = PT_KF_MISSING;
	n = pt_kfeat_refusal(&k, buf, sizeof(buf));
	CHECK_STR(buf, "this kernel (6.1.0-18-amd64) lacks bpf_loop (5.17+): page walks and header "
		  "searches run under it; `peaktrace --check-kernel` lists what it has", "the refusal");
	CHECK(n == 1 && !strchr(buf, '\n'), "one feature, one line");
	k.state[PT_KF_FIND_VMA] = PT_KF_MISSING;
	k.state[PT_KF_UPROBE_MULTI] = PT_KF_MISSING;
	n = pt_kfeat_refusal(&k, buf, sizeof(buf));
	CHECK(n == 2 && strstr(buf, "lacks bpf_loop (5.17+), bpf_find_vma (5.17+): page walks") &&
	      !strstr(buf, "uprobe"), "two essential features named, the optional one not: %s", buf);
	n = pt_kfeat_refusal(&k, buf, 40);
	CHECK(n == 2 && strlen(buf) == 39, "a short buffer: truncated, still counted");
	all_present(&k, "5.15.0-1051-aws");
	k.state[PT_KF_RINGBUF] = PT_KF_UNKNOWN;
	CHECK(pt_kfeat_refusal(&k, buf, sizeof(buf)) == 0 && pt_kfeat_count(&k, PT_KF_UNKNOWN, true) == 1,
	      "unknown is no refusal (the load decides), but counted");
	k.state[PT_KF_TP_BTF] = k.state[PT_KF_PRIV_STACK] = k.state[PT_KF_UPROBE_MULTI] = PT_KF_UNKNOWN;
	n = pt_kfeat_unknown(&k, buf, sizeof(buf));
	CHECK_STR(buf, "the BPF ring buffer, BTF raw tracepoints (tp_btf)", "the unknown needed ones named");
	CHECK(n == 2, "and counted (%d): optional and informational ones are not", n);
	/* bpf() itself missing (qemu-user on any kernel): one line saying so, not a list of
	 * unknown features and then the load's ENOSYS. */
	all_present(&k, "6.18.0-1-amd64");
	k.state[PT_KF_RINGBUF] = k.state[PT_KF_TP_BTF] = PT_KF_UNKNOWN;
	k.no_bpf_syscall = true;
	n = pt_kfeat_refusal(&k, buf, sizeof(buf));
	CHECK(n == 1 && strstr(buf, "this kernel (6.18.0-1-amd64) has no bpf() system call") &&
	      strstr(buf, "qemu-user") && !strchr(buf, '\n') && !strstr(buf, "ring buffer"),
	      "no bpf(): refused in one line (%d): %s", n, buf);
	k.no_bpf_syscall = false;
	CHECK(pt_kfeat_refusal(&k, buf, sizeof(buf)) == 0, "with bpf(), the same unknowns: no refusal");

	/* The state column. */
	all_present(&k, "4.18.0-553.el8_10.x86_64");
	CHECK_STR(pt_kfeat_state_text(&k, PT_KF_LOOP, st, sizeof(st)), "present (backported)",
		  "RHEL 8's 4.18 with bpf_loop");
	all_present(&k, "6.18.44-fc-v1252");
	CHECK_STR(pt_kfeat_state_text(&k, PT_KF_LOOP, st, sizeof(st)), "present", "6.18 with bpf_loop");
	k.state[PT_KF_UPROBES] = PT_KF_MISSING;
	CHECK_STR(pt_kfeat_state_text(&k, PT_KF_UPROBES, st, sizeof(st)), "missing",
		  "a build option: no version to compare");
	k.state[PT_KF_RINGBUF] = PT_KF_MISSING;
	CHECK_STR(pt_kfeat_state_text(&k, PT_KF_RINGBUF, st, sizeof(st)), "missing (not built in)",
		  "missing on a kernel newer than its version");
	k.state[PT_KF_RINGBUF] = PT_KF_UNKNOWN;
	CHECK_STR(pt_kfeat_state_text(&k, PT_KF_RINGBUF, st, sizeof(st)), "unknown", "unknown");
	all_present(&k, "5.10.0-30-amd64");
	k.state[PT_KF_LOOP] = PT_KF_MISSING;
	CHECK_STR(pt_kfeat_state_text(&k, PT_KF_LOOP, st, sizeof(st)), "missing", "5.10 without bpf_loop");
}

/* The page faults' feature is the architecture's own: x86's tracepoints, arm64's fentry. The
 * other's row is not needed (nor printed), whatever its state. */
static void test_faults(void)
{
	struct pt_kfeats k;
	char buf[1024];
	int n;

	CHECK(pt_kfeat_defs[PT_KF_TP_PAGE_FAULT].faults == PT_FAULTS_TRACEPOINTS &&
	      pt_kfeat_defs[PT_KF_FENTRY_FAULT].faults == PT_FAULTS_FENTRY,
	      "each page-fault feature names its way");
	for (int id = 0; id < PT_KF_COUNT; id++)
		CHECK(!pt_kfeat_defs[id].faults || id == PT_KF_TP_PAGE_FAULT || id == PT_KF_FENTRY_FAULT,
		      "%s: only the page-fault features differ by architecture", pt_kfeat_defs[id].name);

	all_present(&k, "7.3.4+deb13-arm64");
	k.faults = PT_FAULTS_FENTRY;
	k.state[PT_KF_TP_PAGE_FAULT] = PT_KF_MISSING;
	CHECK(pt_kfeat_refusal(&k, buf, sizeof(buf)) == 0 && !pt_kfeat_applies(&k, PT_KF_TP_PAGE_FAULT),
	      "arm64 without page-fault tracepoints: runs (%s)", buf);
	CHECK(pt_kfeat_essential(&k, PT_KF_FENTRY_FAULT) && !pt_kfeat_essential(&k, PT_KF_TP_PAGE_FAULT),
	      "arm64: fentry essential, the tracepoints not");
	all_present(&k, "6.1.0-50-arm64");
	k.faults = PT_FAULTS_FENTRY;
	k.state[PT_KF_TP_PAGE_FAULT] = k.state[PT_KF_FENTRY_FAULT] = PT_KF_MISSING;
	n = pt_kfeat_refusal(&k, buf, sizeof(buf));
	CHECK_STR(buf, "this kernel (6.1.0-50-arm64) lacks fentry on handle_mm_fault (6.4+, arm64): RSS "
		  "attribution by page: who faulted each page in (arm64 has no page-fault tracepoints); "
		  "`peaktrace --check-kernel` lists what it has", "arm64 6.1: the refusal");
	CHECK(n == 1, "one feature named (%d): the tracepoints are not arm64's", n);
	k.state[PT_KF_FENTRY_FAULT] = PT_KF_UNKNOWN;
	CHECK(pt_kfeat_count(&k, PT_KF_UNKNOWN, true) == 1, "fentry not probed (not root): unknown, needed");

	all_present(&k, "6.18.44-fc-v1252");
	k.faults = PT_FAULTS_TRACEPOINTS;
	k.state[PT_KF_FENTRY_FAULT] = PT_KF_UNKNOWN;   /* x86 does not probe it */
	CHECK(pt_kfeat_refusal(&k, buf, sizeof(buf)) == 0 && pt_kfeat_count(&k, PT_KF_UNKNOWN, true) == 0,
	      "x86: fentry's row neither needed nor unknown");
	k.state[PT_KF_TP_PAGE_FAULT] = PT_KF_MISSING;
	n = pt_kfeat_refusal(&k, buf, sizeof(buf));
	CHECK(n == 1 && strstr(buf, "lacks the tracepoints exceptions:page_fault_user/kernel (5.5+, "
			       "x86 only)"), "x86 without the tracepoints: refused (%d): %s", n, buf);
}

static void test_pretend(void)
{
	struct pt_kfeats k;
	char buf[1024];

	all_present(&k, "6.18.44-fc-v1252");
	CHECK(pt_kfeat_pretend(&k, NULL) == 0 && pt_kfeat_pretend(&k, "") == 0 &&
	      pt_kfeat_count(&k, PT_KF_MISSING, true) == 0, "no list: nothing pretended");
	CHECK(pt_kfeat_pretend(&k, "bpf_loop,uprobe_multi") == 0 && k.pretended[PT_KF_LOOP] &&
	      k.pretended[PT_KF_UPROBE_MULTI] && k.state[PT_KF_LOOP] == PT_KF_MISSING &&
	      k.state[PT_KF_UPROBE_MULTI] == PT_KF_MISSING && !k.pretended[PT_KF_FIND_VMA],
	      "bpf_loop,uprobe_multi: both missing, pretended, nothing else");
	CHECK(pt_kfeat_refusal(&k, buf, sizeof(buf)) == 1 &&
	      strstr(buf, "bpf_loop (5.17+) [pretended: PEAKTRACE_PRETEND_MISSING]"),
	      "the refusal says it was pretended: %s", buf);
	all_present(&k, "6.18.44-fc-v1252");
	CHECK(pt_kfeat_pretend(&k, " mm_lock_seq, ,bpf_rdonly_cast ") == 0 &&
	      k.pretended[PT_KF_MM_LOCK_SEQ] && k.pretended[PT_KF_RDONLY_CAST],
	      "spaces and empty items are skipped");
	all_present(&k, "6.18.44-fc-v1252");
	CHECK(pt_kfeat_pretend(&k, "bpf_loop,bpf_lop") == -EINVAL &&
	      strstr(k.pretend_error, "no feature named bpf_lop"), "an unknown name: %s", k.pretend_error);
	CHECK(pt_kfeat_refusal(&k, buf, sizeof(buf)) < 0 && strstr(buf, "bpf_lop"),
	      "an unknown name refuses the run with that line");
	all_present(&k, "6.18.44-fc-v1252");
	CHECK(pt_kfeat_pretend(&k, "bpf_loopx") == -EINVAL, "a longer name is not a prefix match");
}

static void test_cost(void)
{
	struct pt_kfeat_measured m = { .uprobe_links = 19, .attach_ns = 412000000 };
	char buf[512];

	pt_kfeat_cost(PT_KF_UPROBE_MULTI, &m, buf, sizeof(buf));
	CHECK(strstr(buf, "19 allocator uprobes attached one by one") && strstr(buf, "attached in 0.412 s"),
	      "uprobe-multi's cost with the run's figures: %s", buf);
	pt_kfeat_cost(PT_KF_UPROBE_MULTI, NULL, buf, sizeof(buf));
	CHECK_STR(buf, pt_kfeat_defs[PT_KF_UPROBE_MULTI].without, "not measured: the general cost");
	pt_kfeat_cost(PT_KF_RDONLY_CAST, &m, buf, sizeof(buf));
	CHECK_STR(buf, pt_kfeat_defs[PT_KF_RDONLY_CAST].without, "bpf_rdonly_cast: the general cost");
}

/* ---- the BTF reader ---------------------------------------------------------------------- */

#define INFO(kind, vlen) (((uint32_t)(kind) << 24) | (uint32_t)(vlen))

/* A hand-made BTF: [1] int, [2] struct seq { int sequence; }, [3] typedef seq_t = 2,
 * [4] volatile 3, [5] struct anon { seq_t lock; } (nameless), [6] struct mm { int a; struct anon; }
 * with lock in the nameless member, [7] func proto, [8] func "kf", [9] enum64 with one value,
 * [10] typedef "btf_trace_x" = 7. */
static size_t make_btf(uint8_t *out, uint32_t bad_kind)
{
	static const char strs[] = "\0int\0seq\0sequence\0seq_t\0lock\0mm\0a\0kf\0e64\0V\0btf_trace_x";
	enum { S_INT = 1, S_SEQ = 5, S_SEQUENCE = 9, S_SEQ_T = 18, S_LOCK = 24, S_MM = 29, S_A = 32,
	       S_KF = 34, S_E64 = 37, S_V = 41, S_TR = 43 };
	uint32_t t[] = {
		S_INT, INFO(BTF_KIND_INT, 0), 4, 32,                       /* [1] */
		S_SEQ, INFO(BTF_KIND_STRUCT, 1), 4, S_SEQUENCE, 1, 0,      /* [2] */
		S_SEQ_T, INFO(BTF_KIND_TYPEDEF, 0), 2,                     /* [3] */
		0, INFO(BTF_KIND_VOLATILE, 0), 3,                          /* [4] */
		0, INFO(BTF_KIND_STRUCT, 1), 4, S_LOCK, 4, 0,              /* [5] */
		S_MM, INFO(BTF_KIND_STRUCT, 2), 8, S_A, 1, 0, 0, 5, 32,    /* [6] */
		0, INFO(BTF_KIND_FUNC_PROTO, 1), 1, 0, 1,                  /* [7] */
		S_KF, INFO(BTF_KIND_FUNC, 0), 7,                           /* [8] */
		S_E64, INFO(bad_kind ? bad_kind : 19, 1), 8, S_V, 1, 0,    /* [9] */
		S_TR, INFO(BTF_KIND_TYPEDEF, 0), 7,                        /* [10] */
	};
	struct btf_header h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(h),
				.type_off = 0, .type_len = sizeof(t), .str_off = sizeof(t),
				.str_len = sizeof(strs) };

	memcpy(out, &h, sizeof(h));
	memcpy(out + sizeof(h), t, sizeof(t));
	memcpy(out + sizeof(h) + sizeof(t), strs, sizeof(strs));
	return sizeof(h) + sizeof(t) + sizeof(strs);
}

static void test_btf_blob(void)
{
	uint8_t blob[1024];
	size_t len = make_btf(blob, 0);
	struct pt_btf b;
	struct pt_btf_query q[] = {
		{ "kf", BTF_KIND_FUNC, 0 }, { "btf_trace_x", BTF_KIND_TYPEDEF, 0 },
		{ "mm", BTF_KIND_STRUCT, 0 }, { "kf", BTF_KIND_TYPEDEF, 0 }, { "nope", BTF_KIND_FUNC, 0 },
	};
	uint32_t lock;

	CHECK(pt_btf_index(&b, blob, len) == 0 && b.ntypes == 10, "hand-made BTF: 10 types (%u)", b.ntypes);
	pt_btf_find(&b, q, 5);
	CHECK(q[0].id == 8 && q[1].id == 10 && q[2].id == 6 && !q[3].id && !q[4].id,
	      "found by name and kind: %u %u %u, none for another kind or name: %u %u",
	      q[0].id, q[1].id, q[2].id, q[3].id, q[4].id);
	lock = pt_btf_member(&b, 6, "lock");
	CHECK(lock == 2 && pt_btf_kind(&b, lock) == BTF_KIND_STRUCT,
	      "a member of a nameless member, typedef and volatile taken off: [%u]", lock);
	CHECK(pt_btf_member(&b, lock, "sequence") == 1, "seqcount's sequence: an int");
	CHECK(pt_btf_member(&b, 6, "a") == 1 && !pt_btf_member(&b, 6, "b") && !pt_btf_member(&b, 1, "a"),
	      "a plain member; none of another name; an int has no members");
	CHECK(pt_btf_resolve(&b, 4) == 2 && pt_btf_kind(&b, 99) == -1 && !pt_btf_resolve(&b, 99),
	      "resolve volatile -> typedef -> struct; ids out of range");
	pt_btf_close(&b);

	len = make_btf(blob, 25);
	CHECK(pt_btf_index(&b, blob, len) == -ENOTSUP, "a kind newer than the reader: -ENOTSUP");
	len = make_btf(blob, 0);
	CHECK(pt_btf_index(&b, blob, len - 1) == -EINVAL, "strings cut short: -EINVAL");
	((struct btf_header *)blob)->type_len -= 2;
	CHECK(pt_btf_index(&b, blob, len) == -EINVAL, "a record past the type section: -EINVAL");
	((struct btf_header *)blob)->type_len += 2;
	((struct btf_header *)blob)->magic = 0x9FEB;
	CHECK(pt_btf_index(&b, blob, len) == -ENOTSUP, "the other byte order: -ENOTSUP");
	blob[0] = 0;
	CHECK(pt_btf_index(&b, blob, len) == -EINVAL && pt_btf_index(&b, blob, 3) == -EINVAL,
	      "not BTF, and too short: -EINVAL");
}

/* The same questions to libbpf's full parser, on this machine's kernel. */
static void test_btf_vmlinux(void)
{
	static const struct { const char *name; int kind; } names[] = {
		{ "bpf_rdonly_cast", BTF_KIND_FUNC }, { "bpf_iter_task", BTF_KIND_FUNC },
		{ "bpf_jit_supports_private_stack", BTF_KIND_FUNC },
		{ "btf_trace_sched_process_exec", BTF_KIND_TYPEDEF },
		{ "btf_trace_page_fault_user", BTF_KIND_TYPEDEF }, { "mm_struct", BTF_KIND_STRUCT },
		{ "task_struct", BTF_KIND_STRUCT }, { "no_such_function_here", BTF_KIND_FUNC },
	};
	struct pt_btf_query q[sizeof(names) / sizeof(names[0])];
	struct btf *lb = btf__load_vmlinux_btf();
	struct pt_btf b;
	uint32_t bad = 0, mm, seq, lseq = 0;
	int err = pt_btf_open_vmlinux(&b);

	if (!lb || err) {
		CHECK(!lb && err, "no BTF here for either reader (libbpf %s, ours %d): skipped", lb ? "read it" : "none", err);
		btf__free(lb);
		pt_btf_close(&b);
		return;
	}
	CHECK(b.ntypes + 1 == btf__type_cnt(lb), "vmlinux: as many types as libbpf (%u)", b.ntypes);
	for (uint32_t id = 1; id <= b.ntypes; id++) {
		const struct btf_type *t = btf__type_by_id(lb, id);

		if (pt_btf_kind(&b, id) != (int)btf_kind(t) ||
		    strcmp(b.strs + ((const struct btf_type *)(b.types + b.off[id]))->name_off,
			   btf__name_by_offset(lb, t->name_off)))
			bad++;
	}
	CHECK(!bad, "vmlinux: every type's kind and name as libbpf reads them (%u differ)", bad);
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		q[i] = (struct pt_btf_query){ names[i].name, names[i].kind, 0 };
	pt_btf_find(&b, q, sizeof(q) / sizeof(q[0]));
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		int want = btf__find_by_name_kind(lb, names[i].name, names[i].kind);

		CHECK(q[i].id == (uint32_t)(want > 0 ? want : 0), "vmlinux: %s is [%u], libbpf [%d]",
		      names[i].name, q[i].id, want);
	}
	/* mm_struct.mm_lock_seq by libbpf's walk: the members of mm_struct and of its nameless
	 * struct member (where 6.x keeps it). */
	mm = q[5].id;
	seq = pt_btf_member(&b, mm, "mm_lock_seq");
	{
		const struct btf_type *t = btf__type_by_id(lb, mm);
		const struct btf_member *m = btf_members(t);

		for (int i = 0; i < btf_vlen(t) && !lseq; i++) {
			const char *n = btf__name_by_offset(lb, m[i].name_off);
			const struct btf_type *in;

			if (!strcmp(n, "mm_lock_seq")) {
				lseq = btf__resolve_type(lb, m[i].type);
				continue;
			}
			if (*n || !btf_is_composite(in = btf__type_by_id(lb, m[i].type)))
				continue;
			for (int j = 0; j < btf_vlen(in) && !lseq; j++)
				if (!strcmp(btf__name_by_offset(lb, btf_members(in)[j].name_off), "mm_lock_seq"))
					lseq = btf__resolve_type(lb, btf_members(in)[j].type);
		}
	}
	CHECK(seq == lseq, "vmlinux: mm_struct.mm_lock_seq's type [%u], libbpf [%u]", seq, lseq);
	btf__free(lb);
	pt_btf_close(&b);
}

int main(void)
{
	test_versions();
	test_table();
	test_refusal();
	test_faults();
	test_pretend();
	test_cost();
	test_btf_blob();
	test_btf_vmlinux();
	return CHECK_DONE();
}
