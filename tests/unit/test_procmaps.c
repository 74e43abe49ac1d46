// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_procmaps — maps parsing and allocator discovery against real processes. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "check.h"
#include "target/procmaps.h"
#include "target/proc.h"

static const char fixture[] =
	"55d0c0a00000-55d0c0a02000 r--p 00000000 fe:00 247134                     /usr/bin/cat\n"
	"55d0c0a02000-55d0c0a07000 r-xp 00002000 fe:00 247134                     /usr/bin/cat\n"
	"55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f0000000000-7f0000001000 r-xp 00001000 08:01 1234                       /opt/my app/lib foo.so\n"
	"7f0000002000-7f0000003000 r-xp 00000000 103:02 999                       /tmp/x.so (deleted)\n"
	"7f0000004000-7f0000005000 rw-p 00000000 00:00 0 \n"
	"7f0000006000-7f0000007000 rw-p 00000000 00:00 0\n"
	"7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

static char *write_temp(const char *text)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/pt-maps-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		unlink(path);
		return NULL;
	}
	close(fd);
	return path;
}

static void test_parse_fixture(void)
{
	struct pt_maps m;
	char *path = write_temp(fixture);
	int err;

	CHECK(path != NULL, "fixture written");
	if (!path)
		return;
	err = pt_maps_parse_file(path, &m);
	unlink(path);
	CHECK_EQ_U64(err, 0, "fixture parses");
	if (err)
		return;
	CHECK_EQ_U64(m.n, 9, "fixture: all lines");
	if (m.n != 9)
		goto out;
	CHECK_EQ_U64(m.m[0].start, 0x55d0c0a00000ULL, "start");
	CHECK_EQ_U64(m.m[0].end, 0x55d0c0a02000ULL, "end");
	CHECK_STR(m.m[1].perms, "r-xp", "perms");
	CHECK_EQ_U64(m.m[1].pgoff, 0x2000, "pgoff");
	CHECK_EQ_U64(m.m[1].inode, 247134, "inode");
	CHECK_EQ_U64(m.m[1].dev_major, 0xfe, "dev major");
	CHECK_EQ_U64(m.m[1].dev_minor, 0, "dev minor");
	CHECK_STR(m.m[1].path, "/usr/bin/cat", "file path");
	CHECK_STR(m.m[2].path, "[heap]", "[heap]");
	CHECK_STR(m.m[3].path, "/opt/my app/lib foo.so", "path with spaces kept whole");
	CHECK_STR(m.m[4].path, "/tmp/x.so", "(deleted) stripped");
	CHECK(m.m[4].deleted, "(deleted) flagged");
	CHECK(!m.m[3].deleted, "normal file not flagged");
	CHECK_EQ_U64(m.m[4].dev_major, 0x103, "3-digit major");
	CHECK_STR(m.m[5].path, "", "anonymous with trailing blank");
	CHECK_STR(m.m[6].path, "", "anonymous without trailing blank");
	CHECK_STR(m.m[7].path, "[stack]", "[stack]");
	CHECK_EQ_U64(m.m[8].end, 0xffffffffff601000ULL, "64-bit end");
out:
	pt_maps_free(&m);
	CHECK(m.m == NULL && m.n == 0, "maps freed and cleared");
}

static void test_parse_bad(void)
{
	static const char *const bad[] = {
		"garbage\n",
		"7f0000000000-7f0000001000 r-xp 00001000 08:01\n",
		"7f0000001000-7f0000000000 r-xp 00000000 08:01 1 /end/before/start\n",
		"7f0000000000-7f0000001000 r-xpx 00000000 08:01 1 /long/perms\n",
	};
	struct pt_maps m;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *path = write_temp(bad[i]);
		int err;

		if (!path)
			continue;
		err = pt_maps_parse_file(path, &m);
		unlink(path);
		CHECK(err == -EINVAL && m.n == 0 && m.m == NULL, "malformed line %zu rejected (%d)", i, err);
	}
	CHECK(pt_maps_parse_file("/nonexistent/maps", &m) == -ENOENT, "missing file: -ENOENT");
	CHECK(pt_maps_read(0, &m) == -EINVAL, "pid 0: -EINVAL");
}

static void test_self_maps(void)
{
	struct pt_maps m;
	uintptr_t here = (uintptr_t)&test_self_maps;
	int err, i, found = 0;

	err = pt_maps_read(getpid(), &m);
	CHECK_EQ_U64(err, 0, "own maps readable");
	if (err)
		return;
	for (i = 0; i < m.n; i++)
		if (here >= m.m[i].start && here < m.m[i].end)
			found = m.m[i].perms[2] == 'x' && strstr(m.m[i].path, "test_procmaps") != NULL;
	CHECK(found, "own code is in an executable mapping of test_procmaps");
	pt_maps_free(&m);
}

static void test_target_path(void)
{
	char *p = pt_target_path(123, "/usr/lib/x.so");

	CHECK_STR(p, "/proc/123/root/usr/lib/x.so", "pt_target_path");
	free(p);
	p = pt_target_path(0, "/usr/lib/x.so");
	CHECK_STR(p, "/usr/lib/x.so", "pt_target_path without pid");
	free(p);
	CHECK(pt_target_path(1, NULL) == NULL, "pt_target_path(NULL)");
}

/* The file bytes at fn_offset must be the bytes the process executes for fn. */
static int bytes_match(const char *open_path, uint64_t off, const void *addr)
{
	uint8_t file[16];
	int fd = open(open_path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = pread(fd, file, sizeof(file), (off_t)off);
	close(fd);
	return n == (ssize_t)sizeof(file) && memcmp(file, addr, sizeof(file)) == 0;
}

static int under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload");
}

static void test_self_allocator(void)
{
	static const char *const fns[] = { "malloc", "free", "calloc", "realloc", "posix_memalign" };
	static const enum pt_alloc_fn ids[] = { PT_FN_MALLOC, PT_FN_FREE, PT_FN_CALLOC,
						PT_FN_REALLOC, PT_FN_POSIX_MEMALIGN };
	struct pt_allocator a;
	size_t i;
	int err;

	err = pt_find_allocator(getpid(), &a);
	CHECK_EQ_U64(err, 0, "own allocator found");
	if (err)
		return;
	printf("# allocator: %s (%s) via %s\n", a.path, pt_allocator_kind_name(a.kind), a.open_path);
	if (under_valgrind()) {
		/* valgrind's preload replaces malloc only through redirections, not
		 * exported symbols, so libc still is what we find. */
		printf("# running under valgrind\n");
	}
	CHECK(strstr(a.path, "libc.so") != NULL, "allocator is libc (%s)", a.path);
	CHECK_EQ_U64(a.kind, PT_ALLOC_GLIBC, "kind glibc");
	CHECK(strncmp(a.open_path, "/proc/", 6) == 0, "opened through /proc/PID/root");
	CHECK(a.fn_offset[PT_FN_MALLOC] && a.fn_offset[PT_FN_FREE], "malloc/free offsets");
	CHECK_STR(a.fn_symbol[PT_FN_FREE], "free", "free symbol name");
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *addr = dlsym(RTLD_DEFAULT, fns[i]);

		CHECK(addr && bytes_match(a.open_path, a.fn_offset[ids[i]], addr),
		      "%s: file bytes at offset 0x%" PRIx64 " == code in memory", fns[i],
		      a.fn_offset[ids[i]]);
	}
	/* Debian's libc: first PT_LOAD at offset 0 vaddr 0, so offset == vaddr. */
	CHECK_EQ_U64(a.fn_offset[PT_FN_FREE], a.fn_vaddr[PT_FN_FREE], "libc: offset == vaddr");
	/* aligned_alloc and memalign are one function in glibc: same offset. */
	CHECK(a.fn_offset[PT_FN_ALIGNED_ALLOC] == a.fn_offset[PT_FN_MEMALIGN],
	      "aligned_alloc and memalign share an address");
	pt_allocator_free(&a);
}

static void test_missing_pid(void)
{
	struct pt_allocator a;
	struct pt_maps m;
	FILE *f = fopen("/proc/2/comm", "r");
	char comm[32] = "";
	int err;

	/* pid_max can be at most 2^22: this pid cannot exist. */
	err = pt_find_allocator(1 << 30, &a);
	CHECK(err == -ESRCH, "nonexistent pid: -ESRCH (%d)", err);
	err = pt_maps_read(1 << 30, &m);
	CHECK(err == -ESRCH, "maps of nonexistent pid: -ESRCH (%d)", err);
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	if (strncmp(comm, "kthreadd", 8) == 0) {
		err = pt_find_allocator(2, &a);
		CHECK(err == -EINVAL, "kernel thread (empty maps): -EINVAL (%d)", err);
	} else {
		printf("ok - skipped: pid 2 is not kthreadd here\n");
	}
}

static void test_find_in(void)
{
	static const char *const libc = "/lib/x86_64-linux-gnu/libc.so.6";
	static const char *const dbg = "/lib/x86_64-linux-gnu/libc_malloc_debug.so.0";
	const char *p1[] = { "/bin/true", libc };
	const char *p2[] = { dbg, libc };
	const char *p3[] = { "/nonexistent/lib.so" };
	const char *p4[] = { "/etc/hostname", "/bin/true" };
	struct pt_allocator a;
	int err;

	err = pt_find_allocator_in(p1, 2, &a);
	CHECK(err == 0 && strcmp(a.path, libc) == 0, "exe without malloc, then libc: libc");
	pt_allocator_free(&a);
	if (access(dbg, R_OK) == 0) {
		err = pt_find_allocator_in(p2, 2, &a);
		CHECK(err == 0 && strcmp(a.path, dbg) == 0, "first definer wins (libc_malloc_debug)");
		CHECK(err == 0 && a.fn_offset[PT_FN_MALLOC] != 0, "non-default version malloc@GLIBC counts");
		pt_allocator_free(&a);
	}
	err = pt_find_allocator_in(p3, 1, &a);
	CHECK(err == -ENOENT, "missing file: -ENOENT (%d)", err);
	err = pt_find_allocator_in(p4, 2, &a);
	CHECK(err == -ENOENT, "non-ELF and no malloc: -ENOENT (%d)", err);
	CHECK(a.path == NULL, "out zeroed on failure");
}

/*
 * A child with LD_PRELOAD=libc_malloc_debug.so.0: the preloaded library is mapped
 * ABOVE libc (top-down mmap), so address order would pick libc. ld.so's order
 * picks the preload.
 */
static void test_preload_child(void)
{
	static const char *const dbg = "/lib/x86_64-linux-gnu/libc_malloc_debug.so.0";
	struct pt_allocator a;
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	pid_t pid;
	int i, err = -1, status;

	if (access(dbg, R_OK) != 0 || access("/bin/sleep", X_OK) != 0) {
		printf("ok - skipped: no %s\n", dbg);
		return;
	}
	pid = fork();
	if (pid == 0) {
		char *argv[] = { "sleep", "5", NULL };
		char env[128];
		char *envp[] = { env, NULL };

		snprintf(env, sizeof(env), "LD_PRELOAD=%s", dbg);
		execve("/bin/sleep", argv, envp);
		_exit(127);
	}
	CHECK(pid > 0, "child started");
	if (pid <= 0)
		return;
	/* Wait until ld.so has mapped libc (the last needed object). */
	for (i = 0; i < 200; i++) {
		err = pt_find_allocator(pid, &a);
		if (err == 0 && strstr(a.path, "malloc_debug"))
			break;
		if (err == 0)
			pt_allocator_free(&a);
		nanosleep(&ts, NULL);
	}
	CHECK(err == 0 && strstr(a.path, "libc_malloc_debug"), "preloaded allocator wins: %s",
	      err == 0 ? a.path : "(error)");
	if (err == 0) {
		struct pt_maps m;
		uint64_t lo_dbg = UINT64_MAX, lo_libc = UINT64_MAX;

		if (pt_maps_read(pid, &m) == 0) {
			for (i = 0; i < m.n; i++) {
				if (strstr(m.m[i].path, "libc_malloc_debug") && m.m[i].start < lo_dbg)
					lo_dbg = m.m[i].start;
				if (strstr(m.m[i].path, "/libc.so") && m.m[i].start < lo_libc)
					lo_libc = m.m[i].start;
			}
			printf("# preload at 0x%" PRIx64 ", libc at 0x%" PRIx64 ": %s\n", lo_dbg, lo_libc,
			       lo_dbg > lo_libc ? "address order would have picked libc" : "");
			pt_maps_free(&m);
		}
		CHECK_EQ_U64(a.kind, PT_ALLOC_GLIBC, "libc_malloc_debug is glibc-backed");
		pt_allocator_free(&a);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

static void test_status_bytes(void)
{
	uint64_t rss = pt_proc_status_bytes(getpid(), "VmRSS"), hwm = pt_proc_status_bytes(getpid(), "VmHWM");

	CHECK(rss > 0 && rss % 1024 == 0, "VmRSS of this process in bytes (%llu)", (unsigned long long)rss);
	CHECK(hwm >= rss, "VmHWM >= VmRSS (%llu >= %llu)", (unsigned long long)hwm, (unsigned long long)rss);
	CHECK_EQ_U64(pt_proc_status_bytes(getpid(), "VmRS"), 0, "a field name's prefix is not the field");
	CHECK_EQ_U64(pt_proc_status_bytes(getpid(), "NoSuchField"), 0, "an absent field is 0");
	CHECK_EQ_U64(pt_proc_status_bytes(-1, "VmRSS"), 0, "no such process is 0");
}

int main(void)
{
	test_parse_fixture();
	test_parse_bad();
	test_status_bytes();
	test_self_maps();
	test_target_path();
	test_self_allocator();
	test_missing_pid();
	test_find_in();
	test_preload_child();
	return CHECK_DONE();
}
