// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wl_sandbox — a supervisor, an extension and a runtime, like a function's sandbox, for
 * --follow. Each process logs its own RSS (/proc/self/statm: resident pages, the kernel's
 * file + anon + shmem) at each phase, while the others wait on a pipe, so the test knows the
 * summed RSS at every phase:
 *
 * "extension" and "runtime" (wl_sandbox ROLE LOG UP_FD DOWN_FD) wait for one byte on DOWN_FD
 * before anything (so a test can also start them itself, attach, then let them go), answer on
 * UP_FD at each phase and wait on DOWN_FD for the next.
 *
 *   wl_sandbox supervisor LOG
 *     A: starts (fork + exec) "extension", which touches EXT_PEAK MiB and logs "extension peak";
 *        the supervisor logs itself;
 *        the extension frees all but EXT_KEEP MiB and logs "extension after";
 *     B: starts "runtime", which touches RT_PEAK MiB and logs "runtime peak"; the supervisor
 *        logs itself again; then both end and it reaps them.
 *
 * The peak of the sum is in B (RT_PEAK + EXT_KEEP + the supervisor); the sum of each process's
 * own peak (EXT_PEAK + RT_PEAK + ...) is EXT_PEAK - EXT_KEEP more than that.
 * Log lines: "ROLE PHASE PID BYTES\n", written with write(2) (no stdio: no allocation after
 * the reading); a "start" line first, so the reading's own code pages are resident before the
 * readings that count.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1024L * 1024)
#define EXT_PEAK (40 * MiB)
#define EXT_KEEP (8 * MiB)
#define RT_PEAK (56 * MiB)

static int log_fd = -1;

static void log_rss(const char *role, const char *phase)
{
	char buf[256];
	long size = 0, res = 0;
	int fd = open("/proc/self/statm", O_RDONLY), n;

	if (fd >= 0) {
		n = (int)read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			sscanf(buf, "%ld %ld", &size, &res);
		}
	}
	n = snprintf(buf, sizeof(buf), "%s %s %d %ld\n", role, phase, (int)getpid(), res * 4096);
	if (write(log_fd, buf, (size_t)n) != n)
		_exit(3);
}

static void wait_byte(int fd)
{
	char b;

	if (read(fd, &b, 1) != 1)
		_exit(4);
}

static void send_byte(int fd)
{
	if (write(fd, "x", 1) != 1)
		_exit(5);
}

static char *touch(long bytes)
{
	char *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(6);
	for (long i = 0; i < bytes; i += 4096)
		p[i] = 1;
	return p;
}

static int extension(int up, int down)
{
	char *p;

	wait_byte(down);   /* go */
	p = touch(EXT_PEAK);

	log_rss("extension", "peak");
	send_byte(up);
	wait_byte(down);
	munmap(p, (size_t)(EXT_PEAK - EXT_KEEP));
	log_rss("extension", "after");
	send_byte(up);
	wait_byte(down);
	return 0;
}

static int runtime(int up, int down)
{
	char *p;

	wait_byte(down);   /* go */
	p = touch(RT_PEAK);

	log_rss("runtime", "peak");
	send_byte(up);
	wait_byte(down);
	/* Given back before exit, whose own code pages would otherwise raise its peak. */
	munmap(p, (size_t)RT_PEAK);
	return 0;
}

/* fork + exec of ourselves as ROLE, talking over two pipes; returns the child's pid. */
static pid_t start(const char *self, const char *role, const char *log, int *up, int *down)
{
	int a[2], b[2];
	char sa[16], sb[16];
	pid_t pid;

	if (pipe(a) || pipe(b))
		_exit(7);
	pid = fork();
	if (pid == 0) {
		close(a[0]);
		close(b[1]);
		snprintf(sa, sizeof(sa), "%d", a[1]);
		snprintf(sb, sizeof(sb), "%d", b[0]);
		execl(self, self, role, log, sa, sb, (char *)NULL);
		_exit(127);
	}
	close(a[1]);
	close(b[0]);
	*up = a[0];
	*down = b[1];
	return pid;
}

int main(int argc, char **argv)
{
	int eu, ed, ru, rd;
	pid_t ext, rt;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (argc < 3)
		return 2;
	log_fd = open(argv[2], O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (log_fd < 0)
		return 2;
	/* The reading's own code (snprintf, sscanf) resident before any reading counts. */
	log_rss(argv[1], "start");
	if (!strcmp(argv[1], "extension") && argc == 5)
		return extension(atoi(argv[3]), atoi(argv[4]));
	if (!strcmp(argv[1], "runtime") && argc == 5)
		return runtime(atoi(argv[3]), atoi(argv[4]));
	if (strcmp(argv[1], "supervisor") || n <= 0)
		return 2;
	self[n] = 0;   /* exec'd by its path, so each is named wl_sandbox, not "exe" */
	ext = start(self, "extension", argv[2], &eu, &ed);
	send_byte(ed);
	wait_byte(eu);                 /* A: the extension at its peak */
	log_rss("supervisor", "A");
	send_byte(ed);
	wait_byte(eu);                 /* it gave most back */
	rt = start(self, "runtime", argv[2], &ru, &rd);
	send_byte(rd);
	wait_byte(ru);                 /* B: the runtime at its peak */
	log_rss("supervisor", "B");
	send_byte(rd);
	send_byte(ed);
	waitpid(rt, NULL, 0);
	waitpid(ext, NULL, 0);
	return 0;
}
