/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* file.h — the one whole-file reader (a leaf: includes nothing of peaktrace). */
#ifndef PEAKTRACE_UTIL_FILE_H
#define PEAKTRACE_UTIL_FILE_H
#include <stddef.h>
#include <stdint.h>

/* The first max bytes at most of path, NUL-terminated (the NUL is not counted in *len; len may
 * be NULL). Opened O_NONBLOCK, so a FIFO at the path never blocks the read. NULL with errno set
 * when the file cannot be opened or memory runs out; a read error ends the data where it
 * happened. Caller frees. */
char *pt_read_file(const char *path, size_t max, size_t *len);
/* The same from an open fd, which it closes (for a file opened with target/proc.h's
 * pt_target_open). */
char *pt_read_fd(int fd, size_t max, size_t *len);

/* The kernel memory a BPF map (its fd) takes, as the kernel charges it (fdinfo "memlock"; for
 * a map not preallocated, its most); 0 when unknown. */
uint64_t pt_map_memlock(int fd);

#endif
