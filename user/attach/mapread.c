// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* mapread.c — reading the BPF maps back once tracing stops. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

/* Up to cnt records from key first on, by batches (one syscall per chunk where the kernel has
 * BPF_MAP_LOOKUP_BATCH), else one lookup each. Returns how many were read, or -errno. */
static int read_chunk(int fd, uint32_t first, uint32_t cnt, uint32_t *keys, struct pt_stack_rec *vals)
{
	uint32_t in = first, out = 0, got = cnt, k;
	int err;

	err = bpf_map_lookup_batch(fd, first ? &in : NULL, &out, keys, vals, &got, NULL);
	if ((!err || err == -ENOENT) && got == cnt) {
		for (k = 0; k < got; k++)
			if (keys[k] != first + k)
				break;
		if (k == got)
			return (int)got;
	}
	for (k = 0; k < cnt; k++) {
		uint32_t key = first + k;

		if (bpf_map_lookup_elem(fd, &key, &vals[k]))
			return -errno;
	}
	return (int)cnt;
}

#define STACK_CHUNK 512

int pt_stack_table_read(struct bpf_map *m, uint32_t n, struct pt_stack_table *t)
{
	struct pt_stack_rec *vals = malloc(STACK_CHUNK * sizeof(*vals));
	uint32_t *keys = malloc(STACK_CHUNK * sizeof(*keys));
	size_t cap = 0, used = 0;
	uint32_t k = 0, j;
	int got, err = 0;

	memset(t, 0, sizeof(*t));
	t->off = malloc(((size_t)n + 1) * sizeof(*t->off));
	if (!vals || !keys || !t->off) {
		err = -ENOMEM;
		goto out;
	}
	while (k < n) {
		got = read_chunk(bpf_map__fd(m), k, n - k < STACK_CHUNK ? n - k : STACK_CHUNK, keys, vals);
		if (got < 0) {
			err = got;
			goto out;
		}
		for (j = 0; j < (uint32_t)got; j++, k++) {
			uint32_t nr = vals[j].nr < PT_MAX_FRAMES ? vals[j].nr : PT_MAX_FRAMES;

			if (used + 2 + nr > cap) {
				size_t nc = cap ? cap * 2 : 4096;
				uint64_t *w = realloc(t->w, nc * sizeof(*w));

				if (!w) {
					err = -ENOMEM;
					goto out;
				}
				t->w = w;
				cap = nc;
			}
			t->off[k] = used;
			t->w[used++] = vals[j].hash;
			t->w[used++] = nr | (uint64_t)vals[j].py_nr << 32;
			memcpy(&t->w[used], vals[j].pcs, nr * sizeof(uint64_t));
			used += nr;
		}
	}
	t->n = n;
	/* Give back the doubling's slack: with 100k+ stacks it is megabytes. */
	if (used && used < cap) {
		uint64_t *w = realloc(t->w, used * sizeof(*w));

		if (w)
			t->w = w;
	}
out:
	free(vals);
	free(keys);
	if (err)
		pt_stack_table_free(t);
	return err;
}

void pt_stack_table_get(const struct pt_stack_table *t, uint32_t k, struct pt_stack_rec *out)
{
	const uint64_t *w = &t->w[t->off[k]];
	uint32_t nr = (uint32_t)w[1];

	memset(out, 0, sizeof(*out));
	out->hash = w[0];
	out->nr = nr;
	out->py_nr = (uint32_t)(w[1] >> 32);
	memcpy(out->pcs, &w[2], nr * sizeof(uint64_t));
}

uint32_t pt_stack_table_nr(const struct pt_stack_table *t, uint32_t k)
{
	return (uint32_t)t->w[t->off[k] + 1];
}

uint32_t pt_stack_table_py_nr(const struct pt_stack_table *t, uint32_t k)
{
	return (uint32_t)(t->w[t->off[k] + 1] >> 32);
}

void pt_stack_table_free(struct pt_stack_table *t)
{
	free(t->w);
	free(t->off);
	memset(t, 0, sizeof(*t));
}
