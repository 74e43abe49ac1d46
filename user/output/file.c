// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * file.c — the text report's frame lines and the output files every writer writes into.
 */
#include <inttypes.h>
#include <stdio_ext.h>
#include <string.h>
#include "util/outdir.h"
#include "output/output.h"

void pt_frame_text(FILE *f, const struct pt_profile *p, uint32_t fi)
{
	const struct pt_frame *fr = &p->frames[fi];
	const char *mod = fr->module && *fr->module ? fr->module : NULL;
	const char *base = mod ? strrchr(mod, '/') : NULL;

	base = base ? base + 1 : mod;
	if (fr->func && *fr->func && fr->func[0] != '[' && !fr->addr)
		/* A Python frame (module:function:line): no address. */
		fprintf(f, "        %s  (%s)\n", fr->func, base ? base : "?");
	else if (fr->func && *fr->func && fr->func[0] != '[' && fr->file && fr->line)
		/* DWARF's file:line of the call, its base name: the JSON has the path. */
		fprintf(f, "        %s+0x%x  (%s)  %s:%" PRIu32 "\n", fr->func, fr->func_off,
			base ? base : "?", strrchr(fr->file, '/') ? strrchr(fr->file, '/') + 1 : fr->file,
			fr->line);
	else if (fr->func && *fr->func && fr->func[0] != '[')
		/* No module: JIT code the runtime's perf map names. */
		fprintf(f, "        %s+0x%x  (%s)\n", fr->func, fr->func_off,
			base ? base : fr->kind == PT_FK_JIT ? "JIT" : "?");
	else if (fr->func && fr->func[0] == '[')
		fprintf(f, "        %s\n", fr->func);
	else
		fprintf(f, "        0x%" PRIx64 "  (%s+0x%" PRIx64 ")\n", fr->addr, base ? base : "?",
			fr->offset);
}

/*
 * Once the timeline's sampler thread (timeline/timeline.c) has run, glibc counts the process as
 * multi-threaded for good and locks a stream at every putc, fputs and fwrite: at 2^17 stacks
 * that was ~40% of the folded and speedscope writers' time (tens of millions of calls). Each
 * output stream is opened, written and closed by one thread, so the locking is ours to skip.
 */
FILE *pt_output_fopen(const char *path)
{
	FILE *f = pt_out_fopen(path);

	if (!f)
		return NULL;
	setvbuf(f, NULL, _IOFBF, 1 << 20);	/* few large writes: outputs reach tens of MB */
	__fsetlocking(f, FSETLOCKING_BYCALLER);
	return f;
}
