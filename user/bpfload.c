// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bpfload.c — the BPF object loaded on two cores.
 *
 * In launch mode the command waits while the programs load, and libbpf loads an object's
 * programs one after another (verification is most of it), on one core while the other idles.
 * So the configured skeleton creates every map itself, on both cores (the kernel zeroes tens of
 * MiB for the preallocated tables), as libbpf's load would (.bss and .rodata filled, .rodata
 * frozen, both mmapped where the skeleton points), and loads no program; its programs are
 * loaded by PT_LOAD_PARTS copies of the same embedded object, one per thread, each reusing
 * every map of the first: the same frozen .rodata (the verifier drops the same dead code), the
 * same .bss, ring buffer and tables. Measured in docs/design.md "Cold start".
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "bpfload.h"
#include "util/file.h"
#include "util/outdir.h"
#include "bpf/inv.h"
#include "target/proc.h"
#include "attach/umulti.h"
#include "unwind/unwind_maps.h"
#include "kernel/features.h"

#define PT_MAX_MAPS 64

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int pt_stack_chain_bytes(const char *prog)
{
	for (const struct pt_stack_chain *c = pt_stack_chains; c->prog; c++)
		if (!strcmp(c->prog, prog))
			return c->bytes;
	return -1;
}

int pt_skel_nprogs(const struct peaktrace_bpf *skel)
{
	return skel->skeleton->prog_cnt;
}

static struct bpf_prog_skeleton *skel_prog_at(const struct peaktrace_bpf *skel, int i)
{
	return (struct bpf_prog_skeleton *)((char *)skel->skeleton->progs +
					     (size_t)i * skel->skeleton->prog_skel_sz);
}

struct bpf_program **pt_skel_prog(struct peaktrace_bpf *skel, int i)
{
	return skel_prog_at(skel, i)->prog;
}

/* ---- how many copies ---------------------------------------------------------------------- */

int pt_load_parts_for(int cpus, double quota_cpus)
{
	double usable = cpus;

	if (quota_cpus > 0 && quota_cpus < usable)
		usable = quota_cpus;
	/* A second copy costs its own BTF parse and CO-RE pass (~+20% CPU in all): under a limit
	 * of less than two CPUs that is time lost. With two or more, two threads end sooner even
	 * beside other busy processes (the scheduler gives two threads a larger share: 12
	 * interleaved rounds at load 3-6, wait 0.136 s against 0.156 s with one copy). */
	return usable >= 2 ? PT_LOAD_PARTS : 1;
}

/* The two numbers of a cgroup file (cpu.max "QUOTA PERIOD", or v1's quota and period in two
 * files) as CPUs; 0 for no limit ("max", -1) or unreadable. */
static double quota_over_period(const char *quota_path, const char *period_path)
{
	char *q = pt_read_file(quota_path, 64, NULL), *per = period_path ? pt_read_file(period_path, 64, NULL) : NULL;
	double quota = 0, period = 0, cpus = 0;

	if (q && period_path ? per && sscanf(q, "%lf", &quota) == 1 && sscanf(per, "%lf", &period) == 1 :
	    q && sscanf(q, "%lf %lf", &quota, &period) == 2)
		cpus = quota > 0 && period > 0 ? quota / period : 0;
	free(q);
	free(per);
	return cpus;
}

/* Our cgroup's CPU limit in CPUs, 0 for none or unknown: cgroup v2's cpu.max, else v1's cpu
 * controller (cpu.cfs_quota_us / cpu.cfs_period_us). */
static double cgroup_cpus(void)
{
	char *cg = pt_read_file("/proc/self/cgroup", 4096, NULL), *line, *save = NULL;
	char q[4300], per[4300];
	double cpus = 0;

	for (line = cg ? strtok_r(cg, "\n", &save) : NULL; line && !cpus; line = strtok_r(NULL, "\n", &save)) {
		char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;

		if (!path)
			continue;
		*path++ = 0;
		ctl++;
		if (!*ctl) {                                  /* v2: "0::/PATH" */
			snprintf(q, sizeof(q), "/sys/fs/cgroup%s/cpu.max", path);
			cpus = quota_over_period(q, NULL);
		} else if (!strcmp(ctl, "cpu") || !strcmp(ctl, "cpu,cpuacct")) {
			snprintf(q, sizeof(q), "/sys/fs/cgroup/%s%s/cpu.cfs_quota_us", ctl, path);
			snprintf(per, sizeof(per), "/sys/fs/cgroup/%s%s/cpu.cfs_period_us", ctl, path);
			cpus = quota_over_period(q, per);
		}
	}
	free(cg);
	return cpus;
}

int pt_load_parts_here(void)
{
	cpu_set_t set;
	int cpus = 1;

	if (!sched_getaffinity(0, sizeof(set), &set))
		cpus = CPU_COUNT(&set);
	return pt_load_parts_for(cpus, cgroup_cpus());
}

/* ---- dealing work out ------------------------------------------------------------------- */

void pt_deal(const uint64_t *cost, int n, int nparts, int *part)
{
	uint64_t load[PT_LOAD_PARTS] = { 0 };

	if (nparts < 1 || nparts > PT_LOAD_PARTS)
		nparts = PT_LOAD_PARTS;
	for (int i = 0; i < n; i++)
		if (part[i] >= 0)
			part[i] = -2;   /* to deal */
	for (;;) {
		int best = -1, p = 0;

		for (int i = 0; i < n; i++)
			if (part[i] == -2 && (best < 0 || cost[i] > cost[best]))
				best = i;
		if (best < 0)
			return;
		for (int k = 1; k < nparts; k++)
			if (load[k] < load[p])
				p = k;
		part[best] = p;
		load[p] += cost[best];
	}
}

/* ---- the maps, created on both cores ----------------------------------------------------- */

/* One thread's share: maps to create, then the copy of the object it opens meanwhile. */
struct share {
	struct bpf_map *map[PT_MAX_MAPS];
	int fd[PT_MAX_MAPS];
	int n;
	int btf_fd;   /* the object's BTF, for the maps' key and value types; -1 without */
	int err;
	/* the copy, if this thread opens one */
	bool open;
	struct peaktrace_bpf *skel, *copy;
	const int *part;
	int k;
	char *logs;
	size_t log_size;
};

/*
 * What creating the map costs the kernel, in bytes of a plain array that take as long: an
 * array's values are allocated and zeroed at once (~3.5 MB/ms here); a preallocated hash
 * also sets up each element (~35 ns: live_overflow's 66,560 elements took 2.7 ms, stats'
 * 14.7 MB 4.3 ms), a per-CPU array allocates each element per CPU (~150 ns).
 */
static uint64_t create_cost(const struct bpf_map *m)
{
	uint64_t n = bpf_map__max_entries(m);

	if (bpf_map__map_flags(m) & BPF_F_NO_PREALLOC)
		return 0;
	switch (bpf_map__type(m)) {
	case BPF_MAP_TYPE_ARRAY:
		return n * bpf_map__value_size(m);
	case BPF_MAP_TYPE_HASH:
		return n * (bpf_map__key_size(m) + bpf_map__value_size(m) + 128);
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return n * 512;
	default:
		return 0;
	}
}

static struct peaktrace_bpf *open_part(struct share *sh);

static void *create_share(void *arg)
{
	struct share *b = arg;

	for (int i = 0; i < b->n; i++) {
		const struct bpf_map *m = b->map[i];
		LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = bpf_map__map_flags(m),
			    .map_extra = bpf_map__map_extra(m), .numa_node = bpf_map__numa_node(m));

		if (b->btf_fd >= 0 && bpf_map__btf_value_type_id(m)) {
			o.btf_fd = b->btf_fd;
			o.btf_key_type_id = bpf_map__btf_key_type_id(m);
			o.btf_value_type_id = bpf_map__btf_value_type_id(m);
		}
		b->fd[i] = bpf_map_create(bpf_map__type(m), bpf_map__name(m), bpf_map__key_size(m),
					  bpf_map__value_size(m), bpf_map__max_entries(m), &o);
		if (b->fd[i] < 0) {
			b->err = -errno;
			return NULL;
		}
	}
	if (b->open && !(b->copy = open_part(b)))
		b->err = -errno;
	return NULL;
}

/* The object's BTF loaded on its own, for the maps' key and value types (the task storage
 * map needs them); -1 when the kernel refuses it. */
static int object_btf_fd(struct peaktrace_bpf *skel)
{
	const struct btf *btf = bpf_object__btf(skel->obj);
	const void *raw;
	struct btf *copy;
	__u32 size;
	int fd = -1;

	if (!btf || !(raw = btf__raw_data(btf, &size)))
		return -1;
	copy = btf__new(raw, size);
	if (libbpf_get_error(copy))
		return -1;
	if (!btf__load_into_kernel(copy))
		fd = dup(btf__fd(copy));
	btf__free(copy);
	return fd;
}

/* Global data (.bss, .rodata): its initial value (the settings written before the load) in
 * the map, .rodata frozen (the verifier reads it as constants), and the skeleton's pointer
 * onto the map's memory, as libbpf's own load does. */
static int fill_global_data(struct peaktrace_bpf *skel)
{
	const struct bpf_object_skeleton *sk = skel->skeleton;

	for (int i = 0; i < sk->map_cnt; i++) {
		const struct bpf_map_skeleton *ms =
			(const void *)((const char *)sk->maps + (size_t)i * sk->map_skel_sz);
		struct bpf_map *m = *ms->map;
		__u32 flags = bpf_map__map_flags(m), zero = 0;
		long page = sysconf(_SC_PAGE_SIZE);
		size_t size, len;
		void *init;

		if (!bpf_map__is_internal(m) || !(init = (void *)bpf_map__initial_value(m, &size)))
			continue;
		if (bpf_map_update_elem(bpf_map__fd(m), &zero, init, 0) ||
		    ((flags & BPF_F_RDONLY_PROG) && bpf_map_freeze(bpf_map__fd(m))))
			return -errno;
		if (!ms->mmaped)
			continue;
		if (!(flags & BPF_F_MMAPABLE)) {
			*ms->mmaped = NULL;
			continue;
		}
		len = ((size + 7) / 8 * 8 * bpf_map__max_entries(m) + page - 1) / page * page;
		if (mmap(*ms->mmaped, len, (flags & BPF_F_RDONLY_PROG) ? PROT_READ : PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, bpf_map__fd(m), 0) == MAP_FAILED)
			return -errno;
	}
	return 0;
}

/* Every map skel does not share already, dealt by creation cost to the two threads; each
 * thread then opens its copy of the object. */
static int create_maps(struct share sh[2])
{
	struct peaktrace_bpf *skel = sh[0].skel;
	uint64_t size[PT_MAX_MAPS] = { 0 };
	struct bpf_map *m, *pick[PT_MAX_MAPS];
	int to[PT_MAX_MAPS], n = 0, err = 0;
	pthread_t t;

	bpf_object__for_each_map(m, skel->obj) {
		if (bpf_map__fd(m) >= 0)   /* reused: the sandbox's */
			continue;
		if (n == PT_MAX_MAPS)
			return -E2BIG;
		pick[n] = m;
		size[n] = create_cost(m);
		to[n++] = 0;
	}
	pt_deal(size, n, 2, to);
	for (int i = 0; i < n; i++) {
		struct share *c = &sh[to[i]];

		c->fd[c->n] = -1;   /* until created */
		c->map[c->n++] = pick[i];
	}
	sh[0].btf_fd = sh[1].btf_fd = object_btf_fd(skel);
	if (pthread_create(&t, NULL, create_share, &sh[1])) {
		create_share(&sh[1]);
		create_share(&sh[0]);
	} else {
		create_share(&sh[0]);
		pthread_join(t, NULL);
	}
	for (int c = 0; c < 2; c++) {
		for (int i = 0; i < sh[c].n; i++) {
			if (!err && !sh[c].err)
				err = bpf_map__reuse_fd(sh[c].map[i], sh[c].fd[i]);
			if (sh[c].fd[i] >= 0)
				close(sh[c].fd[i]);   /* reuse_fd took its own copy */
		}
		if (!err)
			err = sh[c].err;
	}
	if (sh[0].btf_fd >= 0)
		close(sh[0].btf_fd);
	return err ? err : fill_global_data(skel);
}

/* ---- the programs, verified on both cores ------------------------------------------------ */

/*
 * What each program costs the verifier (usec, --verifier-stats at a quiet moment, default
 * configuration): the programs are dealt out by it, the dearest first, so the two threads end
 * together. A program not listed (a small one) counts as the smallest.
 */
static const struct { const char *name; unsigned cost; } verify_cost[] = {
	{ "on_rss_stat", 28000 },   { "alloc_enter_prog", 15400 }, { "on_mem_exit", 14300 },
	{ "on_write_enter", 8700 }, { "on_mem_enter", 8600 },      { "alloc_return", 5200 },
	{ "boundary_hit", 2000 },
};

static unsigned prog_cost(const char *name)
{
	for (size_t i = 0; i < sizeof(verify_cost) / sizeof(verify_cost[0]); i++)
		if (!strcmp(verify_cost[i].name, name))
			return verify_cost[i].cost;
	return 300;
}

/* part[i]: which of the nparts copies loads the skeleton's i-th program, -1 for none. */
static void deal_programs(struct peaktrace_bpf *skel, int *part, int nparts)
{
	uint64_t cost[PT_MAX_MAPS];
	int n = pt_skel_nprogs(skel);

	for (int i = 0; i < n; i++) {
		part[i] = bpf_program__autoload(*pt_skel_prog(skel, i)) ? 0 : -1;
		cost[i] = prog_cost(skel_prog_at(skel, i)->name);
	}
	pt_deal(cost, n, nparts, part);
}

/* A copy of the object, set to load the programs dealt to it (sh->k). */
static struct peaktrace_bpf *open_part(struct share *sh)
{
	struct peaktrace_bpf *c = peaktrace_bpf__open();

	if (!c)
		return NULL;
	for (int i = 0; i < pt_skel_nprogs(sh->skel); i++) {
		struct bpf_program *p = *pt_skel_prog(c, i), *orig = *pt_skel_prog(sh->skel, i);
		bool mine = sh->part[i] == sh->k;

		bpf_program__set_autoload(p, mine);
		bpf_program__set_expected_attach_type(p, bpf_program__expected_attach_type(orig));
		if (sh->logs && mine) {
			bpf_program__set_log_buf(p, sh->logs + (size_t)i * sh->log_size, sh->log_size);
			bpf_program__set_log_level(p, 4);
		}
	}
	return c;
}

/* The copy uses skel's maps: the same object, so the same maps in the same order. */
static int share_maps(struct peaktrace_bpf *skel, struct peaktrace_bpf *c)
{
	struct bpf_map *m, *own = bpf_object__next_map(c->obj, NULL);
	int err;

	bpf_object__for_each_map(m, skel->obj) {
		if (!own || strcmp(bpf_map__name(own), bpf_map__name(m)))
			return -EINVAL;
		if ((err = bpf_map__reuse_fd(own, bpf_map__fd(m))))
			return err;
		own = bpf_object__next_map(c->obj, own);
	}
	return own ? -EINVAL : 0;
}

static void *load_part(void *arg)
{
	struct peaktrace_bpf *c = arg;

	return (void *)(long)peaktrace_bpf__load(c);
}

/* skel->progs.X: the copy's program X where a copy loaded it. */
static void point_at_loaded(struct peaktrace_bpf *skel, struct pt_bpf_parts *parts, const int *part)
{
	for (int i = 0; i < pt_skel_nprogs(skel); i++)
		if (part[i] >= 0)
			*pt_skel_prog(skel, i) = *pt_skel_prog(parts->part[part[i]], i);
}

_Static_assert(PT_LOAD_PARTS == 2, "one copy on this thread, one on another");

int pt_bpf_load(struct peaktrace_bpf *skel, struct pt_bpf_parts *parts, int nparts, char *logs,
		size_t log_size)
{
	int part[PT_MAX_MAPS], n = pt_skel_nprogs(skel), err;
	struct share sh[2];
	uint64_t t0, t1;
	long rc = 0;
	pthread_t t;

	memset(parts, 0, sizeof(*parts));
	if (n > (int)sizeof(parts->loaded_by))
		return -E2BIG;
	if (nparts < 1 || nparts > PT_LOAD_PARTS)
		nparts = PT_LOAD_PARTS;
	deal_programs(skel, part, nparts);
	t0 = now_ns();
	memset(sh, 0, sizeof(sh));
	for (int k = 0; k < 2; k++) {
		sh[k].open = k < nparts;
		sh[k].skel = skel;
		sh[k].part = part;
		sh[k].k = k;
		sh[k].logs = logs;
		sh[k].log_size = log_size;
	}
	err = create_maps(sh);
	for (int k = 0; k < nparts; k++) {
		parts->part[k] = sh[k].copy;
		if (!err && !parts->part[k])
			err = -ENOMEM;
		if (!err)
			err = share_maps(skel, parts->part[k]);
	}
	if (err)
		return err;
	t1 = now_ns();
	parts->maps_ns = t1 - t0;
	if (nparts == 1) {
		err = peaktrace_bpf__load(parts->part[0]);
	} else if (pthread_create(&t, NULL, load_part, parts->part[1])) {
		rc = (long)load_part(parts->part[1]);
		err = peaktrace_bpf__load(parts->part[0]);
	} else {
		err = peaktrace_bpf__load(parts->part[0]);
		pthread_join(t, (void **)&rc);
	}
	parts->progs_ns = now_ns() - t1;
	if (err || (err = (int)rc))
		return err;
	point_at_loaded(skel, parts, part);
	for (int i = 0; i < n; i++)
		parts->loaded_by[i] = (signed char)part[i];
	return 0;
}

void pt_bpf_parts_free(struct pt_bpf_parts *parts)
{
	for (int k = 0; k < PT_LOAD_PARTS; k++) {
		peaktrace_bpf__destroy(parts->part[k]);   /* NULL: nothing */
		parts->part[k] = NULL;
	}
}

uint64_t pt_maps_memlock(const struct bpf_object *obj)
{
	const struct bpf_map *m;
	uint64_t sum = 0;

	bpf_object__for_each_map(m, obj)
		if (bpf_map__fd(m) >= 0)
			sum += pt_map_memlock(bpf_map__fd(m));
	return sum;
}

char *pt_vlog_bufs(const struct peaktrace_bpf *skel)
{
	int n = pt_skel_nprogs(skel);

	return calloc(n ? n : 1, PT_VLOG_SIZE);
}

static unsigned long long vlog_field(const char *log, const char *key)
{
	const char *p = strstr(log, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* The verifier's "stack depth A+B+..." (each subprogram's frame, in bytes): digits and '+'. */
static void vlog_stack(const char *log, char *out, size_t size)
{
	const char *p = strstr(log, "stack depth ");
	size_t n = 0;

	if (p)
		for (p += strlen("stack depth "); n + 1 < size && ((*p >= '0' && *p <= '9') || *p == '+'); p++)
			out[n++] = *p;
	out[n] = 0;
}

uint64_t pt_process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void pt_verifier_stats_write(const char *path, struct peaktrace_bpf *skel,
			     const struct pt_bpf_parts *parts, const char *bufs, uint64_t load_ns,
			     uint64_t cpu_ns)
{
	unsigned long long us = 0, insns = 0;
	FILE *f = pt_user_fopen(path);

	if (!f) {
		fprintf(stderr, "peaktrace: cannot write %s: %s\n", path, strerror(errno));
		return;
	}
	for (int i = 0; i < pt_skel_nprogs(skel); i++) {
		const struct bpf_program *prog = *pt_skel_prog(skel, i);
		const char *log = bufs + (size_t)i * PT_VLOG_SIZE;
		unsigned long long t = vlog_field(log, "verification time "),
				   n = vlog_field(log, "processed ");

		char stack[64];

		if (bpf_program__fd(prog) < 0)   /* not loaded */
			continue;
		vlog_stack(log, stack, sizeof(stack));
		fprintf(f, "%s usec=%llu insns=%llu states=%llu peak_states=%llu stack=%s chain_bytes=%d part=%d\n",
			bpf_program__name(prog), t, n, vlog_field(log, "total_states "),
			vlog_field(log, "peak_states "), stack, pt_stack_chain_bytes(bpf_program__name(prog)),
			parts->loaded_by[i]);
		us += t;
		insns += n;
	}
	fprintf(f, "total usec=%llu insns=%llu load_ms=%.1f load_cpu_ms=%.1f maps_ms=%.1f progs_ms=%.1f\n",
		us, insns, load_ns / 1e6, cpu_ns / 1e6, parts->maps_ns / 1e6, parts->progs_ns / 1e6);
	fclose(f);
}

void pt_prog_stats_write(const char *path, struct peaktrace_bpf *skel)
{
	FILE *f = pt_user_fopen(path);

	if (!f) {
		fprintf(stderr, "peaktrace: cannot write %s: %s\n", path, strerror(errno));
		return;
	}
	for (int i = 0; i < pt_skel_nprogs(skel); i++) {
		const struct bpf_program *prog = *pt_skel_prog(skel, i);
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		fprintf(f, "%s %llu %llu\n", bpf_program__name(prog), (unsigned long long)info.run_cnt,
			(unsigned long long)info.run_time_ns);
	}
	fclose(f);
}

/* Programs this run never attaches are not loaded: the verifier's time is most of the start-up
 * (--verifier-stats). --light attaches no allocator probe; boundary_hit serves uprobe boundaries
 * only; the Runtime API programs run only while they look for boundaries. */
static void skip_unused_programs(struct peaktrace_bpf *skel, const struct pt_options *o)
{

	if (o->light) {
		bpf_program__set_autoload(skel->progs.alloc_enter_prog, false);
		bpf_program__set_autoload(skel->progs.alloc_return, false);
		bpf_program__set_autoload(skel->progs.free_enter, false);
	}
	if (o->boundary != BOUNDARY_UPROBE && o->boundary != BOUNDARY_AWS)
		bpf_program__set_autoload(skel->progs.boundary_hit, false);
	if (!skel->rodata->rapi_boundaries && !skel->rodata->rapi_first_start) {
		bpf_program__set_autoload(skel->progs.on_write_enter, false);
		bpf_program__set_autoload(skel->progs.on_read_exit, false);
		bpf_program__set_autoload(skel->progs.on_recvfrom_exit, false);
	}
	/* Asked by the unwind tables' loader only (unwind_maps.c), never attached. */
	if (!skel->rodata->dwarf_unwind)
		bpf_program__set_autoload(skel->progs.unw_key_probe, false);
}

void pt_bpf_configure(struct peaktrace_bpf *skel, const struct pt_options *o, uint32_t slots,
		      bool arenas, bool free_checks)
{
	uint32_t buckets = 1;

	while (buckets * PT_BUCKET_SLOTS < slots)
		buckets <<= 1;
	skel->rodata->live_bucket_mask = buckets - 1;
	skel->rodata->max_stacks = o->max_stacks;
	skel->rodata->capture_stacks = o->fp_stacks;
	skel->rodata->sample_bytes = o->sample_bytes;
	pt_unwind_configure(skel, o->dwarf && o->fp_stacks, 0);
	skel->rodata->glibc_arenas = arenas;
	skel->rodata->free_checks_thread = free_checks;
	skel->rodata->rapi_boundaries = o->boundary == BOUNDARY_AUTO || o->boundary == BOUNDARY_RUNTIME_API;
	skel->rodata->rapi_first_start = o->boundary == BOUNDARY_AWS;
	bpf_map__set_max_entries(skel->maps.live, buckets);
	bpf_map__set_max_entries(skel->maps.stack_ids, o->max_stacks);
	bpf_map__set_max_entries(skel->maps.stacks, o->max_stacks);
	bpf_map__set_max_entries(skel->maps.stats, o->max_stacks);
	/* On whenever stacks are: an exec may start CPython (the walk waits for py_off.runtime;
	 * py_stacks is not preallocated). */
	skel->rodata->python = o->fp_stacks;
	/* bpf_rdonly_cast only where the kernel has it (6.2+): else the programs use the task's
	 * trusted pointer (unwind.bpf.h unw_task), which loads on any kernel, only verified
	 * slower. The kernel check (main.c, before any load) looked it up in the kernel's BTF
	 * already, so this costs nothing more; and PEAKTRACE_PRETEND_MISSING=bpf_rdonly_cast takes
	 * the fallback on any kernel (kernel/features.h). */
	skel->rodata->has_rdonly_cast = pt_kfeat_rdonly_cast();
	skel->rodata->probe_floor = o->probe_floor;
	if (o->probe_floor)
		fprintf(stderr, "peaktrace: --probe-floor: every probe attached with an empty program; "
				"the report's figures are all zero (a benchmark's floor, not a measurement)\n");
	bpf_map__set_max_entries(skel->maps.py_stacks, o->max_stacks);
	/* The pool of Python words: a chunk (128 bytes) per stack the table holds, 8 MiB at the
	 * default; stacks average two on a CPython import, so the hash map takes the words of the
	 * later half of a full table. */
	bpf_map__set_max_entries(skel->maps.py_chunks, o->py_chunks ? o->py_chunks : o->max_stacks);
	bpf_map__set_max_entries(skel->maps.live_overflow, buckets * PT_BUCKET_SLOTS / 16 + 1024);
	skip_unused_programs(skel, o);
}

void pt_bpf_use_multi(struct peaktrace_bpf *skel)
{
	bpf_program__set_expected_attach_type(skel->progs.alloc_enter_prog, PT_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(skel->progs.alloc_return, PT_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(skel->progs.free_enter, PT_BPF_TRACE_UPROBE_MULTI);
}

/* Every write into the skeleton's .bss before attaching (bpfload.h). */
void pt_bpf_seed(struct peaktrace_bpf *skel, bool launched, pid_t pid)
{
	struct pt_global *g = &skel->bss->g;

	/* The init phase (seq 0) runs from now until the runtime first asks for work. */
	g->inv[0].state = PT_INV_RUNNING;
	g->inv[0].start_ns = now_ns();
	g->inv[0].start_epoch = g->epoch = 1;   /* epoch 0 would read as "untimed" */
	g->inv[0].peak_seq = 1;
	g->inv_peak_counter = 1;
	skel->bss->rss_g.inv_peak_seq[0] = skel->bss->rss_g.inv_counter = 1;   /* rss.bpf.h */
	/* Launch mode: until its exec the target is our own copy (unwind.bpf.h: no walks). */
	skel->bss->unw_pre_exec = launched;
	if (!launched) {
		/* RSS so far: kmem:rss_stat only reports a counter when it changes. */
		g->rss[PT_RSS_ANON] = (int64_t)pt_proc_status_bytes(pid, "RssAnon");
		g->rss[PT_RSS_FILE] = (int64_t)pt_proc_status_bytes(pid, "RssFile");
		g->rss[PT_RSS_SHMEM] = (int64_t)pt_proc_status_bytes(pid, "RssShmem");
		g->rss_peak = pt_rss_total(g);
		g->inv[0].rss_start = g->inv[0].rss_peak = g->rss_peak;
		/* RSS attribution (bpf/rss.bpf.h): what is resident now was faulted in unseen. */
		skel->bss->rss_g.now.before = g->rss[PT_RSS_ANON];
		skel->bss->rss_g.at_peak = skel->bss->rss_g.now;
		skel->bss->rss_g.at_peak.anon = g->rss[PT_RSS_ANON];
		skel->bss->rss_g.sh_now[0].before = g->rss[PT_RSS_FILE];
		skel->bss->rss_g.sh_now[1].before = g->rss[PT_RSS_SHMEM];
		skel->bss->rss_g.sh_at_peak[0] = skel->bss->rss_g.sh_now[0];
		skel->bss->rss_g.sh_at_peak[0].total = g->rss[PT_RSS_FILE];
		skel->bss->rss_g.sh_at_peak[1] = skel->bss->rss_g.sh_now[1];
		skel->bss->rss_g.sh_at_peak[1].total = g->rss[PT_RSS_SHMEM];
		skel->bss->rss_g.sh_snap_seq[0] = skel->bss->rss_g.sh_snap_seq[1] =
			skel->bss->rss_g.peak_seq;
	}
}
