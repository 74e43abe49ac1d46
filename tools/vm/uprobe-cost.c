// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uprobe-cost.c BPF_OBJ [N]: what a uprobe hit costs on arm64, by the class of the probed
 * instruction (issue 24: the arm64 uprobe code simulates b, bl, b.cond, cbz, tbz, adr, adrp,
 * ldr-literal and the branches to registers, and single-steps the rest out of line: an extra
 * trap). Five functions of this program, each written so that its first instruction is of one
 * kind, are called N times untraced, then N times with uprobe-cost.bpf.o's counter attached at
 * that first instruction; the line per function gives the ns per call of both, the difference
 * (the probe hit's cost) and the counter, which must equal N. Static, so that the arm64 VM
 * (tools/vm/uprobe-cost.sh) needs nothing else.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* Leaf functions whose first instruction is the one named. */
__asm__(".text\n"
	".p2align 4\n.globl f_b\n.type f_b, %function\n"
	"f_b:\n\tb 1f\n1:\tret\n.size f_b, .-f_b\n"
	".p2align 4\n.globl f_adrp\n.type f_adrp, %function\n"
	"f_adrp:\n\tadrp x9, f_adrp\n\tret\n.size f_adrp, .-f_adrp\n"
	".p2align 4\n.globl f_nop\n.type f_nop, %function\n"
	"f_nop:\n\tnop\n\tret\n.size f_nop, .-f_nop\n"
	".p2align 4\n.globl f_stp\n.type f_stp, %function\n"
	"f_stp:\n\tstp x29, x30, [sp, #-16]!\n\tldp x29, x30, [sp], #16\n\tret\n.size f_stp, .-f_stp\n"
	".p2align 4\n.globl f_paciasp\n.type f_paciasp, %function\n"
	"f_paciasp:\n\thint #25\n\thint #29\n\tret\n.size f_paciasp, .-f_paciasp\n");
void f_b(void), f_adrp(void), f_nop(void), f_stp(void), f_paciasp(void);

static const struct {
	const char *name, *insn, *kind;
} fns[] = {
	{ "f_b", "b", "simulated" },
	{ "f_adrp", "adrp", "simulated" },
	{ "f_nop", "nop", "stepped (simulate_nop: simulated)" },
	{ "f_stp", "stp x29, x30, [sp, #-16]!", "stepped" },
	{ "f_paciasp", "paciasp (hint #25)", "stepped" },
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per call of fn over n calls, through a volatile pointer: no inlining, no hoisting. */
static double per_call(void (*fn)(void), long n)
{
	void (*volatile f)(void) = fn;
	double t0 = now_ns();

	for (long i = 0; i < n; i++)
		f();
	return (now_ns() - t0) / n;
}

int main(int argc, char **argv)
{
	void (*ptrs[])(void) = { f_b, f_adrp, f_nop, f_stp, f_paciasp };
	long n = argc > 2 ? atol(argv[2]) : 20000;
	char exe[4096];
	ssize_t len;
	struct bpf_object *o;
	struct bpf_program *prog;
	struct bpf_map *map;
	int bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: uprobe-cost BPF_OBJ [N]\n");
		return 2;
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len < 0)
		return 1;
	exe[len] = 0;
	o = bpf_object__open_file(argv[1], NULL);
	if (!o || bpf_object__load(o)) {
		fprintf(stderr, "uprobe-cost: cannot load %s\n", argv[1]);
		return 1;
	}
	prog = bpf_object__find_program_by_name(o, "on_hit");
	map = bpf_object__find_map_by_name(o, "hits");
	printf("%-10s %-28s %-34s %10s %10s %10s %8s\n", "function", "first instruction", "arm64 uprobes",
	       "untraced", "traced", "per hit", "hits");
	for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = fns[i].name);
		struct bpf_link *l;
		uint32_t k = 0;
		uint64_t zero = 0, hits = 0;
		double plain, traced;

		per_call(ptrs[i], n / 10);   /* warm */
		plain = per_call(ptrs[i], n);
		bpf_map__update_elem(map, &k, sizeof(k), &zero, sizeof(zero), 0);
		l = bpf_program__attach_uprobe_opts(prog, 0, exe, 0, &uo);
		if (!l) {
			printf("%-10s attach failed\n", fns[i].name);
			bad++;
			continue;
		}
		traced = per_call(ptrs[i], n);
		bpf_link__destroy(l);
		bpf_map__lookup_elem(map, &k, sizeof(k), &hits, sizeof(hits), 0);
		printf("%-10s %-28s %-34s %8.0f ns %8.0f ns %8.0f ns %8llu\n", fns[i].name, fns[i].insn,
		       fns[i].kind, plain, traced, traced - plain, (unsigned long long)hits);
		if (hits != (uint64_t)n)
			bad++;
	}
	bpf_object__close(o);
	return bad ? 1 : 0;
}
