// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_perfmap — the perf map a JIT writes (/tmp/perf-PID.map, inside the target's root), read
 * by the real reader (user/symbolize/perfmap.c, pt_perfmap_read) under budgets small enough for
 * the fuzzer to hit: 512 bytes and 8 lines over the run, lines of 64 bytes at most.
 *
 * The input's first byte says where the file is cut in two and whether a 1 MiB hole goes
 * between the parts: the first part is read, the hole and the second part appended (as a JIT
 * appends), and read again. Checked: every byte passed is in exactly one counter (kept, bad,
 * long, garbage, dropped), the budgets hold, each kept name is a NUL-terminated line without its
 * newline; and, when the byte budget was not reached, the lines kept are the same as a
 * one-shot read of the whole file (reading in steps changes nothing). The names also go through
 * pt_demangle (ELF and JIT names alike are the target's).
 */
#include <stdio.h>
#include <sys/stat.h>
#include "symbolize/perfmap.h"
#include "symbolize/symbolize.h"
#include "fuzz.h"

#define HOLE (1u << 20)

struct kept {
	uint64_t n, hash;
	uint32_t line_max;
};

static void mix(uint64_t *h, uint64_t v)
{
	*h = (*h ^ v) * 1099511628211ULL;
}

static int keep(void *ctx, uint64_t start, uint64_t size, const char *name, size_t len)
{
	struct kept *k = ctx;
	char *d;

	FUZZ_ASSERT(strlen(name) == len);
	FUZZ_ASSERT(!strchr(name, '\n'));
	FUZZ_ASSERT(len <= k->line_max);
	FUZZ_ASSERT(size != 0);
	mix(&k->hash, start);
	mix(&k->hash, size);
	for (size_t i = 0; i < len; i++)
		mix(&k->hash, (uint8_t)name[i]);
	k->n++;
	d = pt_demangle(name);
	free(d);
	return 0;
}

static int append(int fd, const uint8_t *p, size_t n, uint64_t at)
{
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)at);

		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
		at += (uint64_t)w;
	}
	return 0;
}

/* Every byte passed is counted once. */
static void check(const struct pt_perfmap_reader *r, const struct pt_perfmap_limits *lim)
{
	const struct pt_perfmap_cut *c = &r->cut;

	FUZZ_ASSERT(c->used_bytes + c->bad_bytes + c->long_bytes + c->garbage_bytes + c->dropped_bytes == r->off);
	FUZZ_ASSERT(c->hole_bytes <= c->garbage_bytes);
	FUZZ_ASSERT(c->used_lines <= lim->max_lines);
	FUZZ_ASSERT(r->off <= r->size);
	FUZZ_ASSERT(c->unread_bytes <= r->size - r->off);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pt_perfmap_limits lim = { .max_bytes = 512, .max_lines = 8, .call_bytes = 1 << 20,
					 .call_ns = 10000000000ULL, .line_max = 64 };
	struct pt_perfmap_reader r = { 0 }, w = { 0 };
	struct kept a = { 0, 14695981039346656037ULL, 64 }, b = a;
	size_t cut, n;
	int fd, whole;
	bool hole;

	if (size < 1)
		return 0;
	hole = data[0] & 1;
	data++;
	n = size - 1;
	cut = n * (data[-1] >> 1) / 127;
	if (cut > n)
		cut = n;
	fd = fuzz_memfd(data, cut);
	if (fd < 0)
		return 0;
	pt_perfmap_read(&r, fd, &lim, keep, &a);
	check(&r, &lim);
	if (hole && ftruncate(fd, (off_t)(cut + HOLE)))
		goto out;
	if (append(fd, data + cut, n - cut, cut + (hole ? HOLE : 0)))
		goto out;
	pt_perfmap_read(&r, fd, &lim, keep, &a);
	check(&r, &lim);
	/* One call more reads nothing new. */
	{
		uint64_t off = r.off, kept = a.n;

		pt_perfmap_read(&r, fd, &lim, keep, &a);
		FUZZ_ASSERT(r.off == off && a.n == kept);
	}
	/* The same file read at once: the same lines kept, unless either read reached the byte
	 * budget (checked between chunks: where a read stops differs). */
	whole = memfd_create("whole", MFD_CLOEXEC);
	if (whole >= 0 && (!hole || !ftruncate(whole, (off_t)(cut + HOLE))) &&
	    !append(whole, data, cut, 0) && !append(whole, data + cut, n - cut, cut + (hole ? HOLE : 0))) {
		pt_perfmap_read(&w, whole, &lim, keep, &b);
		check(&w, &lim);
		if (!r.full && !w.full)
			FUZZ_ASSERT(a.n == b.n && a.hash == b.hash);
	}
	if (whole >= 0)
		close(whole);
out:
	close(fd);
	return 0;
}
