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

#endif
