// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_smaps — /proc/PID/smaps parsing (pt_smaps_parse, user/arenas/arenas.h) as the arenas
 * reader calls it: the text NUL-terminated, max = newlines + 1; then the heap attribution over
 * what it parsed. Mapping names are the target's (memfd names, file paths).
 */
#include "arenas/arenas.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size);
	struct pt_arena_row rows[2] = { { .main = true }, { .addr = 0x7f0000000000ull } };
	struct pt_smap *m;
	uint64_t *w;
	int max = 1, n;

	if (!text)
		return 0;
	for (const char *p = text; (p = strchr(p, '\n')); p++)
		max++;
	m = calloc(max, sizeof(*m));
	w = calloc(max, sizeof(*w));
	if (m && w) {
		n = pt_smaps_parse(text, m, max);
		FUZZ_ASSERT(n >= 0 && n <= max);
		for (int i = 0; i < n; i++)
			w[i] = i & 1 ? 0x7f0000000000ull : 0;
		pt_arenas_attribute(rows, 2, m, n, w);
	}
	free(m);
	free(w);
	free(text);
	return 0;
}
