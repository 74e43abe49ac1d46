// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* objects.c — --python-objects while tracing (objects.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "util/fmt.h"
#include "target/proc.h"
#include "util/file.h"
#include "python/objects.h"

bool pt_pyobj_launch_env(struct pt_pyobjects *po, struct pt_pyobj_note *n, const char *user,
			 char *const *paths, int npaths, const char *exe)
{
	char name[512];
	uint32_t inlined = 0;
	bool found = false;

	if (user) {
		pt_sanitize(po->launch_pymalloc, sizeof(po->launch_pymalloc), user);
		return false;
	}
	for (int k = 0; k < npaths && !found; k++) {
		struct pt_pyalloc pa;

		if (paths[k] && pt_pyalloc_find(paths[k], paths[k], &pa) == 0) {
			found = true;
			inlined = pa.inlined_sites;
			pt_pyalloc_free(&pa);
		}
	}
	if (found && !inlined)
		return false;
	snprintf(po->launch_pymalloc, sizeof(po->launch_pymalloc), "malloc");
	n->set_pythonmalloc = true;
	pt_sanitize(name, sizeof(name), exe);
	if (found)
		fprintf(stderr, "peaktrace: --python-objects: %s inlines pymalloc into %u call sites no "
				"probe sees: running it with PYTHONMALLOC=malloc\n", name, inlined);
	else
		fprintf(stderr, "peaktrace: --python-objects: %s is no CPython itself (a script or shim "
				"may exec one): running it with PYTHONMALLOC=malloc\n", name);
	return true;
}

/*
 * The launched command's extra environment (--target-env), and for --python-objects
 * PYTHONMALLOC=malloc unless the user set PYTHONMALLOC or the command is a CPython whose
 * allocator the probes see whole. A build that inlines pymalloc into its callers (Debian's)
 * cannot be probed whole; a script or shim that execs Python later cannot be looked at yet, so it
 * gets the setting too. With it every object is a malloc block: the heap views hold each at its
 * requested size, as tracemalloc counts them; the RSS is then glibc's, not pymalloc's arenas.
 */
int pt_pyobj_command_env(struct pt_pyobjects *po, struct pt_pyobj_note *n, char **env,
			 char *const *target_env, int ntarget_env, bool on, char *const *paths,
			 int npaths, const char *exe)
{
	static char setting[] = "PYTHONMALLOC=malloc";
	const char *user = getenv("PYTHONMALLOC");
	int k;

	for (k = 0; k < ntarget_env; k++) {
		env[k] = target_env[k];
		if (strncmp(env[k], "PYTHONMALLOC=", 13) == 0)
			user = env[k] + 13;
	}
	if (!on)
		return k;
	if (pt_pyobj_launch_env(po, n, user, paths, npaths, exe))
		env[k++] = setting;
	return k;
}

/* The live table's slots. --python-objects puts every object in it, so its default is sized
 * from the target (attached: what its anonymous memory could hold) and the machine
 * (pt_pyobj_live_slots); a --max-live given is taken as is. */
uint32_t pt_pyobj_table_slots(struct pt_pyobj_note *n, uint32_t given, bool given_set, bool launched,
			      pid_t pid)
{
	uint64_t anon = 0;

	if (given_set) {
		n->live_slots = given;
		snprintf(n->live_sized_from, sizeof(n->live_sized_from), "--max-live");
		return given;
	}
	if (!launched)
		anon = pt_proc_status_bytes(pid, "RssAnon");
	n->live_slots = pt_pyobj_live_slots(pt_mem_total(), anon, n->live_sized_from,
					    sizeof(n->live_sized_from));
	return n->live_slots;
}

/* The interpreter's PYTHONMALLOC: the one chosen for a command started here (start), else the
 * target's environment's. */
static void pyobj_pythonmalloc(struct pt_pyobjects *po, pid_t pid, bool start, char *env, size_t len)
{
	struct pt_environ e;

	if (start) {
		snprintf(env, len, "%s", po->launch_pymalloc);
		return;
	}
	if (pt_environ_read(pid, &e) == 0) {
		const char *v = pt_environ_get(&e, "PYTHONMALLOC");

		pt_sanitize(env, len, v ? v : "");
		pt_environ_free(&e);
	}
}

void pt_pyobj_setup(struct pt_pyobjects *po, struct pt_pyobj_note *n, bool launched, pid_t pid,
		    const char *py_path, uint64_t py_inode, bool start)
{
	char env[32] = "";
	int err;

	pt_pyalloc_free(&po->pyalloc);
	n->found = n->via_malloc = n->probed = false;
	n->nprobes = 0;
	n->inlined_sites = 0;
	err = launched ? pt_pyalloc_find(py_path, py_path, &po->pyalloc)
		       : pt_pyalloc_find_pid(pid, py_path, py_inode, &po->pyalloc);
	pt_sanitize(n->path, sizeof(n->path), py_path);
	if (err) {
		fprintf(stderr, "peaktrace: --python-objects: %s exports no PyObject_Malloc (%s): Python "
				"objects are not traced\n", n->path, strerror(-err));
		return;
	}
	n->found = true;
	pyobj_pythonmalloc(po, pid, start, env, sizeof(env));
	snprintf(n->pythonmalloc, sizeof(n->pythonmalloc), "%s", env);
	n->inlined_sites = po->pyalloc.inlined_sites;
	if (strncmp(env, "malloc", 6) == 0) {
		n->via_malloc = true;
		return;
	}
	if (pt_plan_probes(&po->pyalloc.fam[PT_PYALLOC_OBJ], n->probes, &n->nprobes) ||
	    pt_plan_probes(&po->pyalloc.fam[PT_PYALLOC_MEM], n->probes, &n->nprobes)) {
		n->nprobes = 0;
		return;
	}
	if (n->inlined_sites)
		fprintf(stderr, "peaktrace: warning: --python-objects: %s inlines pymalloc into %u call "
				"sites no probe can see: objects allocated there are missing from the heap "
				"views (run it with PYTHONMALLOC=malloc: peaktrace sets it for a command it "
				"launches, unless PYTHONMALLOC is set)\n", n->path, n->inlined_sites);
}

void pt_pyobj_attach(struct pt_pyobjects *po, struct pt_pyobj_note *n, struct peaktrace_bpf *skel,
		     struct pt_links *links, pid_t pid, bool multi)
{
	if (!n->nprobes || n->probed)
		return;
	if (pt_attach_allocator(skel, links, &po->pyalloc.fam[PT_PYALLOC_OBJ], pid, n->probes,
				n->nprobes, multi)) {
		fprintf(stderr, "peaktrace: --python-objects: Python objects are not traced\n");
		return;
	}
	n->probed = true;
}

void pt_pyobj_cpu(struct pt_pyobj_note *n, pid_t pid, bool end)
{
	uint64_t u, k;

	if (!n->live_slots || !pt_proc_cpu_ns(pid, &u, &k))
		return;
	if (!end) {
		n->cpu_user_ns = u;
		n->cpu_sys_ns = k;
		return;
	}
	n->cpu_user_ns = u > n->cpu_user_ns ? u - n->cpu_user_ns : 0;
	n->cpu_sys_ns = k > n->cpu_sys_ns ? k - n->cpu_sys_ns : 0;
	n->cpu_read = true;
}

void pt_pyobj_table_start(struct pt_pyobjects *po, struct pt_pyobj_note *n, pid_t pid,
			  struct peaktrace_bpf *skel)
{
	char b[32];

	if (!n->live_slots)
		return;
	n->live_table_bytes = pt_map_memlock(bpf_map__fd(skel->maps.live)) +
			      pt_map_memlock(bpf_map__fd(skel->maps.live_overflow));
	fprintf(stderr, "peaktrace: --python-objects: live table of %" PRIu32 " slots, %s of kernel memory "
			"(%s); every object takes a slot: --max-live N to change it\n", n->live_slots,
		pt_fmt_bytes(b, sizeof(b), (double)n->live_table_bytes), n->live_sized_from);
	po->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	n->stats = po->stats_fd >= 0;
	pt_pyobj_cpu(n, pid, false);
}

void pt_pyobj_cost(struct pt_pyobj_note *n, struct peaktrace_bpf *skel)
{
	const struct bpf_program *progs[3] = { skel->progs.alloc_enter_prog, skel->progs.alloc_return,
					       skel->progs.free_enter };

	if (!n->stats)
		return;
	n->bpf_runs = n->bpf_ns = 0;
	for (int i = 0; i < 3; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(progs[i]);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		/* A call is an entry (allocation or free); an allocation's return is its second run. */
		if (progs[i] != skel->progs.alloc_return)
			n->bpf_runs += info.run_cnt;
		n->bpf_ns += info.run_time_ns;
	}
}

void pt_pyobjects_free(struct pt_pyobjects *po)
{
	if (po->stats_fd >= 0)
		close(po->stats_fd);
	po->stats_fd = -1;
	pt_pyalloc_free(&po->pyalloc);
}
