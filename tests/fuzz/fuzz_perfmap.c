// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_perfmap — the perf map a JIT writes (/tmp/perf-PID.map, inside the target's root):
 * pt_perfmap_parse_line (user/symbolize/symbolize.h) on each line as perfmap_read cuts them
 * (fgets into 1024 bytes, a line without its newline ends the read, the newline cut), and the
 * names through pt_demangle (ELF and JIT names alike are the target's).
 */
#include <stdio.h>
#include "symbolize/symbolize.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[1024];
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, len;
		const char *name;
		char *d;

		if (!strchr(line, '\n'))
			break;
		line[strcspn(line, "\n")] = 0;
		if (pt_perfmap_parse_line(line, &start, &len, &name))
			continue;
		FUZZ_ASSERT(len != 0);
		FUZZ_ASSERT(name > line && name <= line + strlen(line));
		d = pt_demangle(name);
		free(d);
	}
	fclose(f);
	return 0;
}
