// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_maps — /proc/PID/maps parsing (pt_maps_parse_file, user/target/procmaps.h) on a memfd
 * opened through its /proc/self/fd path. A target names its mappings' paths itself (memfd_create,
 * files it creates), so the path part is hostile; the rest is the kernel's format, fuzzed anyway.
 */
#include <errno.h>
#include <stdio.h>
#include "target/procmaps.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_maps m;
	char path[64];
	int fd = fuzz_memfd(data, size), err;

	if (fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err = pt_maps_parse_file(path, &m);
	close(fd);
	if (err) {
		FUZZ_ASSERT(err < 0 && m.n == 0 && m.m == NULL);
		return 0;
	}
	for (int i = 0; i < m.n; i++) {
		FUZZ_ASSERT(m.m[i].start <= m.m[i].end);
		FUZZ_ASSERT(strlen(m.m[i].perms) == 4);
		FUZZ_ASSERT(m.m[i].path != NULL);
		FUZZ_ASSERT(!m.m[i].deleted || m.m[i].path[0] == '/');
		/* The path is what the line held: no newline survives into it. */
		FUZZ_ASSERT(!strchr(m.m[i].path, '\n'));
	}
	pt_maps_free(&m);
	return 0;
}
