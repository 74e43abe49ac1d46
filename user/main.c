// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * peaktrace — who holds the memory, and when was the peak.
 *
 * main(): parse args -> check (root, output, kernel) -> find the target -> open/configure/load -> attach -> start ->
 * poll -> stop -> collect -> report, with one cleanup path (session.h).
 */
#include <stdlib.h>
#include <string.h>
#include "compare/compare.h"
#include "diff/diff.h"
#include "cli.h"
#include "session.h"
#include "follow.h"
#include "util/wake.h"
#include "kernel/features.h"
#include "arch/arch.h"

/* peaktrace diff DIR_A DIR_B: two finished runs compared, nothing traced (diff/diff.h). */
static int run_diff(int argc, char **argv)
{
	struct pt_diff_options dopt;
	char *name = "peaktrace diff";

	/* argp names the program from argv[0] in its messages: "peaktrace diff: ...". */
	argv[1] = name;
	pt_cli_parse_diff(argc - 1, argv + 1, &dopt);
	switch (pt_diff_run(&dopt)) {
	case PT_DIFF_OK: return EXIT_OK;
	case PT_DIFF_BAD_INPUT: return EXIT_USAGE;
	case PT_DIFF_OUTPUT: return EXIT_OUTPUT;
	case PT_DIFF_GREW: return EXIT_MAX_GROWTH;
	default: return EXIT_FAIL;
	}
}

/* --compare-env: each run is a child peaktrace with the same options (but these) before the
 * command. */
static int run_compare(struct pt_options *opt, int argc, char **argv)
{
	char **opts = calloc(argc, sizeof(*opts));
	int nopts = 0, i, cmd_at = (int)(opt->cmd - argv), code;

	if (!opts)
		return EXIT_FAIL;
	for (i = 1; i < cmd_at; i++) {
		if (!strcmp(argv[i], "--"))
			continue;
		if (!strcmp(argv[i], "--compare-env")) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "--compare-env=", 14) || !strncmp(argv[i], "--compare-untraced=", 19))
			continue;
		if (!strcmp(argv[i], "--compare-untraced")) {
			i++;
			continue;
		}
		opts[nopts++] = argv[i];
	}
	code = pt_compare_run("/proc/self/exe", opts, nopts, opt->cmd,
			      opt->outdir ? opt->outdir : "peaktrace-compare", opt->compare, opt->ncompare,
			      opt->compare_untraced, opt->duration);
	free(opts);
	return code;
}

/* --check-kernel: the table and the verdict, nothing traced. */
static int check_kernel(void)
{
	pt_kfeat_set_thorough(true);
	switch (pt_kfeat_print(stdout, pt_kfeats())) {
	case PT_KV_CAN_RUN: return EXIT_OK;
	case PT_KV_CANNOT_RUN: return EXIT_BPF;
	default: return pt_kfeats()->pretend_error[0] ? EXIT_USAGE : EXIT_PERM;
	}
}

/* A kernel without what the BPF programs need: one line naming what it lacks, before anything
 * is started or loaded, never the verifier's log of the first program that needs it. */
static int kernel_gate(void)
{
	char line[1024];
	int n = pt_kfeat_refusal(pt_kfeats(), line, sizeof(line));

	if (n) {
		fprintf(stderr, "peaktrace: %s\n", line);
		return n < 0 ? EXIT_USAGE : EXIT_BPF;
	}
	/* Not probed (no BTF to read, tracefs not mountable): the load decides, said once. */
	if ((n = pt_kfeat_unknown(pt_kfeats(), line, sizeof(line))))
		fprintf(stderr, "peaktrace: warning: the kernel check could not tell whether this kernel has "
				"%s; loading anyway (`peaktrace --check-kernel` says why)\n", line);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	struct pt_options opt;
	struct pt_session *s;
	int code;

	/* Before any thread: the poll loops wake on SIGCHLD through a signalfd (util/wake.h). */
	pt_sigchld_block();
	if (argc > 1 && strcmp(argv[1], "diff") == 0)
		return run_diff(argc, argv);
	pt_cli_parse(argc, argv, &opt);
	if (opt.check_kernel)
		return check_kernel();
	/* An architecture not fully ported (user/arch/arch.c) traces nothing rather than wrongly. */
	if (pt_arch_refuse(stderr))
		return EXIT_UNSUPPORTED;
	if ((opt.follow || opt.npids > 1) && !opt.outdir)
		opt.outdir = "peaktrace-sandbox";   /* a report directory per process */
	if ((code = pt_preflight(&opt)) != EXIT_OK || (code = kernel_gate()) != EXIT_OK)
		return code;
	if (opt.follow || opt.npids > 1)
		return pt_follow_run(&opt, argc, argv);
	if (opt.ncompare && !opt.compare_child)
		return run_compare(&opt, argc, argv);

	s = pt_session_new(&opt);
	if (!s)
		return EXIT_FAIL;
	if ((code = pt_session_find_target(s)) != EXIT_OK ||
	    (code = pt_session_load(s)) != EXIT_OK ||
	    (code = pt_session_attach(s)) != EXIT_OK ||
	    (code = pt_session_start(s)) != EXIT_OK)
		goto cleanup;
	pt_session_poll(s);
	pt_session_stop(s);
	if ((code = pt_session_collect(s)) != EXIT_OK)
		goto cleanup;
	code = pt_session_report(s);

cleanup:
	return pt_session_end(s, code);
}
