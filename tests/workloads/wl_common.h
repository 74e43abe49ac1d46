/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_common.h — shared helpers for the test workloads (tests/workloads/wl_*.c, *.cpp).
 *
 * Every workload is a small program whose allocator calls are known exactly, so the
 * end-to-end cases (tests/cases/NAME.json) can check peaktrace's figures to the byte.
 * Rules all workloads follow:
 *   - No stdio: printf & co. allocate a buffer on first use. Progress markers go
 *     through write(2) (wl_say), which never allocates.
 *   - Each scenario is its own WL_SCENARIO (noipa) function with a distinctive name:
 *     frames[0] of its stack (the caller of the allocator) is that function. noipa
 *     also forbids cloning (".constprop.0"), inlining and IPA-splitting.
 *   - The allocator call is never in tail position (a tail call would make the
 *     scenario's caller the allocation site): results always go to wl_sink().
 *   - Pointers escape through wl_sink() and constants go through wl_opaque*() so gcc
 *     cannot delete malloc/free pairs, fold realloc(NULL, n) into malloc(n), turn
 *     strdup("lit") into malloc+memcpy or drop free(NULL).
 *
 * "--wait" as the first argument (attach-mode tests): SIGUSR1 is blocked before
 * anything else happens, the workload writes WL_READY_MARK to stdout and sigwait()s
 * for SIGUSR1, then runs its scenarios. The test attaches peaktrace while it waits.
 */
#ifndef PEAKTRACE_WL_COMMON_H
#define PEAKTRACE_WL_COMMON_H

#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define WL_SCENARIO __attribute__((noipa, unused))

/* Line written (stdout, write(2)) once the workload blocks in sigwait for SIGUSR1. */
#define WL_READY_MARK "wl: waiting for SIGUSR1\n"

/* Keep the last few escaped pointers reachable so nothing can be proven dead. */
static void *volatile wl_escape[4];

/* Opaque sink: the compiler must assume the pointer is stored or read. */
static WL_SCENARIO void wl_sink(void *p)
{
	wl_escape[((uintptr_t)p >> 4) % 4] = p;
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* Opaque identity functions: hide constants (sizes, NULL, strings) from the optimizer. */
static WL_SCENARIO size_t wl_opaque_size(size_t n)
{
	__asm__ volatile("" : "+r"(n));
	return n;
}

static WL_SCENARIO void *wl_opaque_ptr(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

/* Async-signal-safe, allocation-free output of a NUL-terminated string. */
static inline void wl_say(int fd, const char *s)
{
	size_t n = strlen(s);
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* The number after KEY in a /proc file ("RssAnon:   1234 kB" gives 1234), -1 if absent: one
 * read into a stack buffer, no allocation, so reading it changes no heap figure. */
static inline long wl_field_kb(const char *path, const char *key)
{
	char buf[8192];
	ssize_t n;
	long v = -1;
	char *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, key);
	if (p) {
		p += strlen(key);
		while (*p == ' ' || *p == '\t')
			p++;
		v = 0;
		while (*p >= '0' && *p <= '9')
			v = v * 10 + (*p++ - '0');
	}
	return v;
}

/* RssAnon in bytes (the counter kmem:rss_stat reports), -1 if unreadable. */
static inline long wl_rss_anon(void)
{
	long kb = wl_field_kb("/proc/self/status", "RssAnon:");

	return kb < 0 ? kb : kb * 1024;
}

/* "NAME VALUE\n" to fd: a figure for the test to read, written without allocating. */
static inline void wl_say_val(int fd, const char *name, long v)
{
	char line[128], tmp[24];
	size_t o = 0;
	unsigned long u = v < 0 ? (unsigned long)-v : (unsigned long)v;
	int n = 0;

	while (*name && o < 80)
		line[o++] = *name++;
	line[o++] = ' ';
	if (v < 0)
		line[o++] = '-';
	do
		tmp[n++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	while (n)
		line[o++] = tmp[--n];
	line[o++] = '\n';
	line[o] = 0;
	wl_say(fd, line);
}

/* Block `sig` for the whole process (threads created later inherit the mask) so
 * it can be consumed with sigwait(). Call first thing in main(). */
static inline void wl_block_signal(sigset_t *set, int sig)
{
	sigemptyset(set);
	sigaddset(set, sig);
	sigprocmask(SIG_BLOCK, set, NULL);
}

/* Handle the optional "--wait" first argument. Returns the index of the first
 * argument after the options. SIGUSR1 is blocked before anything else, then the
 * ready mark is written and the process waits (no allocation happens before). */
static inline int wl_maybe_wait(int argc, char **argv)
{
	sigset_t set;
	int sig;

	if (argc < 2 || strcmp(argv[1], "--wait") != 0)
		return 1;
	wl_block_signal(&set, SIGUSR1);
	wl_say(1, WL_READY_MARK);
	while (sigwait(&set, &sig) != 0 || sig != SIGUSR1)
		;
	return 2;
}

#endif /* PEAKTRACE_WL_COMMON_H */
