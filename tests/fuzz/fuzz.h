/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * fuzz.h — what the libFuzzer harnesses share: the input as a file (a memfd) and as a
 * NUL-terminated string.
 */
#ifndef PEAKTRACE_FUZZ_H
#define PEAKTRACE_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

/* The bytes as a file, read from the start: an fd (caller closes) or -1. */
static inline int fuzz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < size) {
		ssize_t n = write(fd, data + off, size - off);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A malloc'd copy with a NUL after the last byte (the input may hold NULs of its own). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		memcpy(s, data, size);
		s[size] = 0;
	}
	return s;
}

/* Abort with a message: a broken invariant is a finding like a crash. */
#define FUZZ_ASSERT(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #c); abort(); } } while (0)
#endif
