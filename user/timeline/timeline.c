// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * timeline.c — memory over time (timeline.h): the sampler thread, its bounded buffer and
 * DIR/timeline.jsonl. The chart is timeline_svg.c.
 */
#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bpf/inv.h"
#include "timeline/timeline.h"
#include "util/fmt.h"
#include "util/outdir.h"

/* ---- the buffer ---------------------------------------------------------------------------- */

static bool same_levels(const struct pt_tl_sample *a, const struct pt_tl_sample *b)
{
	return a->rss == b->rss && a->anon == b->anon && a->file == b->file && a->shmem == b->shmem &&
	       a->heap == b->heap && a->rss_max == b->rss_max && a->heap_max == b->heap_max;
}

static void keep(struct pt_timeline *tl, const struct pt_tl_sample *x)
{
	uint32_t max = tl->max ? tl->max : PT_TL_MAX_SAMPLES;

	if (tl->n >= max) {
		tl->dropped++;
		return;
	}
	if (tl->n == tl->cap) {
		uint32_t cap = tl->cap ? tl->cap * 2 : 1024;
		struct pt_tl_sample *s;

		if (cap > max)
			cap = max;
		s = realloc(tl->s, cap * sizeof(*s));
		if (!s) {
			tl->dropped++;
			return;
		}
		tl->s = s;
		tl->cap = cap;
	}
	tl->s[tl->n++] = *x;
}

void pt_tl_add(struct pt_timeline *tl, const struct pt_tl_sample *x)
{
	if (!tl->taken++)
		tl->t0_ns = x->t_ns;
	/* Unchanged (its maxima are its levels, so nothing rose and fell in between): held back;
	 * the line to the next change then starts at the end of this plateau, not its start. */
	if (tl->n && same_levels(&tl->s[tl->n - 1], x) && !tl->dropped) {
		tl->held = *x;
		tl->have_held = true;
		return;
	}
	pt_tl_flush(tl);
	keep(tl, x);
}

void pt_tl_flush(struct pt_timeline *tl)
{
	if (tl->have_held)
		keep(tl, &tl->held);
	tl->have_held = false;
}

uint64_t pt_tl_next_tick(uint64_t next, uint64_t now, uint64_t interval_ns, uint64_t *missed)
{
	next += interval_ns;
	if (now >= next) {
		uint64_t late = (now - next) / interval_ns + 1;

		*missed += late;
		next += late * interval_ns;
	}
	return next;
}

/* ---- the sampler --------------------------------------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The kernel's figures now. The maxima are swapped for the current level, so the next interval's
 * maximum starts from where this one ends; BPF's plain store racing the swap only moves one
 * value into the interval after (timeline.h). */
static void sample_now(struct pt_timeline *tl, struct pt_tl_sample *x)
{
	volatile struct pt_global *g = tl->g;
	int64_t rmax, hmax;

	x->file = g->rss[PT_RSS_FILE];
	x->anon = g->rss[PT_RSS_ANON];
	x->shmem = g->rss[PT_RSS_SHMEM];
	x->rss = x->file + x->anon + x->shmem;
	x->heap = g->live_bytes;
	rmax = __atomic_exchange_n(&tl->g->tl_rss_max, x->rss, __ATOMIC_SEQ_CST);
	hmax = __atomic_exchange_n(&tl->g->tl_heap_max, x->heap, __ATOMIC_SEQ_CST);
	x->t_ns = mono_ns();
	/* The first sample's maximum would be the one since load (in launch mode, of the copy of
	 * peaktrace that became the target): the timeline starts at its first sample. */
	x->rss_max = rmax > x->rss && tl->taken ? rmax : x->rss;
	x->heap_max = hmax > x->heap && tl->taken ? hmax : x->heap;
}

static void *sampler(void *arg)
{
	struct pt_timeline *tl = arg;
	uint64_t ival = (uint64_t)tl->interval_ms * 1000000ULL, next = mono_ns();
	struct pt_tl_sample x;

	/* ~25 us of work per tick: a higher priority than the rest of peaktrace keeps the ticks on
	 * time on a busy machine without taking anything from it (best effort: root only). */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -10);
	while (!__atomic_load_n(&tl->stop, __ATOMIC_ACQUIRE)) {
		struct timespec ts = { .tv_sec = next / 1000000000ULL, .tv_nsec = next % 1000000000ULL };

		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			continue;
		sample_now(tl, &x);
		pt_tl_add(tl, &x);
		next = pt_tl_next_tick(next, mono_ns(), ival, &tl->missed);
	}
	return NULL;
}

int pt_timeline_start(struct pt_timeline *tl, struct pt_global *g, pid_t pid, unsigned interval_ms)
{
	sigset_t all, old;
	int err;

	tl->interval_ms = interval_ms;
	tl->pid = pid;
	tl->g = g;
	if (!interval_ms || tl->running)
		return 0;
	/* Signals go to the main thread (its poll loop wakes on EINTR): the sampler blocks them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&tl->thread, NULL, sampler, tl);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		fprintf(stderr, "peaktrace: cannot start the timeline sampler: %s\n", strerror(err));
		tl->interval_ms = 0;
		return -err;
	}
	pthread_setname_np(tl->thread, "pt-timeline");   /* for top -H, and its CPU time */
	tl->running = true;
	return 0;
}

void pt_timeline_stop(struct pt_timeline *tl)
{
	struct pt_tl_sample x;

	if (!tl->running)
		return;
	__atomic_store_n(&tl->stop, 1, __ATOMIC_RELEASE);
	pthread_join(tl->thread, NULL);
	tl->running = false;
	sample_now(tl, &x);   /* the figures at the stop: the last line's end */
	pt_tl_add(tl, &x);
	pt_tl_flush(tl);
}

void pt_timeline_free(struct pt_timeline *tl)
{
	pt_timeline_stop(tl);
	free(tl->s);
	tl->s = NULL;
	tl->n = tl->cap = 0;
}

/* ---- summary ------------------------------------------------------------------------------- */

static double ms_of(const struct pt_timeline *tl, uint64_t t_ns)
{
	return t_ns >= tl->t0_ns ? (double)(t_ns - tl->t0_ns) / 1e6 : 0.0;
}

void pt_tl_summarize(const struct pt_timeline *tl, const struct pt_inv_list *invs,
		     struct pt_tl_summary *o)
{
	uint64_t peak_t = 0;

	memset(o, 0, sizeof(*o));
	o->inv_seq = -1;
	o->on = tl->interval_ms && tl->taken;
	o->light = tl->light;
	o->interval_ms = tl->interval_ms;
	o->samples = tl->n;
	o->taken = tl->taken;
	o->dropped = tl->dropped;
	o->missed = tl->missed;
	for (uint32_t i = 0; i < tl->n; i++) {
		const struct pt_tl_sample *x = &tl->s[i];

		/* The first of equal maxima: when the peak was first reached. */
		if (x->rss_max > o->rss_peak) {
			o->rss_peak = x->rss_max;
			peak_t = x->t_ns;
			o->rss_peak_ms = ms_of(tl, x->t_ns);
		}
		if (x->heap_max > o->heap_peak) {
			o->heap_peak = x->heap_max;
			o->heap_peak_ms = ms_of(tl, x->t_ns);
		}
	}
	if (tl->n)
		o->span_ms = ms_of(tl, tl->s[tl->n - 1].t_ns);
	/* The invocation the peak's sample interval ends in (or the one that ended in it). */
	for (uint32_t k = 0; invs && peak_t && k < invs->n; k++) {
		const struct pt_inv_record *r = &invs->r[k];
		uint64_t from = r->start_ns, to = r->end_ns + (uint64_t)tl->interval_ms * 1000000ULL;

		if (r->seq && !r->overwritten && r->start_ns && peak_t >= from && peak_t <= to) {
			o->inv_seq = (int)r->seq;
			break;
		}
	}
}

/* ---- timeline.jsonl ------------------------------------------------------------------------ */

struct tl_edge {
	uint64_t t_ns;
	uint32_t rec;
	bool end;
};

static int edge_cmp(const void *a, const void *b)
{
	const struct tl_edge *x = a, *y = b;

	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	return (int)x->end - (int)y->end;
}

/* The edges of every invocation (seq >= 1) whose record was read, in time order; *n of them. */
static struct tl_edge *edges_of(const struct pt_inv_list *invs, uint32_t *n)
{
	struct tl_edge *e = calloc(invs && invs->n ? invs->n * 2 : 1, sizeof(*e));

	*n = 0;
	for (uint32_t k = 0; e && invs && k < invs->n; k++) {
		const struct pt_inv_record *r = &invs->r[k];

		if (!r->seq || r->overwritten || !r->start_ns)
			continue;
		e[(*n)++] = (struct tl_edge){ r->start_ns, k, false };
		e[(*n)++] = (struct tl_edge){ r->end_ns ? r->end_ns : r->start_ns, k, true };
	}
	if (e)
		qsort(e, *n, sizeof(*e), edge_cmp);
	return e;
}

static void edge_line(FILE *f, const struct pt_timeline *tl, const struct pt_inv_list *invs,
		      const struct tl_edge *e)
{
	const struct pt_inv_record *r = &invs->r[e->rec];

	fprintf(f, "{\"t\":%.3f,\"event\":\"%s\",\"seq\":%" PRIu64, ms_of(tl, e->t_ns),
		e->end ? "end" : "start", r->seq);
	if (!e->end) {
		fputs(",\"id\":", f);
		pt_json_str(f, r->id);   /* sanitized by pt_inv_append */
		fputs("}\n", f);
		return;
	}
	fprintf(f, ",\"outcome\":\"%s\",\"rss_peak\":%" PRId64 ",\"heap_peak\":%" PRId64
		   ",\"arena_resident\":", pt_inv_outcome(r), r->rss_peak, r->heap_peak);
	if (r->arena_read)
		fprintf(f, "%" PRId64 "}\n", r->arena_resident);
	else
		fputs("null}\n", f);
}

int pt_timeline_write_jsonl(FILE *f, const struct pt_timeline *tl, const struct pt_inv_list *invs)
{
	uint32_t ne, i = 0, j = 0;
	struct tl_edge *e = edges_of(invs, &ne);

	if (!e)
		return -ENOMEM;
	fprintf(f, "{\"timeline\":1,\"interval_ms\":%u,\"t0_ns\":%" PRIu64 ",\"pid\":%d}\n",
		tl->interval_ms, tl->t0_ns, (int)tl->pid);
	while (i < tl->n || j < ne) {
		if (j < ne && (i >= tl->n || e[j].t_ns < tl->s[i].t_ns)) {
			edge_line(f, tl, invs, &e[j++]);
			continue;
		}
		const struct pt_tl_sample *x = &tl->s[i++];

		if (tl->light)  /* --light: the heap is not traced */
			fprintf(f, "{\"t\":%.3f,\"rss\":%" PRId64 ",\"anon\":%" PRId64 ",\"file\":%" PRId64
				   ",\"shmem\":%" PRId64 ",\"heap\":null,\"rss_max\":%" PRId64
				   ",\"heap_max\":null}\n",
				ms_of(tl, x->t_ns), x->rss, x->anon, x->file, x->shmem, x->rss_max);
		else
		fprintf(f, "{\"t\":%.3f,\"rss\":%" PRId64 ",\"anon\":%" PRId64 ",\"file\":%" PRId64
			   ",\"shmem\":%" PRId64 ",\"heap\":%" PRId64 ",\"rss_max\":%" PRId64
			   ",\"heap_max\":%" PRId64 "}\n",
			ms_of(tl, x->t_ns), x->rss, x->anon, x->file, x->shmem, x->heap, x->rss_max,
			x->heap_max);
	}
	fprintf(f, "{\"end\":true,\"samples\":%u,\"dropped\":%" PRIu64 ",\"missed_ticks\":%" PRIu64
		   ",\"taken\":%" PRIu64 "}\n", tl->n, tl->dropped, tl->missed, tl->taken);
	free(e);
	return ferror(f) ? -EIO : 0;
}

static int write_one(const char *dir, const char *name, const struct pt_timeline *tl,
		     const struct pt_inv_list *invs,
		     int (*fn)(FILE *, const struct pt_timeline *, const struct pt_inv_list *))
{
	char path[4096];
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = pt_out_fopen(path);
	if (!f)
		return -errno;
	err = fn(f, tl, invs);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int pt_timeline_write_dir(const char *dir, const struct pt_timeline *tl,
			  const struct pt_inv_list *invs)
{
	int err, e;

	if (!tl->interval_ms)
		return 0;
	err = write_one(dir, "timeline.jsonl", tl, invs, pt_timeline_write_jsonl);
	if ((e = write_one(dir, "timeline.svg", tl, invs, pt_timeline_write_svg)) && !err)
		err = e;
	return err;
}

/* ---- what the reports say ------------------------------------------------------------------ */

void pt_tl_text(FILE *f, const struct pt_tl_summary *t)
{
	char b1[32], inv[48] = "";

	if (!t->on)
		return;
	if (t->inv_seq >= 0)
		snprintf(inv, sizeof(inv), ", in invocation %d", t->inv_seq);
	fprintf(f, "  timeline: RSS peak %s at %.3f s%s, of %.3f s sampled every %u ms "
		   "(timeline.jsonl, timeline.svg)\n",
		pt_fmt_bytes(b1, sizeof(b1), (double)t->rss_peak), t->rss_peak_ms / 1e3, inv,
		t->span_ms / 1e3, t->interval_ms);
	if (t->dropped)
		fprintf(f, "  timeline: %" PRIu64 " samples dropped (buffer full): the timeline ends "
			   "early\n", t->dropped);
	if (t->missed)
		fprintf(f, "  timeline: %" PRIu64 " ticks missed (sampler late); the maxima between "
			   "samples are kept\n", t->missed);
}

void pt_tl_json(FILE *f, const struct pt_tl_summary *t)
{
	if (!t->on) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"file\": \"timeline.jsonl\", \"chart\": \"timeline.svg\", \"interval_ms\": %u, "
		   "\"samples\": %" PRIu64 ", \"taken\": %" PRIu64 ", \"dropped\": %" PRIu64
		   ", \"missed_ticks\": %" PRIu64 ", \"rss_peak_bytes\": %" PRId64
		   ", \"rss_peak_ms\": %.3f, ",
		t->interval_ms, t->samples, t->taken, t->dropped, t->missed, t->rss_peak,
		t->rss_peak_ms);
	if (t->light)
		fputs("\"heap_peak_bytes\": null, \"heap_peak_ms\": null}", f);
	else
		fprintf(f, "\"heap_peak_bytes\": %" PRId64 ", \"heap_peak_ms\": %.3f}", t->heap_peak,
			t->heap_peak_ms);
}

int pt_timeline_finish(struct pt_timeline *tl, const char *dir, const struct pt_inv_list *invs)
{
	int err = 0;

	pt_timeline_stop(tl);
	if (dir && (err = pt_timeline_write_dir(dir, tl, invs)))
		fprintf(stderr, "peaktrace: cannot write %s/timeline.jsonl or .svg: %s\n", dir,
			strerror(-err));
	return err;
}
