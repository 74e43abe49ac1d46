/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* bpfload.h — the BPF object loaded on two cores (docs/design.md "Cold start"). */
#ifndef PEAKTRACE_BPFLOAD_H
#define PEAKTRACE_BPFLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include "bpf/peaktrace.h"   /* the .bss types the skeleton names */
#include "peaktrace.skel.h"
#include "util/file.h"
#include "cli.h"

#define PT_LOAD_PARTS 2

/* The objects that loaded the programs; the maps are the configured skeleton's. */
struct pt_bpf_parts {
	struct peaktrace_bpf *part[PT_LOAD_PARTS];
	signed char loaded_by[64];   /* the skeleton's i-th program: its part, -1 not loaded */
	uint64_t maps_ns;            /* wall-clock: the maps created and the copies opened */
	uint64_t progs_ns;           /* wall-clock: the programs loaded */
};

/*
 * skel: opened and configured (settings, map sizes, the programs to load and their expected
 * attach types). Creates its maps on two threads, then verifies its programs in nparts (1 or
 * PT_LOAD_PARTS) copies of the object, one per thread, each reusing every map of skel, so all
 * see the same frozen .rodata. One copy costs less CPU in all (each copy parses the kernel's
 * BTF and relocates against it): for loads that run beside others anyway. Afterwards skel->progs.X names the program that was
 * loaded, whichever copy loaded it; skel's own programs stay unloaded. logs: NULL, or one
 * buffer of log_size bytes per program in skeleton order, armed at log level 4 (the verifier's
 * statistics). Returns 0 or -errno; *parts must be freed with pt_bpf_parts_free either way,
 * after skel's links are gone.
 */
int pt_bpf_load(struct peaktrace_bpf *skel, struct pt_bpf_parts *parts, int nparts, char *logs,
		size_t log_size);
void pt_bpf_parts_free(struct pt_bpf_parts *parts);

/* How many copies to load with: PT_LOAD_PARTS when at least two CPUs are ours (cpus: the CPUs
 * we may run on; quota_cpus: our cgroup's CPU limit, 0 for none), else 1.
 * pt_load_parts_here asks this machine. */
int pt_load_parts_for(int cpus, double quota_cpus);
int pt_load_parts_here(void);

/* Deals n items of cost[i] to nparts (1..PT_LOAD_PARTS) workers, the dearest first, each to
 * the worker with the least so far, so they end together: part[i] < 0 on entry is left alone
 * (not dealt), else becomes the item's worker. Ties go to the lowest index and worker. */
void pt_deal(const uint64_t *cost, int n, int nparts, int *part);

/* Each BPF program's deepest call chain in stack bytes, from the built object
 * (tools/check-stack.py, generated at build time), ended by a NULL name: what the verifier
 * counts against the 512 bytes a whole chain has where the JIT gives no private stack. */
struct pt_stack_chain {
	const char *prog;
	int bytes;
};
extern const struct pt_stack_chain pt_stack_chains[];
/* The bytes of program prog's chain, -1 when the table has no such program. */
int pt_stack_chain_bytes(const char *prog);

/* The kernel memory every map of obj takes (pt_map_memlock, util/file.h). */
uint64_t pt_maps_memlock(const struct bpf_object *obj);

/* The skeleton's i-th program pointer (skel->progs.X in declaration order), and their count. */
struct bpf_program **pt_skel_prog(struct peaktrace_bpf *skel, int i);
int pt_skel_nprogs(const struct peaktrace_bpf *skel);

/* --verifier-stats FILE (hidden): the kernel's verifier statistics of each program (log level 4:
 * instructions processed, states, verification time), so what each program costs the start-up
 * can be seen with the loader's real configuration, which `bpftool prog loadall` lacks. One log
 * buffer of PT_VLOG_SIZE bytes per program, in skeleton order (pt_bpf_load arms them). */
#define PT_VLOG_SIZE 16384
char *pt_vlog_bufs(const struct peaktrace_bpf *skel);
/* One line per loaded program: NAME usec=T insns=N states=S peak_states=P stack=A+B...
 * chain_bytes=C (its deepest call chain's stack, tools/check-stack.py) part=P, then the sums
 * and the load's wall-clock (load_ns) and CPU time (cpu_ns: the kernel's work in the bpf() calls
 * included, which a machine loaded by other work does not inflate). Said on stderr if unwritable. */
void pt_verifier_stats_write(const char *path, struct peaktrace_bpf *skel,
			     const struct pt_bpf_parts *parts, const char *bufs, uint64_t load_ns,
			     uint64_t cpu_ns);
/* The process's CPU time (the load runs on two threads: the load's alone while the session has
 * no other thread). */
uint64_t pt_process_cpu_ns(void);
/* --prog-stats FILE (hidden, for tools/bench/bench.py): each program's kernel run count and run
 * time so far, read before the probes go. The kernel counts them only while the sysctl
 * kernel.bpf_stats_enabled is 1; the benchmark turns it on for its own pass. */
void pt_prog_stats_write(const char *path, struct peaktrace_bpf *skel);

/* Between open and load: rodata and map sizes from the options (o), the live table sized for
 * slots, glibc's arena accounting and the free path's thread lookup as the allocator needs them
 * (arenas, free_checks); the programs this run never attaches are not loaded (the verifier's
 * time is most of the start-up). The target's PID is the caller's to set. */
void pt_bpf_configure(struct peaktrace_bpf *skel, const struct pt_options *o, uint32_t slots,
		      bool arenas, bool free_checks);
/* The allocator programs loaded for uprobe-multi links (6.6+). */
void pt_bpf_use_multi(struct peaktrace_bpf *skel);
/* Every write into the .bss before attaching: the init phase's record and, attached (not
 * launched), the RSS the process pid already has. */
void pt_bpf_seed(struct peaktrace_bpf *skel, bool launched, pid_t pid);

#endif
