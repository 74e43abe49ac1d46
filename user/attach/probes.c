// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * probes.c — the allocator's probes: where each entry point is probed (planned before load),
 * attached in the order a running target needs, the tracepoints, and reading the maps back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "util/fmt.h"
#include "util/file.h"
#include "bpf/peaktrace.h"
#include "peaktrace.skel.h"
#include "attach/probes.h"
#include "attach/umulti.h"
#include "arch/arch.h"

/* Where each allocator entry point is probed (decided before load, attached after): the C entry
 * points, then the extra ones (C++ operators, jemalloc *allocx) of jemalloc/tcmalloc/mimalloc. */
int pt_plan_probes(const struct pt_allocator *a, struct pt_probe_info *probes, int *nprobes)
{
	uint8_t code[32];
	int fd, slot, k, err;

	fd = open(a->open_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		char path[512];

		err = -errno;
		pt_sanitize(path, sizeof(path), a->path);
		fprintf(stderr, "peaktrace: cannot open allocator %s: %s\n", path, strerror(-err));
		return err;
	}
	for (slot = 0; slot < PT_PROBES_MAX; slot++) {
		bool extra = slot >= PT_FN_MAX;
		int fn = extra ? (int)pt_extra_fn_as(slot - PT_FN_MAX) : slot;
		uint64_t entry = extra ? a->extra_offset[slot - PT_FN_MAX] : a->fn_offset[slot];
		struct pt_probe_info *pi;
		bool ret = fn != PT_FN_FREE;
		ssize_t n;

		if (!entry)
			continue;
		pi = &probes[(*nprobes)++];
		memset(pi, 0, sizeof(*pi));
		pi->fn = fn;
		pi->symbol = extra ? pt_extra_fn_name(slot - PT_FN_MAX) : a->fn_symbol[fn];
		pi->entry = entry;
		pi->shared_with = -1;
		pi->return_probe = ret;
		/* Several names share one address in glibc (aligned_alloc == memalign): one probe. */
		for (k = 0; k < *nprobes - 1; k++) {
			if (!probes[k].forwards && probes[k].entry == entry) {
				pi->shared_with = probes[k].fn;
				pi->shared_symbol = probes[k].symbol;
				pi->offset = probes[k].offset;
				pi->place = probes[k].place;
				break;
			}
		}
		if (pi->shared_with >= 0)
			continue;
		n = pread(fd, code, sizeof(code), (off_t)entry);
		if (n < 0)
			n = 0;
		/* The code is the host's (x86-64 or A64): the kernel's uprobes run it. Only
		 * free-like thunks are skipped: free_enter has no nesting check, while an
		 * allocating thunk (mimalloc: _ZnwmRKSt9nothrow_t -> mi_new_nothrow, not an entry
		 * point) is probed, a tail jump into a probed function counting as nesting. */
		if (extra && fn == PT_FN_FREE &&
		    pt_probe_is_thunk(pt_arch_host()->isa, code, (size_t)n)) {
			pi->forwards = true;
			pi->return_probe = false;
			continue;
		}
		/* Only free may move off its entry: the others also get a uretprobe, which needs
		 * the return address where the entry has it ([rsp]; x30, before a paciasp signs
		 * it), so the entry traps anyway. */
		pt_probe_place(pt_arch_host()->isa, code, (size_t)n, !ret, &pi->place);
		pi->offset = entry + pi->place.skip;
	}
	close(fd);
	return 0;
}

/*
 * Attach order matters when the target is already running: free first (a block allocated while
 * free was not yet probed would look live forever), then every return probe (a return whose
 * entry was not seen is ignored), and the entry probes last (an entry whose return probe is
 * missing would leave a thread "inside" malloc). The entry program learns which function it is
 * in from the attach cookie.
 */
int pt_attach_allocator(struct peaktrace_bpf *skel, struct pt_links *links,
			const struct pt_allocator *a, pid_t pid, struct pt_probe_info *probes,
			int nprobes, bool multi)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	uint64_t ent_off[PT_PROBES_MAX], ret_off[PT_PROBES_MAX], cookie[PT_PROBES_MAX];
	uint64_t free_off[PT_PROBES_MAX], free_cookie[PT_PROBES_MAX];
	uint32_t n = 0, nfree = 0;
	int k, err = 0, pass;

	for (k = 0; k < nprobes; k++) {
		const struct pt_probe_info *pi = &probes[k];

		if (pi->shared_with >= 0 || pi->forwards)
			continue;
		if (pi->fn == PT_FN_FREE) {
			free_off[nfree] = pi->offset;
			free_cookie[nfree++] = PT_FN_FREE;
			continue;
		}
		ent_off[n] = pi->offset;
		ret_off[n] = pi->entry;
		cookie[n++] = (uint64_t)pi->fn | a->cookie_flags;
	}
	for (pass = 0; pass < 3 && !err; pass++) {
		if (multi) {
			if (pass == 1 || pass == 2) {
				if (!n)
					continue;
				err = pt_links_add_fd(links, pt_umulti_attach(
					bpf_program__fd(pass == 1 ? skel->progs.alloc_return :
								    skel->progs.alloc_enter_prog),
					a->open_path, pass == 1 ? ret_off : ent_off, cookie, n, pass == 1, pid), pass);
				continue;
			}
			/* Every free-like entry point in one link: one release (one grace period) at
			 * the detach, as for the other two programs. */
			if (nfree)
				err = pt_links_add_fd(links, pt_umulti_attach(bpf_program__fd(skel->progs.free_enter),
									      a->open_path, free_off, free_cookie, nfree,
									      false, pid), pass);
			continue;
		}
		for (k = 0; k < nprobes && !err; k++) {
			struct pt_probe_info *pi = &probes[k];
			bool is_free = pi->fn == PT_FN_FREE;

			if (pi->shared_with >= 0 || pi->forwards)
				continue;
			uo.retprobe = pass == 1;
			uo.bpf_cookie = (uint64_t)pi->fn | a->cookie_flags;
			if (pass == 0 && is_free)
				err = pt_links_add(links, bpf_program__attach_uprobe_opts(skel->progs.free_enter, pid,
											   a->open_path, pi->offset, &uo), pass);
			else if (pass == 1 && !is_free)
				err = pt_links_add(links, bpf_program__attach_uprobe_opts(skel->progs.alloc_return, pid,
											   a->open_path, pi->entry, &uo), pass);
			else if (pass == 2 && !is_free)
				err = pt_links_add(links, bpf_program__attach_uprobe_opts(skel->progs.alloc_enter_prog, pid,
											   a->open_path, pi->offset, &uo), pass);
		}
	}
	if (err) {
		char path[512];

		pt_sanitize(path, sizeof(path), a->path);
		/* The kernel keeps one reference-counter (USDT semaphore) offset per probed address:
		 * a uprobe another tracer set with one (bcc's tools do) makes ours EINVAL there. */
		fprintf(stderr, "peaktrace: failed to attach %s to the allocator in %s: %s%s\n",
			pass - 1 == 1 ? "uretprobes" : "uprobes", path, strerror(-err),
			err == -EINVAL ? " (is another tracer, e.g. one of bcc's tools, probing the same "
					 "functions with a USDT semaphore? The kernel cannot mix uprobes with "
					 "and without a reference counter on one address: stop it first)" : "");
		return err;
	}
	for (k = 0; k < nprobes; k++)
		probes[k].attached = !probes[k].forwards;
	return 0;
}

/* A tracepoint's id in tracefs (where libbpf reads it too), or -errno. */
static int tracepoint_id(const char *cat, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256], *txt = NULL;
	int id = -ENOENT;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && !txt; i++) {
		snprintf(path, sizeof(path), "%s/events/%s/%s/id", roots[i], cat, name);
		txt = pt_read_file(path, 32, NULL);
	}
	if (txt) {
		id = atoi(txt) > 0 ? atoi(txt) : -EINVAL;
		free(txt);
	} else {
		id = -errno;
	}
	return id;
}

/*
 * A tracepoint through a perf event of our own (what bpf_program__attach_tracepoint does), its
 * fd duplicated into the table: the link's release takes the program off the event at once, and
 * the close that waits for the grace period (links.c) is the duplicate's, in the background.
 */
static int attach_tp(struct pt_links *links, struct bpf_program *p, const char *cat, const char *name)
{
	struct perf_event_attr attr;
	struct bpf_link *l;
	int id = tracepoint_id(cat, name), pfd, dup, err;

	if (id < 0)
		return id;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = (uint64_t)id;
	pfd = (int)syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return -errno;
	dup = fcntl(pfd, F_DUPFD_CLOEXEC, 0);
	l = bpf_program__attach_perf_event(p, pfd);   /* owns pfd once it succeeds */
	if (!l || dup < 0) {
		err = !l ? -errno : -EMFILE;
		if (l)
			bpf_link__destroy(l);
		else
			close(pfd);
		if (dup >= 0)
			close(dup);
		return err;
	}
	return pt_links_add_tp(links, l, dup, 0);
}

/* The skeleton's program of that name (what skel->progs.NAME is: bpfload.c points it at the
 * copy of the object that loaded it), or NULL: the page-fault programs differ by architecture,
 * and the skeleton of each has only its own. */
static struct bpf_program *skel_prog_named(struct peaktrace_bpf *skel, const char *name)
{
	const struct bpf_object_skeleton *s = skel->skeleton;

	for (int i = 0; i < s->prog_cnt; i++) {
		const struct bpf_prog_skeleton *p =
			(const void *)((const char *)s->progs + (size_t)i * s->prog_skel_sz);

		if (!strcmp(p->name, name))
			return *p->prog;
	}
	return NULL;
}

/* BTF raw tracepoints and trampolines: their own links. */
static int attach_raw(struct pt_links *links, struct bpf_program *p, const char *name)
{
	int err;

	if (!p) {
		fprintf(stderr, "peaktrace: failed to attach %s: not in the BPF object\n", name);
		return -ENOENT;
	}
	err = pt_links_add(links, bpf_program__attach(p), 0);
	if (err)
		fprintf(stderr, "peaktrace: failed to attach %s: %s\n", bpf_program__section_name(p),
			strerror(-err));
	return err;
}

int pt_attach_tracepoints(struct peaktrace_bpf *skel, struct pt_links *links, bool boundaries)
{
	/* The memory syscalls' two programs see the other syscalls too (bpf/memstat.bpf.h tells
	 * them apart by number): one verification each instead of one per syscall. The write
	 * program also sees sendto and writev (it tells them apart by syscall number). Group 0:
	 * detached last, with free. */
	const struct { struct bpf_program *p; const char *cat, *tp; bool rapi; } tps[] = {
		{ skel->progs.on_mem_enter, "syscalls", "sys_enter_mmap", false },
		{ skel->progs.on_mem_exit, "syscalls", "sys_exit_mmap", false },
		{ skel->progs.on_rss_stat, "kmem", "rss_stat", false },
		{ skel->progs.on_mem_enter, "syscalls", "sys_enter_munmap", false },
		{ skel->progs.on_mem_enter, "syscalls", "sys_enter_mremap", false },
		{ skel->progs.on_mem_enter, "syscalls", "sys_enter_brk", false },
		{ skel->progs.on_mem_enter, "syscalls", "sys_enter_madvise", false },
		{ skel->progs.on_mem_exit, "syscalls", "sys_exit_munmap", false },
		{ skel->progs.on_mem_exit, "syscalls", "sys_exit_mremap", false },
		{ skel->progs.on_mem_exit, "syscalls", "sys_exit_brk", false },
		{ skel->progs.on_write_enter, "syscalls", "sys_enter_write", true },
		{ skel->progs.on_read_exit, "syscalls", "sys_exit_read", true },
		{ skel->progs.on_recvfrom_exit, "syscalls", "sys_exit_recvfrom", true },
		{ skel->progs.on_write_enter, "syscalls", "sys_enter_sendto", true },
		{ skel->progs.on_write_enter, "syscalls", "sys_enter_writev", true },
	};
	/* BTF raw tracepoints (bpf/peaktrace.bpf.c says why), and the page faults' programs of
	 * this architecture (x86's tracepoints, arm64's fentry: arch/arch.h), in that order. */
	struct bpf_program *raw[] = { skel->progs.on_exec, skel->progs.on_exit };
	const char *const *fp = pt_arch_host()->fault_progs;
	size_t i;
	int err;

	for (; fp && *fp; fp++)
		if ((err = attach_raw(links, skel_prog_named(skel, *fp), *fp)))
			return err;
	for (i = 0; i < sizeof(raw) / sizeof(raw[0]); i++)
		if ((err = attach_raw(links, raw[i], bpf_program__name(raw[i]))))
			return err;
	for (i = 0; i < sizeof(tps) / sizeof(tps[0]); i++) {
		if (tps[i].rapi && !boundaries)
			continue;
		err = attach_tp(links, tps[i].p, tps[i].cat, tps[i].tp);
		if (err) {
			fprintf(stderr, "peaktrace: failed to attach tp/%s/%s: %s\n", tps[i].cat, tps[i].tp,
				strerror(-err));
			return err;
		}
	}
	return 0;
}
