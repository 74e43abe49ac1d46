// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wl_timeline.c — memory in known phases over time, for the timeline section
 * (tests/sections/timeline.py): touch 40 MiB, hold it 300 ms, free it; touch 80 MiB, hold it
 * 50 ms, free it; rest 150 ms; touch 24 MiB and free it at once (a blip of a few ms); rest
 * 100 ms; exit. At each phase the workload reads its own RSS from
 * /proc/self/statm with CLOCK_MONOTONIC (the clock of timeline.jsonl's t0_ns), and at the end
 * its VmHWM, and writes one JSON line per reading to OUTFILE:
 *   {"phase":"hold40","t_ns":N,"rss":BYTES}        ... {"phase":"vmhwm","rss":BYTES}
 *
 *   wl_timeline [--wait] OUTFILE
 * Blocks above glibc's mmap threshold: each is its own mapping, munmapped by free().
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wl_common.h"

#define MIB (1024UL * 1024)

static int out_fd = -1;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Resident bytes from /proc/self/statm (its second field, in pages). */
static long statm_rss(void)
{
	char buf[256];
	long size = 0, res = 0;
	int fd = open("/proc/self/statm", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (sscanf(buf, "%ld %ld", &size, &res) != 2)
		return -1;
	return res * sysconf(_SC_PAGESIZE);
}

static long vmhwm(void)
{
	char buf[4096], *p;
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "VmHWM:");
	return p ? strtol(p + 6, NULL, 10) * 1024 : -1;
}

static void record(const char *phase, long rss)
{
	char line[160];

	snprintf(line, sizeof(line), "{\"phase\":\"%s\",\"t_ns\":%llu,\"rss\":%ld}\n", phase,
		 (unsigned long long)mono_ns(), rss);
	wl_say(out_fd, line);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

/* Allocate and touch every page of n bytes: RSS grows by n (rounded to pages). */
static WL_SCENARIO char *scn_touch(size_t n)
{
	char *p = malloc(wl_opaque_size(n));

	wl_sink(p);
	if (p)
		memset(p, 1, n);
	return p;
}

int main(int argc, char **argv)
{
	sigset_t set;
	int sig, a = 1;
	char *p;

	wl_block_signal(&set, SIGUSR1);
	if (argc > 1 && !strcmp(argv[1], "--wait")) {
		wl_say(1, WL_READY_MARK);
		sigwait(&set, &sig);
		a = 2;
	}
	if (a >= argc)
		return 2;
	out_fd = open(argv[a], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out_fd < 0)
		return 2;
	sleep_ms(100);
	record("base", statm_rss());
	p = scn_touch(40 * MIB);
	record("hold40", statm_rss());
	sleep_ms(300);
	record("hold40_end", statm_rss());
	free(p);
	record("free40", statm_rss());
	sleep_ms(100);
	p = scn_touch(80 * MIB);
	record("spike80", statm_rss());
	sleep_ms(50);
	record("spike80_end", statm_rss());
	free(p);
	record("free80", statm_rss());
	sleep_ms(150);
	record("rest_end", statm_rss());
	/* A blip shorter than most sampling intervals: touched and freed at once. */
	p = scn_touch(24 * MIB);
	record("blip24", statm_rss());
	free(p);
	record("blip24_free", statm_rss());
	sleep_ms(100);
	record("vmhwm", vmhwm());
	close(out_fd);
	return 0;
}
