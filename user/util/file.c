// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* file.c — the one whole-file reader. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "util/file.h"

char *pt_read_file(const char *path, size_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return NULL;
	return pt_read_fd(fd, max, len);
}

char *pt_read_fd(int fd, size_t max, size_t *len)
{
	size_t n = 0, cap = 4096;
	char *buf, *nb;
	int saved;

	buf = malloc(cap + 1);
	while (buf && n < max) {
		ssize_t r;

		if (n == cap) {
			/* Doubling: /proc files report size 0, so the size is learnt by reading. */
			cap = cap * 2 > max ? max : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		r = read(fd, buf + n, (cap < max ? cap : max) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	saved = errno;
	close(fd);
	if (!buf) {
		errno = ENOMEM;
		return NULL;
	}
	buf[n] = 0;
	if (len)
		*len = n;
	errno = saved;
	return buf;
}

uint64_t pt_map_memlock(int fd)
{
	char path[64], line[128];
	uint64_t v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %" SCNu64, &v) == 1)
			break;
	fclose(f);
	return v;
}
