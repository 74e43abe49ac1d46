// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* mapread.c — reading the BPF maps back once tracing stops. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "bpf/peaktrace.h"
#include "peaktrace.skel.h"
#include "maps/mapread.h"

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
	uint32_t *keys = malloc(512 * sizeof(*keys));
	int fd = bpf_map__fd(m);
	uint32_t k = 0;

	if (!buf || !keys)
		goto fail;
	/* By batches where the kernel has them (one syscall per 512 entries, not one each). */
	while (k < n) {
		uint32_t cnt = n - k < 512 ? n - k : 512;
		int got = pt_map_read_range(fd, k, cnt, keys, buf + (size_t)k * vsz, vsz);

		if (got <= 0)
			goto fail;
		k += (uint32_t)got;
	}
	free(keys);
	return buf;
fail:
	free(keys);
	free(buf);
	return NULL;
}

/* Array maps user space has mapped (BPF_F_MMAPABLE), read by copying from the mapping. */
#define MAPPED_MAX 4
static struct {
	int fd;
	const char *base;
	size_t vsz;
	uint32_t n;
} mapped[MAPPED_MAX];

int pt_map_mmap(int fd, size_t vsz, uint32_t n)
{
	size_t len = (size_t)n * vsz, page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;
	int i;

	for (i = 0; i < MAPPED_MAX && mapped[i].base; i++)
		;
	if (i == MAPPED_MAX || !len)
		return -ENOSPC;
	p = mmap(NULL, (len + page - 1) / page * page, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	mapped[i].fd = fd;
	mapped[i].base = p;
	mapped[i].vsz = vsz;
	mapped[i].n = n;
	return 0;
}

uint64_t pt_map_mapped_bytes(void)
{
	uint64_t sum = 0;

	for (int i = 0; i < MAPPED_MAX; i++)
		if (mapped[i].base)
			sum += (uint64_t)mapped[i].n * mapped[i].vsz;
	return sum;
}

void pt_map_munmap(int fd)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (int i = 0; i < MAPPED_MAX; i++) {
		if (!mapped[i].base || mapped[i].fd != fd)
			continue;
		munmap((void *)mapped[i].base, ((size_t)mapped[i].n * mapped[i].vsz + page - 1) / page * page);
		mapped[i].base = NULL;
	}
}

int pt_map_read_range(int fd, uint32_t first, uint32_t cnt, uint32_t *keys, void *vals, size_t vsz)
{
	uint32_t in = first - 1, out = 0, got = cnt, k;
	int err;

	for (int i = 0; i < MAPPED_MAX; i++) {
		if (!mapped[i].base || mapped[i].fd != fd || mapped[i].vsz != vsz ||
		    first >= mapped[i].n || cnt > mapped[i].n - first)
			continue;
		memcpy(vals, mapped[i].base + (size_t)first * vsz, (size_t)cnt * vsz);
		for (k = 0; k < cnt; k++)
			keys[k] = first + k;
		return (int)cnt;
	}

	/* in_batch is the key before the batch (the kernel starts at its next key), NULL at 0. */
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

		if (bpf_map_lookup_elem(fd, &key, (char *)vals + (size_t)k * vsz))
			return -errno;
	}
	return (int)cnt;
}

static int read_chunk(int fd, uint32_t first, uint32_t cnt, uint32_t *keys, struct pt_stack_rec *vals)
{
	return pt_map_read_range(fd, first, cnt, keys, vals, sizeof(*vals));
}

#define STACK_CHUNK 512

struct pt_stack_window {
	uint32_t first, count;          /* records [first, first + count) are in rec */
	uint64_t failed;                /* records that could not be read */
	uint32_t failed_at;             /* 1 + the last one counted there */
	uint32_t keys[STACK_CHUNK];
	struct pt_stack_rec rec[STACK_CHUNK];
};

int pt_stack_table_read(struct bpf_map *m, uint32_t n, struct pt_stack_table *t)
{
	t->fd = bpf_map__fd(m);
	t->n = n;
	t->win = calloc(1, sizeof(*t->win));
	return t->win ? 0 : -ENOMEM;
}

/* The window holding record k, moved there if it is not. */
static const struct pt_stack_rec *window_at(const struct pt_stack_table *t, uint32_t k)
{
	struct pt_stack_window *w = t->win;
	uint32_t cnt;
	int got;

	if (k >= w->first && k - w->first < w->count)
		return &w->rec[k - w->first];
	cnt = t->n - k < STACK_CHUNK ? t->n - k : STACK_CHUNK;
	got = read_chunk(t->fd, k, cnt, w->keys, w->rec);
	if (got <= 0) {
		/* Unreadable: an empty record, counted; the next access tries again. */
		memset(&w->rec[0], 0, sizeof(w->rec[0]));
		w->first = k;
		w->count = 0;
		if (w->failed_at != k + 1)
			w->failed++;
		w->failed_at = k + 1;
		return &w->rec[0];
	}
	w->first = k;
	w->count = (uint32_t)got;
	return &w->rec[0];
}

void pt_stack_table_get(const struct pt_stack_table *t, uint32_t k, struct pt_stack_rec *out)
{
	*out = *window_at(t, k);
	if (out->nr > PT_MAX_FRAMES)
		out->nr = PT_MAX_FRAMES;
}

uint32_t pt_stack_table_nr(const struct pt_stack_table *t, uint32_t k)
{
	uint32_t nr = window_at(t, k)->nr;

	return nr < PT_MAX_FRAMES ? nr : PT_MAX_FRAMES;
}

uint32_t pt_stack_table_py_nr(const struct pt_stack_table *t, uint32_t k)
{
	return window_at(t, k)->py_nr;
}

int pt_py_words_read(int py_chunks_fd, int py_fd, uint32_t idx, const struct pt_stack_rec *rec,
		     struct pt_py_stack *out)
{
	uint32_t n = rec->py_nr < PT_MAX_PY_FRAMES ? rec->py_nr : PT_MAX_PY_FRAMES, c;
	uint32_t keys[PT_MAX_PY_FRAMES / PT_PY_CHUNK_WORDS];

	if (!n)
		return -1;
	if (!rec->py_at)
		return py_fd >= 0 && bpf_map_lookup_elem(py_fd, &idx, out) == 0 ? 0 : -1;
	if (py_chunks_fd < 0)
		return -1;
	/* The stack's chunks, consecutive from py_at (stack.bpf.h pt_py_pool_store), in one
	 * batch: the reader keeps pace with a burst of new stacks (a CPython import). */
	c = (n + PT_PY_CHUNK_WORDS - 1) / PT_PY_CHUNK_WORDS;
	return pt_map_read_range(py_chunks_fd, rec->py_at, c, keys, out->w, sizeof(struct pt_py_chunk)) ==
	       (int)c ? 0 : -1;
}

uint64_t pt_stack_table_failed(const struct pt_stack_table *t)
{
	return t->win ? t->win->failed : 0;
}

void pt_stack_table_free(struct pt_stack_table *t)
{
	free(t->win);
	t->win = NULL;
	t->n = 0;
}
