// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * invocation.c — per-invocation records: what the kernel kept for one invocation (its own RSS and
 * heap peaks, reset at its start), the stacks that held memory at its peak, and the figure a
 * Lambda-style sandbox would have printed for it (the process high-water mark).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <stdio.h>
#include <unistd.h>
#include "util/fmt.h"
#include "invocation/invocation.h"
#include "bpf/peak.h"
#include "target/proc.h"
#include "profile/collect.h"
#include "maps/mapread.h"

const char *pt_outcome_name(uint32_t outcome)
{
	switch (outcome) {
	case PT_OUT_RESPONSE: return "response";
	case PT_OUT_ERROR: return "error";
	case PT_OUT_KILLED: return "killed";
	case PT_OUT_EXITED: return "exited";
	case PT_OUT_INIT: return "init";
	case PT_OUT_UNFINISHED: return "unfinished";
	}
	return "running";
}

const char *pt_inv_outcome(const struct pt_inv_record *r)
{
	/* Its figures were gone before user space read them (invocations_overwritten): its row
	 * holds zeros, which "running" made look like measurements. */
	if (r->overwritten)
		return "overwritten";
	if (r->seq == 0 && r->attached && r->outcome == PT_OUT_INIT)
		return "next";
	return pt_outcome_name(r->outcome);
}

const char *pt_inv_phase(const struct pt_inv_record *r)
{
	if (r->seq || pt_inv_started_before(r))
		return "invocation";
	return r->attached ? "attached" : "init";
}

void pt_inv_exit_outcome(struct pt_inv_record *r, int wait_status)
{
	if (r->outcome != PT_OUT_KILLED)
		return;
	if (wait_status & 0x7f) {
		r->exit_signal = wait_status & 0x7f;
	} else {
		r->outcome = PT_OUT_EXITED;
		r->exit_status = (wait_status >> 8) & 0xff;
	}
}

size_t pt_rapi_request_id(const char *buf, size_t len, char *out, size_t outlen)
{
	static const char hdr[] = "lambda-runtime-aws-request-id:";
	const size_t hl = sizeof(hdr) - 1;
	size_t i, j, n;

	if (outlen)
		out[0] = 0;
	/* Header names are case-insensitive and their order is not guaranteed. A header starts
	 * a line: at offset 0 of a continuation read, or after "\n". */
	for (i = 0; i + hl <= len; i++) {
		if (i > 0 && buf[i - 1] != '\n')
			continue;
		for (j = 0; j < hl; j++)
			if (tolower((unsigned char)buf[i + j]) != hdr[j])
				break;
		if (j < hl)
			continue;
		i += hl;
		while (i < len && (buf[i] == ' ' || buf[i] == '\t'))
			i++;
		for (n = 0; i + n < len && buf[i + n] != '\r' && buf[i + n] != '\n'; n++)
			;
		while (n && (buf[i + n - 1] == ' ' || buf[i + n - 1] == '\t'))
			n--;
		if (!outlen)
			return n;
		if (n >= outlen)
			n = outlen - 1;
		memcpy(out, buf + i, n);
		out[n] = 0;
		return n;
	}
	return 0;
}

static void top_insert(struct pt_inv_record *rec, uint32_t stack, int64_t bytes, int64_t count)
{
	uint32_t i, pos;

	if (bytes <= 0)
		return;
	for (pos = 0; pos < rec->ntop; pos++)
		if (bytes > rec->top[pos].bytes)
			break;
	if (pos >= PT_INV_TOP)
		return;
	if (rec->ntop < PT_INV_TOP)
		rec->ntop++;
	for (i = rec->ntop - 1; i > pos; i--)
		rec->top[i] = rec->top[i - 1];
	rec->top[pos].stack = stack;
	rec->top[pos].bytes = bytes;
	rec->top[pos].count = count;
}

static int cmp_inv_stack_desc(const void *a, const void *b)
{
	const struct pt_inv_stack *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

void pt_inv_keep_biggest(struct pt_inv_record *rec, uint32_t max)
{
	uint32_t i;

	if (rec->nall <= max)
		return;
	qsort(rec->all, rec->nall, sizeof(*rec->all), cmp_inv_stack_desc);
	for (i = max; i < rec->nall; i++) {
		rec->other_bytes += rec->all[i].bytes;
		rec->other_count += rec->all[i].count;
		rec->other_stacks++;
	}
	rec->nall = max;
}

#define INV_CHUNK 256

int pt_inv_capture(struct pt_inv_record *rec, const struct pt_inv *inv, int stats_fd,
		   uint32_t nstacks, bool keep_all, unsigned count_shift)
{
	static struct pt_stack_stats chunk[INV_CHUNK];
	static uint32_t keys[INV_CHUNK];
	struct pt_stack_stats st;
	uint32_t k, p = inv->seq & 1, first = 0, got = 0, acap = 0;
	size_t n;

	memset(rec, 0, sizeof(*rec));
	rec->seq = inv->seq;
	n = inv->id_len < PT_REQID_LEN ? inv->id_len : PT_REQID_LEN;
	memcpy(rec->id, inv->id, n);
	rec->id[n] = 0;
	rec->outcome = inv->outcome;
	rec->start_ns = inv->start_ns;
	rec->end_ns = inv->end_ns;
	rec->start_epoch = inv->start_epoch;
	rec->end_epoch = inv->end_epoch;
	rec->rss_start = inv->rss_start;
	rec->rss_peak = inv->rss_peak;
	rec->rss_end = inv->rss_end;
	rec->heap_start = inv->heap_start;
	rec->heap_peak = inv->heap_peak;
	rec->heap_peak_count = inv->heap_peak_count;
	rec->heap_end = inv->heap_end;
	rec->alloc_count = inv->alloc_count;
	rec->alloc_bytes = inv->alloc_bytes;
	rec->free_count = inv->free_count;
	rec->free_bytes = inv->free_bytes;
	rec->traj_n = inv->traj_n < PT_TRAJ_MAX ? inv->traj_n : PT_TRAJ_MAX;
	for (k = 0; k < rec->traj_n; k++) {
		rec->traj[k].t_ns = inv->traj[k].t_ns;
		rec->traj[k].rss = inv->traj[k].rss;
	}
	if (stats_fd < 0)
		return 0;
	/* Every stack's stats, read by batches: at each invocation's end, so with 100k stacks
	 * one lookup each would be 100k system calls per invocation. */
	for (k = 0; k < nstacks; k++) {
		int64_t b, c;

		if (k - first >= got) {
			int r = pt_map_read_range(stats_fd, k, nstacks - k < INV_CHUNK ? nstacks - k : INV_CHUNK,
						  keys, chunk, sizeof(chunk[0]));

			if (r <= 0)
				return r ? r : -EIO;
			first = k;
			got = (uint32_t)r;
		}
		st = chunk[k - first];
		if (st.inv_snap_seq[p] == inv->peak_seq) {
			b = st.inv_peak_bytes[p];
			c = st.inv_peak_count[p];
		} else {
			/* Unchanged since that peak. */
			b = pt_live_bytes_of(&st);
			c = pt_live_count_of(&st);
		}
		if (count_shift)
			c = (c + (1LL << (count_shift - 1))) >> count_shift;
		top_insert(rec, k, b, c);
		if (b > 0) {
			/* Every invocation keeps its stacks, not only with --per-invocation (trimmed to
			 * PT_INV_KEEP below). */
			if (rec->nall == acap) {
				/* Doubling: one realloc per stack would copy the list each time. */
				uint32_t nc = acap ? acap * 2 : 64;
				struct pt_inv_stack *a = realloc(rec->all, nc * sizeof(*a));

				if (!a)
					return -ENOMEM;
				rec->all = a;
				acap = nc;
			}
			rec->all[rec->nall].stack = k;
			rec->all[rec->nall].bytes = b;
			rec->all[rec->nall++].count = c;
		}
	}
	if (!keep_all && rec->nall > PT_INV_KEEP) {
		struct pt_inv_stack *a;

		pt_inv_keep_biggest(rec, PT_INV_KEEP);
		if ((a = realloc(rec->all, rec->nall * sizeof(*a))))
			rec->all = a;   /* give back what the trimmed stacks took */
	}
	return 0;
}

int pt_inv_append(struct pt_inv_list *l, const struct pt_inv_record *rec)
{
	if (l->n == l->cap) {
		uint32_t nc = l->cap ? l->cap * 2 : 16;
		struct pt_inv_record *r = realloc(l->r, nc * sizeof(*r));

		if (!r)
			return -ENOMEM;
		l->r = r;
		l->cap = nc;
	}
	l->r[l->n] = *rec;
	/* The request id is the runtime's (or a client's) to choose: sanitized here, where every
	 * record enters the list that the report, the EMF lines and --max-peak print from. */
	pt_sanitize(l->r[l->n].id, sizeof(l->r[l->n].id), rec->id);
	l->n++;
	l->total++;
	l->total_inv += rec->seq != 0;
	l->overwritten += rec->overwritten;
	l->stacks_lost += rec->stacks_lost && !rec->overwritten;
	return 0;
}

static int cmp_peak_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* r[k] let go of: its stacks freed, what the report sums over every record counted. */
static void inv_drop(struct pt_inv_list *l, struct pt_inv_record *r)
{
	l->dropped++;
	l->dropped_inv += r->seq != 0;
	if (r->seq > l->dropped_max_seq)
		l->dropped_max_seq = r->seq;
	l->dropped_over_max_peak += l->max_peak && r->seq && (uint64_t)r->rss_peak > l->max_peak;
	l->dropped_killed += r->outcome == PT_OUT_KILLED || r->outcome == PT_OUT_EXITED;
	free(r->all);
	free(r->rss_all);
}

uint32_t pt_inv_list_trim(struct pt_inv_list *l, uint32_t hi)
{
	uint32_t first, last, lo, end, m, want, k, o, eq_left, gone;
	int64_t *peaks, thr;

	if (!l->keep || l->n < l->keep)
		return 0;
	first = l->keep / 4;
	last = l->keep / 4;
	lo = first;
	end = l->n - last < hi ? l->n - last : hi;
	if (end <= lo)
		return 0;
	m = end - lo;
	/* Half of the middle's room: a trim every keep/4 appends or so, not one per append. */
	want = (l->keep - first - last) / 2;
	if (m <= want)
		return 0;
	peaks = malloc(m * sizeof(*peaks));
	if (!peaks)
		return 0;
	for (k = 0; k < m; k++)
		peaks[k] = l->r[lo + k].rss_peak;
	qsort(peaks, m, sizeof(*peaks), cmp_peak_desc);
	thr = peaks[want - 1];
	/* Ties at the threshold: the earliest of them, up to want in all. */
	for (eq_left = 0, k = 0; k < want; k++)
		eq_left += peaks[k] == thr;
	free(peaks);
	for (o = lo, k = lo; k < end; k++) {
		struct pt_inv_record *r = &l->r[k];

		if (r->rss_peak > thr || (r->rss_peak == thr && eq_left && eq_left--)) {
			if (o != k)
				l->r[o] = *r;
			o++;
		} else {
			inv_drop(l, r);
		}
	}
	gone = end - o;
	memmove(&l->r[o], &l->r[end], (l->n - end) * sizeof(*l->r));
	l->n -= gone;
	return gone;
}

void pt_inv_list_free(struct pt_inv_list *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		free(l->r[i].all);
	for (uint32_t i = 0; i < l->n; i++)
		free(l->r[i].rss_all);
	free(l->r);
	memset(l, 0, sizeof(*l));
}

static double mib(int64_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

/* A signed change in MiB with one decimal, never "-0.0": what rounds to zero prints "+0.0". */
static double mib_change(int64_t b)
{
	double v = mib(b);

	return fabs(v) < 0.05 ? 0.0 : v;
}

void pt_inv_line(FILE *f, const struct pt_inv_record *r)
{
	double ms = r->end_ns > r->start_ns ? (double)(r->end_ns - r->start_ns) / 1e6 : 0;

	if (r->seq == 0)
		fprintf(f, "INIT\t");
	else
		fprintf(f, "INVOCATION %" PRIu64 "\tRequestId: %s\t", r->seq, r->id[0] ? r->id : "?");
	/* Every figure in MiB (2^20 bytes), as the values are. */
	fprintf(f, "Duration: %.2f ms\tOutcome: %s\tPeak RSS: %.1f MiB\t", ms, pt_inv_outcome(r),
		mib(r->rss_peak));
	/* --light has no allocator probes: the heap is not measured, which 0.0 would hide. */
	if (r->light)
		fputs("Peak Heap: not traced (--light)\t", f);
	else
		fprintf(f, "Peak Heap: %.1f MiB\tHeap Growth: %+.1f MiB\tAllocations: %" PRIu64 "\t",
			mib(r->heap_peak), mib_change(r->heap_end - r->heap_start), r->alloc_count);
	fprintf(f, "Max Memory Used (high-water mark): %.0f MiB", mib((int64_t)r->vmhwm));
	if (r->arena_read)
		fprintf(f, "\tArena Retained: %.1f MiB (%+.1f MiB)", mib(r->arena_retained),
			mib_change(r->arena_retained_change));
	if (r->mem_read)
		fprintf(f, "\tMalloc Heap: %.1f MiB\tPymalloc Arenas: %.1f MiB",
			mib(r->heap_main_resident + r->heap_thread_resident), mib(r->pymalloc_resident));
	fputc('\n', f);
}

/* Stack idx as frames (leaf first, Python frames spliced in): 0, or -1 when unknown. */
int pt_inv_stack_frames(const struct pt_stack_src *src, uint32_t idx, struct pt_profile *p,
			uint32_t *fr, uint32_t *n)
{
	struct pt_stack_rec rec;
	struct pt_py_stack pys;
	bool have_py = false;

	memset(p, 0, sizeof(*p));
	*n = 0;
	if (!src || src->stacks_fd < 0 || idx == PT_STACK_UNKNOWN ||
	    bpf_map_lookup_elem(src->stacks_fd, &idx, &rec))
		return -1;
	if (rec.py_nr && src->py_fd >= 0 &&
	    pt_py_words_read(src->py_chunks_fd, src->py_fd, idx, &rec, &pys) == 0)
		have_py = true;
	if (pt_stack_one(src->sym, idx, &rec, have_py ? &pys : NULL, src->py, p, fr, n)) {
		pt_profile_free(p);
		return -1;
	}
	return 0;
}

void pt_inv_json_frames(FILE *f, const struct pt_stack_src *src, uint32_t idx)
{
	struct pt_profile p;
	uint32_t fr[PT_MAX_MERGED], n, i;

	fputc('[', f);
	if (pt_inv_stack_frames(src, idx, &p, fr, &n)) {
		fputs("{\"func\": \"[unknown stack]\", \"module\": \"\", \"addr\": \"0x0\"}]", f);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct pt_frame *fm = &p.frames[fr[i]];

		fprintf(f, "%s{\"func\": ", i ? ", " : "");
		pt_json_str(f, fm->func);
		fprintf(f, ", \"module\": ");
		pt_json_str(f, fm->module);
		fprintf(f, ", \"addr\": \"0x%" PRIx64 "\"}", fm->addr);
	}
	fputc(']', f);
	pt_profile_free(&p);
}

void pt_inv_json(FILE *f, const struct pt_inv_record *r, const struct pt_stack_src *src)
{
	uint32_t i;

	fprintf(f, "{\"seq\": %" PRIu64 ", \"phase\": \"%s\", \"started_before_trace\": %s, \"request_id\": ",
		r->seq, pt_inv_phase(r), pt_inv_started_before(r) ? "true" : "false");
	pt_json_str(f, r->id);
	fprintf(f, ", \"outcome\": \"%s\"", pt_inv_outcome(r));
	if (r->outcome == PT_OUT_EXITED)
		fprintf(f, ", \"exit_status\": %d", r->exit_status);
	else
		fputs(", \"exit_status\": null", f);
	if (r->outcome == PT_OUT_KILLED && r->exit_signal > 0)
		fprintf(f, ", \"exit_signal\": %d", r->exit_signal);
	else
		fputs(", \"exit_signal\": null", f);
	fprintf(f, ", \"duration_ns\": %" PRIu64 ", \"rss_start_bytes\": %" PRId64
		   ", \"rss_peak_bytes\": %" PRId64 ", \"rss_end_bytes\": %" PRId64,
		r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0, r->rss_start, r->rss_peak, r->rss_end);
	if (r->light)   /* --light: not measured, absent rather than zero */
		fputs(", \"heap_start_bytes\": null, \"heap_peak_bytes\": null, \"heap_peak_count\": null"
		      ", \"heap_end_bytes\": null, \"heap_growth_bytes\": null, \"alloc_count\": null"
		      ", \"alloc_bytes\": null, \"free_count\": null, \"free_bytes\": null", f);
	else
		fprintf(f, ", \"heap_start_bytes\": %" PRId64 ", \"heap_peak_bytes\": %" PRId64
			   ", \"heap_peak_count\": %" PRId64 ", \"heap_end_bytes\": %" PRId64
			   ", \"heap_growth_bytes\": %" PRId64 ", \"alloc_count\": %" PRIu64
			   ", \"alloc_bytes\": %" PRIu64 ", \"free_count\": %" PRIu64 ", \"free_bytes\": %" PRIu64,
			r->heap_start, r->heap_peak, r->heap_peak_count, r->heap_end, r->heap_end - r->heap_start,
			r->alloc_count, r->alloc_bytes, r->free_count, r->free_bytes);
	fprintf(f, ", \"vmhwm_bytes\": %" PRIu64 ", \"overwritten\": %s, \"stacks_lost\": %s, \"rss_trajectory\": [",
		r->vmhwm, r->overwritten ? "true" : "false", r->stacks_lost ? "true" : "false");
	/* [ms since the start, RSS bytes], starting with the RSS at the start. */
	fprintf(f, "[0, %" PRId64 "]", r->rss_start);
	for (i = 0; i < r->traj_n; i++)
		fprintf(f, ", [%.3f, %" PRId64 "]",
			r->traj[i].t_ns > r->start_ns ? (r->traj[i].t_ns - r->start_ns) / 1e6 : 0.0,
			r->traj[i].rss);
	fputs("], \"arenas\": ", f);
	if (r->arena_read)
		fprintf(f, "{\"live_chunk_bytes\": %" PRId64 ", \"resident_bytes\": %" PRId64
			   ", \"retained_bytes\": %" PRId64 ", \"retained_change_bytes\": %" PRId64 "}",
			r->arena_live, r->arena_resident, r->arena_retained, r->arena_retained_change);
	else
		fputs("null", f);
	if (r->reading_skipped)
		fprintf(f, ", \"end_reading_skipped_gap_ns\": %" PRIu64, r->next_gap_ns);
	else
		fputs(", \"end_reading_skipped_gap_ns\": null", f);
	fputs(", \"resident_at_end\": ", f);
	if (r->mem_read)
		fprintf(f, "{\"malloc_heap_bytes\": %" PRId64 ", \"malloc_heap_main_arena_bytes\": %" PRId64
			   ", \"malloc_heap_thread_arenas_bytes\": %" PRId64 ", \"pymalloc_arenas_bytes\": %" PRId64
			   ", \"pymalloc_pools\": %u, \"unscanned_bytes\": %" PRId64 "}",
			r->heap_main_resident + r->heap_thread_resident, r->heap_main_resident,
			r->heap_thread_resident, r->pymalloc_resident, r->pymalloc_pools, r->mem_unscanned);
	else
		fputs("null", f);
	fputs(r->light ? ", \"top_stacks_at_peak\": null" : ", \"top_stacks_at_peak\": [", f);
	for (i = 0; i < r->ntop; i++) {
		fprintf(f, "%s{\"bytes\": %" PRId64 ", \"count\": %" PRId64 ", \"frames\": ", i ? ", " : "",
			r->top[i].bytes, r->top[i].count);
		pt_inv_json_frames(f, src, r->top[i].stack);
		fputc('}', f);
	}
	if (!r->light)
		fputc(']', f);
	fputs(", \"rss_top_stacks_at_peak\": [", f);
	for (i = 0; i < r->nrss_top; i++) {
		fprintf(f, "%s{\"rss_bytes\": %" PRId64 ", \"frames\": ", i ? ", " : "", r->rss_top[i].bytes);
		pt_inv_json_frames(f, src, r->rss_top[i].stack);
		fputc('}', f);
	}
	fputs("]}", f);
}

/* "host:port" from AWS_LAMBDA_RUNTIME_API in the target's environment, as an IPv4 address. */
static int rapi_endpoint(pid_t pid, uint32_t *addr, uint16_t *port)
{
	struct pt_environ env;
	const char *v;
	char host[256];
	struct in_addr in;
	char *colon;
	int err;

	if ((err = pt_environ_read(pid, &env)))
		return err;
	v = pt_environ_get(&env, "AWS_LAMBDA_RUNTIME_API");
	if (v)
		snprintf(host, sizeof(host), "%.200s", v);
	pt_environ_free(&env);
	if (!v)
		return -ENOENT;
	colon = strrchr(host, ':');
	if (!colon)
		return -EINVAL;
	*colon = 0;
	*port = (uint16_t)atoi(colon + 1);
	if (strcmp(host, "localhost") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	if (inet_pton(AF_INET, host, &in) != 1)
		return -EINVAL;
	*addr = in.s_addr;   /* network order, as /proc/net/tcp prints it (little-endian hex) */
	return 0;
}

/* Socket inodes of the process's TCP connections to addr:port (IPv4 and v4-mapped IPv6). */
static int rapi_inodes(pid_t pid, uint32_t addr, uint16_t port, unsigned long *ino, int max)
{
	static const char *const files[] = { "tcp", "tcp6" };
	char path[64], line[512], want4[32], want6[64];
	int n = 0;

	snprintf(want4, sizeof(want4), "%08X:%04X", addr, port);
	snprintf(want6, sizeof(want6), "0000000000000000FFFF0000%08X:%04X", addr, port);
	for (int k = 0; k < 2; k++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, files[k]);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f) && n < max) {
			char local[80], rem[80];
			unsigned long inode;
			unsigned int st;

			/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
			if (sscanf(line, "%*s %79s %79s %x %*s %*s %*s %*s %*s %lu", local, rem, &st, &inode) != 4)
				continue;
			if (strcmp(rem, k ? want6 : want4) == 0)
				ino[n++] = inode;
		}
		fclose(f);
	}
	return n;
}

int pt_rapi_sockets(pid_t pid, int *fds, int max)
{
	unsigned long ino[64];
	char path[64], link[128], target[128];
	struct dirent *de;
	uint32_t addr;
	uint16_t port;
	int nino, n = 0;
	DIR *d;

	if (rapi_endpoint(pid, &addr, &port))
		return 0;
	nino = rapi_inodes(pid, addr, port, ino, 64);
	if (nino <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		unsigned long inode;
		ssize_t l;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%.32s", path, de->d_name);
		l = readlink(link, target, sizeof(target) - 1);
		if (l <= 0)
			continue;
		target[l] = 0;
		if (sscanf(target, "socket:[%lu]", &inode) != 1)
			continue;
		for (int k = 0; k < nino; k++)
			if (ino[k] == inode)
				fds[n++] = atoi(de->d_name);
	}
	closedir(d);
	return n;
}

/* Attaching to a runtime that may already be waiting for its next invocation: its Runtime API
 * sockets go into the rapi_fds map (fd) as connected. */
void pt_rapi_seed(int rapi_fds_fd, pid_t pid, pid_t key_pid)
{
	int fds[16], n = pt_rapi_sockets(pid, fds, 16), k;
	uint32_t connected = PT_RAPI_FD_CONNECTED;

	for (k = 0; k < n; k++) {
		uint64_t key = PT_RAPI_FD_KEY(key_pid, fds[k]);

		bpf_map_update_elem(rapi_fds_fd, &key, &connected, BPF_ANY);
	}
}

/* The function's name, from its environment (attach) or ours (launch: inherited). */
void pt_emf_function_name(pid_t pid, bool launched, const char *comm, char *out, size_t outlen)
{
	/* Launched: the command inherits our environment. Attached: only its own counts. */
	const char *fnm = launched ? getenv("AWS_LAMBDA_FUNCTION_NAME") : NULL;
	struct pt_environ env;

	snprintf(out, outlen, "%s", fnm ? fnm : comm);
	if (launched || pt_environ_read(pid, &env))
		return;
	if ((fnm = pt_environ_get(&env, "AWS_LAMBDA_FUNCTION_NAME")))
		snprintf(out, outlen, "%.100s", fnm);
	pt_environ_free(&env);
}

void pt_inv_emf(FILE *f, const struct pt_inv_record *r, const char *function_name, uint64_t wall_ms)
{
	/* https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html */
	fprintf(f, "{\"_aws\": {\"Timestamp\": %" PRIu64 ", \"CloudWatchMetrics\": [{\"Namespace\": "
		   "\"peaktrace\", \"Dimensions\": [[\"FunctionName\"]], \"Metrics\": ["
		   "{\"Name\": \"PeakRSS\", \"Unit\": \"Bytes\"}, {\"Name\": \"PeakHeap\", \"Unit\": \"Bytes\"}, "
		   "{\"Name\": \"HeapGrowth\", \"Unit\": \"Bytes\"}, {\"Name\": \"MaxMemoryUsed\", \"Unit\": \"Bytes\"}, "
		   "{\"Name\": \"Allocations\", \"Unit\": \"Count\"}, {\"Name\": \"Duration\", \"Unit\": \"Milliseconds\"}]}]}, "
		   "\"FunctionName\": ", wall_ms);
	pt_json_str(f, function_name ? function_name : "");
	fprintf(f, ", \"RequestId\": ");
	pt_json_str(f, r->id);
	fprintf(f, ", \"Outcome\": \"%s\", \"PeakRSS\": %" PRId64 ", \"PeakHeap\": %" PRId64
		   ", \"HeapGrowth\": %" PRId64 ", \"MaxMemoryUsed\": %" PRIu64 ", \"Allocations\": %" PRIu64
		   ", \"Duration\": %.3f}",
		pt_inv_outcome(r), r->rss_peak, r->heap_peak, r->heap_end - r->heap_start,
		r->vmhwm, r->alloc_count,
		r->end_ns > r->start_ns ? (double)(r->end_ns - r->start_ns) / 1e6 : 0.0);
}

