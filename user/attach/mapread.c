// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* mapread.c — reading the BPF maps back once tracing stops. */
#include <stdlib.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "bpf/peaktrace.h"
#include "peaktrace.skel.h"
#include "attach/mapread.h"

void pt_read_errors(struct peaktrace_bpf *skel, uint64_t *out)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(skel->maps.errors);
	uint64_t *vals;
	uint32_t k;
	int c;

	if (ncpu <= 0)
		return;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return;
	for (k = 0; k < PT_ERR_COUNT; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(fd, &k, vals))
			continue;
		for (c = 0; c < ncpu; c++)
			out[k] += vals[c];
	}
	free(vals);
}

/*
 * Copy entries [0, n) of an array map. Not mmap: mapping a BPF array inserts every page of it at
 * once, which would count the whole table (26 MiB at the default sizes) in the tracer's RSS.
 */
void *pt_map_copy(struct bpf_map *m, uint32_t n)
{
	size_t vsz = bpf_map__value_size(m);
	char *buf = calloc(n ? n : 1, vsz);
	int fd = bpf_map__fd(m);
	uint32_t k;

	if (!buf)
		return NULL;
	for (k = 0; k < n; k++) {
		if (bpf_map_lookup_elem(fd, &k, buf + (size_t)k * vsz)) {
			free(buf);
			return NULL;
		}
	}
	return buf;
}
