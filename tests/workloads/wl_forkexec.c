/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_forkexec — N children that exec at the same moment (tests/sections/follow.py, "follow/50
 * children"): how long --follow holds each one at its exec, measured by the children.
 *
 * Usage: wl_forkexec N LOG
 *
 * The parent forks N children; each waits on a pipe the parent closes once all are forked, so
 * the N execs start together. A child notes CLOCK_MONOTONIC just before its exec and passes it
 * to the new image (itself, as "--child T0 LOG"), whose main notes the clock again: the time
 * from the fork's release to the new image's first instruction of main, which is the exec, its
 * loader and whatever hold a tracer adds. The new image appends "PID HOLD_US\n" to LOG (one
 * write(2) each, O_APPEND: lines never interleave), allocates 1 MiB, sleeps 1 s and exits.
 * The parent waits for every child and exits 0 when all exited 0.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

#include "wl_common.h"

static unsigned long long mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
}

static int child_image(const char *t0s, const char *log)
{
	unsigned long long hold = mono_us() - strtoull(t0s, NULL, 10);
	char line[64];
	int fd, n;
	void *b;

	n = snprintf(line, sizeof(line), "%d %llu\n", (int)getpid(), hold);
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, (size_t)n) != n)
		return 1;
	close(fd);
	b = malloc(wl_opaque_size(1 << 20));
	if (!b)
		return 1;
	memset(b, 1, 1 << 20);
	wl_sink(b);
	sleep(1);
	free(b);
	return 0;
}

int main(int argc, char **argv)
{
	int go[2], n, bad = 0;
	char self[4096];
	ssize_t sl;

	if (argc == 4 && strcmp(argv[1], "--child") == 0)
		return child_image(argv[2], argv[3]);
	if (argc != 3 || (n = atoi(argv[1])) <= 0 || pipe(go))
		return 2;
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0)
		return 2;
	self[sl] = 0;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 3;
		if (pid == 0) {
			char b, t0[32];

			close(go[1]);
			if (read(go[0], &b, 1) < 0)   /* EOF once the parent closes: all go together */
				_exit(4);
			snprintf(t0, sizeof(t0), "%llu", mono_us());
			execl(self, self, "--child", t0, argv[2], (char *)NULL);
			_exit(5);
		}
	}
	close(go[0]);
	close(go[1]);
	for (int i = 0; i < n; i++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	return bad ? 1 : 0;
}
