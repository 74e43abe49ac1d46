// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_perfmap — the bounded perf-map reader (symbolize/perfmap.h) on files whose layout the
 * test writes: lines appended between reads, a line still being written, a line over the cap
 * (skipped unbuffered), NUL bytes, a sparse hole (passed unread), the byte and line budgets,
 * a rewrite, a stop request. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "check.h"
#include "symbolize/perfmap.h"
#include "util/stop.h"

struct got {
	int n;
	char last[64];
	uint64_t last_start;
};

static int keep(void *ctx, uint64_t start, uint64_t size, const char *name, size_t len)
{
	struct got *g = ctx;

	(void)size;
	g->n++;
	g->last_start = start;
	snprintf(g->last, sizeof(g->last), "%.*s", (int)len, name);
	return 0;
}

/* Appended (the reader's SEEK_DATA moves the shared file offset: a JIT writes through its own). */
static void put(int fd, const char *s)
{
	if (lseek(fd, 0, SEEK_END) < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		abort();
}

static uint64_t passed(const struct pt_perfmap_cut *c)
{
	return c->used_bytes + c->bad_bytes + c->long_bytes + c->garbage_bytes + c->dropped_bytes;
}

int main(void)
{
	struct pt_perfmap_limits lim;
	struct pt_perfmap_reader r = { 0 };
	struct got g = { 0 };
	char big[8192];
	int fd = memfd_create("pm", 0);

	pt_perfmap_limits_init(&lim, 0);
	CHECK_EQ_U64(lim.max_bytes, 64ULL << 20, "default budget 64 MiB");
	CHECK_EQ_U64(lim.max_lines, 524288, "one line per 128 bytes");

	/* Two lines, then a third still being written: it waits. */
	put(fd, "1000 10 a\n2000 20 b\n3000 30 c");
	CHECK(pt_perfmap_read(&r, fd, &lim, keep, &g) == PT_PERFMAP_DONE, "read to the end");
	CHECK(g.n == 2 && !strcmp(g.last, "b"), "two whole lines kept (%d, %s)", g.n, g.last);
	CHECK_EQ_U64(r.off, 20, "the partial line not passed");
	CHECK_EQ_U64(r.cut.unread_bytes, 0, "a line being written is not cut");
	/* Its end, a malformed line, a line of 5000 bytes, a NUL line, and one more. */
	put(fd, "\nnot a line\n4000 10 ");
	memset(big, 'L', 5000);
	big[5000] = 0;
	put(fd, big);
	put(fd, "\n5000 10 x");
	if (lseek(fd, 0, SEEK_END) < 0 || write(fd, "\0y\n", 3) != 3)
		abort();
	put(fd, "6000 10 last\n");
	pt_perfmap_read(&r, fd, &lim, keep, &g);
	CHECK(g.n == 4 && !strcmp(g.last, "last") && g.last_start == 0x6000, "c and last kept (%d, %s)",
	      g.n, g.last);
	CHECK_EQ_U64(r.cut.bad_lines, 1, "the malformed line counted");
	CHECK_EQ_U64(r.cut.long_lines, 1, "the long line counted");
	CHECK_EQ_U64(r.cut.long_bytes, 8 + 5000 + 1, "its bytes");
	CHECK_EQ_U64(r.cut.garbage_lines, 1, "the NUL line counted");
	CHECK_EQ_U64(passed(&r.cut), r.off, "every byte passed counted once");

	/* A sparse hole without a newline: passed unread; what follows the hole is garbage to its
	 * newline, then lines count again. */
	{
		uint64_t at = r.off + (1ULL << 30);

		if (ftruncate(fd, (off_t)at) || pwrite(fd, "tail\n7000 10 after\n", 19, (off_t)at) != 19)
			abort();
		pt_perfmap_read(&r, fd, &lim, keep, &g);
		CHECK(r.cut.hole_bytes >= (1ULL << 30) - 2 * 65536, "the hole passed unread (%" PRIu64 ")",
		      r.cut.hole_bytes);
		CHECK(!strcmp(g.last, "after"), "the line after the hole kept (%s)", g.last);
		CHECK_EQ_U64(passed(&r.cut), r.off, "every byte passed counted once");
	}

	/* Rewritten (shorter): read again from 0. */
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
		abort();
	put(fd, "8000 10 anew\n");
	pt_perfmap_read(&r, fd, &lim, keep, &g);
	CHECK(!strcmp(g.last, "anew") && r.cut.rewrites == 1, "a rewrite read from 0 (%s)", g.last);

	/* The line budget: the rest unread once it is reached. */
	{
		struct pt_perfmap_reader q = { 0 };
		struct pt_perfmap_limits l = lim;
		struct got h = { 0 };
		int f2 = memfd_create("pm2", 0);

		l.max_lines = 3;
		for (int i = 0; i < 10; i++) {
			char line[32];

			snprintf(line, sizeof(line), "%x 10 f%d\n", 0x1000 * (i + 1), i);
			put(f2, line);
		}
		pt_perfmap_read(&q, f2, &l, keep, &h);
		CHECK(h.n == 3 && q.cut.dropped_lines == 7, "3 kept, 7 dropped (%d, %" PRIu64 ")", h.n,
		      q.cut.dropped_lines);
		put(f2, "b000 10 more\n");
		CHECK(pt_perfmap_read(&q, f2, &l, keep, &h) == PT_PERFMAP_FULL, "full after");
		CHECK(q.cut.unread_bytes == 13 && q.cut.full, "the line after: unread, counted (%" PRIu64 ")",
		      q.cut.unread_bytes);
		close(f2);
	}

	/* A stop request arriving during a read ends it (one asked before does not). */
	{
		struct pt_perfmap_reader q = { 0 };
		struct got h = { 0 };
		int f3 = memfd_create("pm3", 0);

		put(f3, "1000 10 a\n");
		pt_stop_request(2);
		CHECK(pt_perfmap_read(&q, f3, &lim, keep, &h) == PT_PERFMAP_DONE && h.n == 1,
		      "a stop asked before the read: the read is part of the orderly stop");
		close(f3);
	}
	close(fd);
	return CHECK_DONE();
}
