// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * perfmap.c — the bounded, incremental perf-map reader (perfmap.h).
 *
 * Chunks of PT_PERFMAP_CHUNK bytes are read with pread at r->off; the whole lines in a chunk are
 * taken and r->off moves past them. A line cut by the chunk's end is read again from its start
 * with the next chunk (line_max < the chunk, so a line that is not skipped always fits); a line
 * that already passed line_max is skipped to its newline across chunks and calls (r->skip), so
 * it is never buffered. Before each chunk, SEEK_DATA says whether a hole starts at r->off: a
 * sparse file's hole is passed without reading it (20 GiB of them in one lseek).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "util/stop.h"
#include "symbolize/perfmap.h"

enum { SKIP_NONE = 0, SKIP_LONG, SKIP_GARBAGE };

int pt_perfmap_parse_line(const char *line, uint64_t *start, uint64_t *size, const char **name)
{
	unsigned long long st, sz;
	int n = 0;

	if (sscanf(line, "%llx %llx %n", &st, &sz, &n) != 2 || !n || !sz)
		return -1;
	*start = st;
	*size = sz;
	*name = line + n;
	return 0;
}

void pt_perfmap_limits_init(struct pt_perfmap_limits *lim, uint64_t max_bytes)
{
	if (!max_bytes)
		max_bytes = PT_PERFMAP_MAX_BYTES;
	lim->max_bytes = max_bytes;
	lim->max_lines = max_bytes / PT_PERFMAP_BYTES_PER_LINE ? max_bytes / PT_PERFMAP_BYTES_PER_LINE : 1;
	lim->call_bytes = PT_PERFMAP_CALL_BYTES;
	lim->call_ns = PT_PERFMAP_CALL_NS;
	lim->line_max = PT_PERFMAP_LINE_MAX;
}

void pt_perfmap_cut_add(struct pt_perfmap_cut *a, const struct pt_perfmap_cut *b)
{
	uint64_t *x = (uint64_t *)a;
	const uint64_t *y = (const uint64_t *)b;

	/* Every field is a uint64_t count. */
	for (size_t i = 0; i < sizeof(*a) / sizeof(uint64_t); i++)
		x[i] += y[i];
}

/* The bytes of a skipped line passed now, in its category. */
static void skip_bytes(struct pt_perfmap_reader *r, uint64_t n)
{
	if (r->skip == SKIP_GARBAGE)
		r->cut.garbage_bytes += n;
	else
		r->cut.long_bytes += n;
}

/* Begin skipping the line being read (counted once, in the category it starts in; a long
 * line found to hold a NUL later stays counted as long, its later bytes as garbage). */
static void skip_begin(struct pt_perfmap_reader *r, int why)
{
	if (!r->skip) {
		if (why == SKIP_GARBAGE)
			r->cut.garbage_lines++;
		else
			r->cut.long_lines++;
	}
	r->skip = why;
}

/* One whole line (without its newline, which is counted in len + 1). */
static void take_line(struct pt_perfmap_reader *r, const struct pt_perfmap_limits *lim, char *line,
		      size_t len, pt_perfmap_line_fn fn, void *ctx)
{
	uint64_t start, size;
	const char *name;

	if (len > lim->line_max) {
		r->cut.long_lines++;
		r->cut.long_bytes += len + 1;
		return;
	}
	if (memchr(line, 0, len)) {
		r->cut.garbage_lines++;
		r->cut.garbage_bytes += len + 1;
		return;
	}
	line[len] = 0;   /* the newline's place */
	if (pt_perfmap_parse_line(line, &start, &size, &name)) {
		r->cut.bad_lines++;
		r->cut.bad_bytes += len + 1;
	} else if (r->cut.used_lines >= lim->max_lines ||
		   fn(ctx, start, size, name, len - (size_t)(name - line))) {
		r->cut.dropped_lines++;
		r->cut.dropped_bytes += len + 1;
	} else {
		r->cut.used_lines++;
		r->cut.used_bytes += len + 1;
	}
}

/*
 * The lines of buf[0..n) (read at r->off; eof: nothing follows it in the file). Returns the
 * bytes passed: every whole line, a skipped line's bytes; not a line cut by the chunk's end
 * (read again with the next chunk) or one still being written at the end of the file.
 */
static size_t take_chunk(struct pt_perfmap_reader *r, const struct pt_perfmap_limits *lim, char *buf,
			 size_t n, bool eof, pt_perfmap_line_fn fn, void *ctx)
{
	size_t p = 0;

	while (p < n) {
		char *nl = memchr(buf + p, '\n', n - p);
		size_t rest = n - p;

		if (r->skip) {
			size_t k = nl ? (size_t)(nl - (buf + p)) + 1 : rest;

			if (memchr(buf + p, 0, k))
				r->skip = SKIP_GARBAGE;
			skip_bytes(r, k);
			p += k;
			if (nl)
				r->skip = SKIP_NONE;
			continue;
		}
		if (!nl) {
			/* No newline yet: too long already, or never to be a line (a NUL), is
			 * skipped from here; else it is read again whole (next chunk, next call). */
			bool nul = memchr(buf + p, 0, rest) != NULL;

			if (rest > lim->line_max || (nul && eof)) {
				skip_begin(r, nul ? SKIP_GARBAGE : SKIP_LONG);
				skip_bytes(r, rest);
				p = n;
			}
			break;
		}
		take_line(r, lim, buf + p, (size_t)(nl - (buf + p)), fn, ctx);
		p += (size_t)(nl - (buf + p)) + 1;
	}
	return p;
}

/* A hole at r->off (SEEK_DATA: where data starts again, or the end): passed unread, the line
 * it is in made garbage. False when there is none (or the filesystem cannot say). */
static bool pass_hole(struct pt_perfmap_reader *r, int fd)
{
	off_t d = lseek(fd, (off_t)r->off, SEEK_DATA);
	uint64_t to;

	if (d < 0 && errno == ENXIO)
		to = r->size;   /* only a hole from here to the end */
	else if (d < 0 || (uint64_t)d <= r->off)
		return false;
	else
		to = (uint64_t)d < r->size ? (uint64_t)d : r->size;
	if (to <= r->off)
		return false;
	skip_begin(r, SKIP_GARBAGE);
	r->cut.garbage_bytes += to - r->off;
	r->cut.hole_bytes += to - r->off;
	r->off = to;
	return true;
}

static enum pt_perfmap_end end_call(struct pt_perfmap_reader *r, enum pt_perfmap_end why)
{
	r->last = why;
	r->cut.full = r->full;
	if (why == PT_PERFMAP_BUDGET)
		r->cut.budget_stops++;
	else if (why == PT_PERFMAP_STOPPED)
		r->cut.stops++;
	/* What a budget left unread is cut unless a later call reads it (recounted each call);
	 * a line still being written at the end is not. */
	r->cut.unread_bytes = why != PT_PERFMAP_DONE && r->size > r->off ? r->size - r->off : 0;
	return why;
}

enum pt_perfmap_end pt_perfmap_read(struct pt_perfmap_reader *r, int fd,
				    const struct pt_perfmap_limits *lim, pt_perfmap_line_fn fn, void *ctx)
{
	uint64_t left = lim->call_bytes > PT_PERFMAP_CHUNK ? lim->call_bytes : PT_PERFMAP_CHUNK;
	struct pt_perfmap_limits l = *lim;
	struct pt_budget b;
	struct stat st;
	char *buf;

	if (l.line_max >= PT_PERFMAP_CHUNK)
		l.line_max = PT_PERFMAP_CHUNK - 1;
	pt_budget_start(&b, l.call_ns);
	if (fstat(fd, &st) || st.st_size < 0)
		return end_call(r, r->last);
	if ((uint64_t)st.st_size < r->off) {
		/* Shorter than what was passed: written anew (V8 opens it with "w+"). Its lines
		 * are all newer than those kept, which they override where they overlap. */
		r->off = 0;
		r->skip = SKIP_NONE;
		r->cut.rewrites++;
	}
	r->size = (uint64_t)st.st_size;
	if (r->full)
		return end_call(r, PT_PERFMAP_FULL);
	buf = malloc(PT_PERFMAP_CHUNK + 1);
	if (!buf)
		return end_call(r, PT_PERFMAP_BUDGET);
	while (r->off < r->size) {
		size_t want, passed;
		ssize_t n;
		int over;

		if ((over = pt_budget_over(&b))) {
			free(buf);
			return end_call(r, over == 1 ? PT_PERFMAP_STOPPED : PT_PERFMAP_BUDGET);
		}
		if (r->taken >= l.max_bytes || r->cut.used_lines >= l.max_lines) {
			r->full = true;
			break;
		}
		if (pass_hole(r, fd))
			continue;
		if (!left) {
			free(buf);
			return end_call(r, PT_PERFMAP_BUDGET);
		}
		want = PT_PERFMAP_CHUNK;
		if (want > r->size - r->off)
			want = (size_t)(r->size - r->off);
		if (want > left)
			want = (size_t)left;
		n = pread(fd, buf, want, (off_t)r->off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;   /* a read error, or the file shrank under us: next call */
		left -= (uint64_t)n;
		passed = take_chunk(r, &l, buf, (size_t)n, r->off + (uint64_t)n >= r->size, fn, ctx);
		r->off += passed;
		r->taken += passed;
		if (!passed) {
			/* A line cut by this call's byte budget waits for the next call; one at the
			 * end of the file is still being written. */
			if ((size_t)n == want && want < PT_PERFMAP_CHUNK && r->off + want < r->size) {
				free(buf);
				return end_call(r, PT_PERFMAP_BUDGET);
			}
			break;
		}
	}
	free(buf);
	return end_call(r, r->full ? PT_PERFMAP_FULL : PT_PERFMAP_DONE);
}
