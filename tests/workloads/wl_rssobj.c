/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_rssobj — file-backed and shared-memory pages made resident in known objects, for the
 * rsskinds section (tests/sections/rsskinds.py). Each object's truth is the process's own
 * /proc/self/smaps "Rss:" of the mapping, read once everything is held (the RSS peak), written
 * to the log as "NAME BYTES" lines.
 *
 * Usage: wl_rssobj [--wait] LOG DIR
 *   scn_file_read     writes DIR/"wl_rssobj-ESC[31m.data" (16 MiB; an escape sequence in its
 *                     name, which reports must never print raw), maps it read-only, reads one
 *                     byte of every third page of its first 12 MiB (fault-around maps more:
 *                     the truth is the mapping's Rss)                       "file"
 *   scn_memfd_touch   memfd "ptcache", 6 MiB, MAP_SHARED, every page written "memfd"
 *   scn_devshm_touch  /dev/shm/pt-rssobj-PID, 3 MiB, MAP_SHARED, written    "devshm"
 *   scn_shared_anon   5 MiB MAP_SHARED|MAP_ANONYMOUS, written               "shanon"
 *   scn_sysv_touch    a SysV segment of 2 MiB (IPC_PRIVATE), written        "sysv"
 *   then "peak_file", "peak_shmem", "peak_anon" (RssFile, RssShmem, RssAnon of /proc/self/status)
 *   and "devshm_name" is not logged: the test knows the name from the PID ("pid PID").
 *   Releases: munmap of the file mapping and of the memfd mapping; then "end_file",
 *   "end_shmem". Exit 0 (the /dev/shm file is unlinked).
 * No stdio (wl_common.h): numbers are formatted by hand.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>

#include "wl_common.h"

#define MiB (1024UL * 1024UL)
#define PAGE 4096UL

static int log_fd = -1;
static char smaps[4 << 20];   /* touched once before the scenarios: its pages are no change */

static void put(const char *name, long v)
{
	char buf[64], num[24];
	int i = 0, n = 0;
	unsigned long u = v < 0 ? -(unsigned long)v : (unsigned long)v;

	do
		num[n++] = (char)('0' + u % 10);
	while ((u /= 10));
	while (*name && i < 40)
		buf[i++] = *name++;
	buf[i++] = ' ';
	if (v < 0)
		buf[i++] = '-';
	while (n)
		buf[i++] = num[--n];
	buf[i++] = '\n';
	if (write(log_fd, buf, i) < 0)
		_exit(4);
}

static ssize_t slurp(const char *path)
{
	int fd = open(path, O_RDONLY);
	ssize_t n, got = 0;

	if (fd < 0)
		return -1;
	while ((n = read(fd, smaps + got, sizeof(smaps) - 1 - got)) > 0)
		got += n;
	close(fd);
	smaps[got] = 0;
	return got;
}

static long parse_kb(const char *p)
{
	long v = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	return v * 1024;
}

/* Rss of the mapping starting at addr, from /proc/self/smaps. */
static long mapping_rss(void *addr)
{
	char hex[24];
	int n = 0, i;
	unsigned long a = (unsigned long)addr;
	char *p, *q;

	do {
		int d = (int)(a & 15);

		hex[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
	} while ((a >>= 4));
	for (i = 0; i < n / 2; i++) {
		char t = hex[i];

		hex[i] = hex[n - 1 - i];
		hex[n - 1 - i] = t;
	}
	hex[n++] = '-';
	hex[n] = 0;
	if (slurp("/proc/self/smaps") < 0)
		return -1;
	for (p = smaps; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, hex, n))
			break;
	if (!p || !*p)
		return -1;
	q = strstr(p, "\nRss:");
	return q ? parse_kb(q + 5) : -1;
}

static long status_bytes(const char *key)
{
	char *p;

	if (slurp("/proc/self/status") < 0)
		return -1;
	p = strstr(smaps, key);
	return p ? parse_kb(p + strlen(key)) : -1;
}

static WL_SCENARIO char *scn_file_read(const char *dir, volatile long *sum)
{
	static const char name[] = "/wl_rssobj-\033[31m.data";
	char path[4096];
	static char block[1 << 16];
	size_t i, n = strlen(dir);
	char *m;
	int fd;

	if (n > sizeof(path) - 32)
		_exit(5);
	memcpy(path, dir, n);
	memcpy(path + n, name, sizeof(name));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		_exit(6);
	for (i = 0; i < sizeof(block); i++)
		block[i] = (char)i;
	for (i = 0; i < 16 * MiB / sizeof(block); i++)
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			_exit(7);
	m = mmap(NULL, 16 * MiB, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		_exit(8);
	for (i = 0; i < 12 * MiB; i += 3 * PAGE)
		*sum += m[i];
	wl_sink(m);
	return m;
}

static WL_SCENARIO char *scn_shared_touch(int fd, size_t len, int flags)
{
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);
	size_t i;

	if (m == MAP_FAILED)
		_exit(9);
	for (i = 0; i < len; i += PAGE)
		m[i] = 1;
	wl_sink(m);
	return m;
}

static WL_SCENARIO char *scn_memfd_touch(void)
{
	int fd = memfd_create("ptcache", 0);

	if (fd < 0 || ftruncate(fd, 6 * MiB))
		_exit(10);
	return scn_shared_touch(fd, 6 * MiB, MAP_SHARED);
}

static WL_SCENARIO char *scn_devshm_touch(char *name)
{
	int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	char *m;

	if (fd < 0 || ftruncate(fd, 3 * MiB))
		_exit(11);
	m = scn_shared_touch(fd, 3 * MiB, MAP_SHARED);
	close(fd);
	return m;
}

static WL_SCENARIO char *scn_shared_anon(void)
{
	return scn_shared_touch(-1, 5 * MiB, MAP_SHARED | MAP_ANONYMOUS);
}

static WL_SCENARIO char *scn_sysv_touch(void)
{
	int id = shmget(IPC_PRIVATE, 2 * MiB, IPC_CREAT | 0600);
	char *m;
	size_t i;

	if (id < 0)
		_exit(12);
	m = shmat(id, NULL, 0);
	shmctl(id, IPC_RMID, NULL);   /* gone when detached: nothing left behind */
	if (m == (void *)-1)
		_exit(13);
	for (i = 0; i < 2 * MiB; i += PAGE)
		m[i] = 1;
	wl_sink(m);
	return m;
}

int main(int argc, char **argv)
{
	int a = wl_maybe_wait(argc, argv);
	char shm[64] = "/dev/shm/pt-rssobj-", *f, *mf, *ds, *sa, *sv;
	volatile long sum = 0;
	long pid = getpid(), t = pid;
	int n = 19, d = 0;
	char digits[20];

	if (argc - a < 2)
		return 2;
	log_fd = open(argv[a], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (log_fd < 0)
		return 3;
	do
		digits[d++] = (char)('0' + t % 10);
	while ((t /= 10));
	while (d)
		shm[n++] = digits[--d];
	shm[n] = 0;
	memset(smaps, 1, sizeof(smaps));
	f = scn_file_read(argv[a + 1], &sum);
	mf = scn_memfd_touch();
	ds = scn_devshm_touch(shm);
	sa = scn_shared_anon();
	sv = scn_sysv_touch();
	put("pid", pid);
	put("file", mapping_rss(f));
	put("memfd", mapping_rss(mf));
	put("devshm", mapping_rss(ds));
	put("shanon", mapping_rss(sa));
	put("sysv", mapping_rss(sv));
	put("peak_file", status_bytes("RssFile:"));
	put("peak_shmem", status_bytes("RssShmem:"));
	put("peak_anon", status_bytes("RssAnon:"));
	munmap(f, 16 * MiB);
	munmap(mf, 6 * MiB);
	put("end_file", status_bytes("RssFile:"));
	put("end_shmem", status_bytes("RssShmem:"));
	unlink(shm);
	wl_sink(sv);
	wl_sink(sa);
	wl_sink(ds);
	return 0;
}
