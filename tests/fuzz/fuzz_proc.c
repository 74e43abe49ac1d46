// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_proc — what user/target/proc.h parses of the target:
 *   - environ: pt_environ_next / pt_environ_get over a struct pt_environ built on the input the
 *     way pt_environ_read leaves it (len bytes, then a NUL that is not counted);
 *   - status: the one part of /proc/PID/status a process chooses is its Name (comm), so the
 *     harness gives itself the input's first bytes as comm (PR_SET_NAME) and reads its own
 *     status: no comm may hide or fake another field (pt_proc_status_field), and pt_proc_comm
 *     returns it.
 */
#include <sys/prctl.h>
#include "target/proc.h"
#include "fuzz.h"

static const char *const names[] = {
	"LD_PRELOAD", "MALLOC_ARENA_MAX", "GLIBC_TUNABLES", "AWS_LAMBDA_RUNTIME_API", "A", "",
};

static void fuzz_environ(const uint8_t *data, size_t size)
{
	struct pt_environ e = { fuzz_str(data, size), size };
	const char *p, *prev = NULL;
	size_t count = 0;

	if (!e.buf)
		return;
	for (p = pt_environ_next(&e, NULL); p; prev = p, p = pt_environ_next(&e, p)) {
		/* Every entry lies inside the data and ends with a NUL of the data. */
		FUZZ_ASSERT(p >= e.buf && p < e.buf + e.len);
		FUZZ_ASSERT(p + strlen(p) < e.buf + e.len);
		FUZZ_ASSERT(!prev || p == prev + strlen(prev) + 1);
		count++;
	}
	FUZZ_ASSERT(count <= size);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = pt_environ_get(&e, names[i]);

		FUZZ_ASSERT(!v || (v > e.buf && v <= e.buf + e.len));
	}
	free(e.buf);
}

static void fuzz_status(const uint8_t *data, size_t size)
{
	char comm[17] = { 0 }, got[64], v[512];
	size_t n = size < 16 ? size : 16;

	memcpy(comm, data, n);
	if (prctl(PR_SET_NAME, (unsigned long)comm, 0, 0, 0))
		return;
	FUZZ_ASSERT(pt_proc_status_field(getpid(), "Name", v, sizeof(v)) == 0);
	FUZZ_ASSERT(pt_proc_status_field(getpid(), "Pid", v, sizeof(v)) == 0 && atoi(v) == getpid());
	FUZZ_ASSERT(pt_proc_status_field(getpid(), "NSpid", v, sizeof(v)) == 0);
	FUZZ_ASSERT(pt_proc_status_bytes(getpid(), "VmRSS") > 0);
	pt_proc_comm(getpid(), got, sizeof(got));
	/* comm as set, up to its first newline (the one pt_proc_comm cuts). */
	comm[15] = 0;
	comm[strcspn(comm, "\n")] = 0;
	FUZZ_ASSERT(!strcmp(got, comm));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_environ(data, size);
	fuzz_status(data, size);
	return 0;
}
