// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * arm64-load.c OBJ [SKIP...]: each program of a BPF object loaded alone, with the object's own
 * .rodata defaults (not peaktrace's configuration), and the verdict printed: "load NAME: ok
 * (N insns)" or "load NAME: FAILED: error" and the end of the verifier log. Programs named in
 * SKIP are not tried. tools/vm/arm64-try.sh runs it in the arm64 guest: what the kernel's
 * verifier says of the arm64 object before peaktrace itself can load it there.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

static char logtail[64][512];
static int nlog;

/* libbpf prints a failed load's verifier log through its print callback: keep its last lines. */
static int keep(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[4096];
	char *s, *save = NULL;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	for (s = strtok_r(line, "\n", &save); s; s = strtok_r(NULL, "\n", &save))
		snprintf(logtail[nlog++ % 64], sizeof(logtail[0]), "%s", s);
	return 0;
}

static int skipped(const char *name, int argc, char **argv)
{
	for (int i = 2; i < argc; i++)
		if (strcmp(name, argv[i]) == 0)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_object *o;
	struct bpf_program *p;
	char names[128][64];
	int n = 0, bad = 0;

	if (argc < 2)
		return 2;
	libbpf_set_print(keep);
	o = bpf_object__open_file(argv[1], NULL);
	if (!o)
		return 1;
	bpf_object__for_each_program(p, o)
		if (n < 128)
			snprintf(names[n++], sizeof(names[0]), "%s", bpf_program__name(p));
	bpf_object__close(o);
	for (int i = 0; i < n; i++) {
		int err;

		if (skipped(names[i], argc, argv)) {
			printf("load %s: skipped\n", names[i]);
			continue;
		}
		o = bpf_object__open_file(argv[1], NULL);
		bpf_object__for_each_program(p, o)
			bpf_program__set_autoload(p, strcmp(bpf_program__name(p), names[i]) == 0);
		nlog = 0;
		err = bpf_object__load(o);
		p = bpf_object__find_program_by_name(o, names[i]);
		if (!err) {
			printf("load %s: ok (%zu insns)\n", names[i], bpf_program__insn_cnt(p));
		} else {
			bad++;
			printf("load %s: FAILED: %s\n", names[i], strerror(-err));
			for (int k = nlog > 12 ? nlog - 12 : 0; k < nlog; k++)
				printf("    %s\n", logtail[k % 64]);
		}
		bpf_object__close(o);
	}
	printf("load: %d of %d programs failed\n", bad, n);
	return bad ? 1 : 0;
}
