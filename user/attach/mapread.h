/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* mapread.h — reading the BPF maps back once tracing stops. */
#ifndef PEAKTRACE_MAPREAD_H
#define PEAKTRACE_MAPREAD_H

#include <stdint.h>

struct peaktrace_bpf;
struct bpf_map;

/* The error counters summed over CPUs: out holds PT_ERR_COUNT. */
void pt_read_errors(struct peaktrace_bpf *skel, uint64_t *out);
/* Entries [0, n) of an array map, malloc'd; NULL on failure. */
void *pt_map_copy(struct bpf_map *m, uint32_t n);

struct pt_stack_rec;

/* The kernel's stack table, entries [0, n), compacted: each record keeps only the program
 * counters it has (a record has room for PT_MAX_FRAMES; a 20-frame stack uses a third). */
struct pt_stack_table {
	uint64_t *w;            /* per record: hash, nr | py_nr << 32, pcs[nr] */
	uint64_t *off;          /* record k starts at w[off[k]] */
	uint32_t n;
};

int pt_stack_table_read(struct bpf_map *m, uint32_t n, struct pt_stack_table *t);
/* Record k, whole (pcs past nr zero); k must be < t->n. */
void pt_stack_table_get(const struct pt_stack_table *t, uint32_t k, struct pt_stack_rec *out);
/* Record k's nr and py_nr without copying it. */
uint32_t pt_stack_table_nr(const struct pt_stack_table *t, uint32_t k);
uint32_t pt_stack_table_py_nr(const struct pt_stack_table *t, uint32_t k);
void pt_stack_table_free(struct pt_stack_table *t);

#endif
