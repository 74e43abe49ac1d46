/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* mapread.h — reading the BPF maps back once tracing stops. */
#ifndef PEAKTRACE_MAPREAD_H
#define PEAKTRACE_MAPREAD_H

#include <stddef.h>
#include <stdint.h>

struct peaktrace_bpf;
struct bpf_map;

/* The error counters summed over CPUs: out holds PT_ERR_COUNT. */
void pt_read_errors(struct peaktrace_bpf *skel, uint64_t *out);
/* Entries [0, n) of an array map, malloc'd; NULL on failure. */
void *pt_map_copy(struct bpf_map *m, uint32_t n);
/* Entries [first, first + cnt) of the array map fd into vals (vsz bytes each), by one batch
 * lookup where the kernel has it, else one lookup each; keys holds cnt. cnt or -errno. */
int pt_map_read_range(int fd, uint32_t first, uint32_t cnt, uint32_t *keys, void *vals, size_t vsz);
/* Map the BPF_F_MMAPABLE array map fd (n values of vsz bytes) read-only, so pt_map_read_range
 * copies from memory instead of asking the kernel: 115k stack counters in 0.7 ms against 85 ms
 * by system calls here, a read made twice at every invocation's end. 0 or -errno (reads then
 * take the system call path). pt_map_munmap before the map is closed. */
int pt_map_mmap(int fd, size_t vsz, uint32_t n);
void pt_map_munmap(int fd);
/* Bytes of maps mapped so: the kernel maps every page at once, so they count in our RSS (the
 * same pages as the map's kernel memory, not more memory). */
uint64_t pt_map_mapped_bytes(void);

struct pt_stack_rec;

/* The kernel's stack table, entries [0, n), read from the map through a window of a few
 * hundred records: readers go through it in index order, so the tracer never holds a copy
 * of the whole table (536 bytes a stack: 70 MB at 131k stacks). The map must stay open and
 * unchanged (tracing stopped) while it is read. */
struct pt_stack_window;
struct pt_stack_table {
	int fd;
	uint32_t n;
	struct pt_stack_window *win;
};

int pt_stack_table_read(struct bpf_map *m, uint32_t n, struct pt_stack_table *t);
/* Record k, whole; one that cannot be read comes back empty (nr 0: "[unknown stack]") and is
 * counted in pt_stack_table_failed. k must be < t->n. */
void pt_stack_table_get(const struct pt_stack_table *t, uint32_t k, struct pt_stack_rec *out);
/* Record k's nr and py_nr. */
uint32_t pt_stack_table_nr(const struct pt_stack_table *t, uint32_t k);
uint32_t pt_stack_table_py_nr(const struct pt_stack_table *t, uint32_t k);
uint64_t pt_stack_table_failed(const struct pt_stack_table *t);

struct pt_py_stack;
/* The Python words of stack idx, whose record is rec, into out (rec->py_nr of them): from the
 * chunk pool py_chunks_fd (rec->py_at), else the hash map py_fd. 0, or -1 (none, or unread). */
int pt_py_words_read(int py_chunks_fd, int py_fd, uint32_t idx, const struct pt_stack_rec *rec,
		     struct pt_py_stack *out);
void pt_stack_table_free(struct pt_stack_table *t);

#endif
