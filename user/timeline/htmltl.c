// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * htmltl.c — the memory-over-time chart's data for report.html: DIR/timeline.jsonl (the sampler's
 * file: a header line, {"t","rss",...} samples, "start"/"end" events, an {"end":true} trailer),
 * read bounded, merged to at most PT_HTML_MAX_POINTS points (each keeps its bucket's maximum, so
 * no peak is lost); without it, the RSS trajectories the invocation records hold.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/json.h"
#include "util/fmt.h"
#include "timeline/timeline.h"

struct tl_pt { double t, rss, rss_max, heap; };
struct tl_band { uint64_t seq; double t0, t1; char id[PT_REQID_SHOW + 1]; char outcome[32]; };

struct tl {
	struct tl_pt *pt;
	size_t n, cap;
	struct tl_band *band;
	size_t nband, bcap;
	uint64_t interval_ms, samples, dropped, missed, lines, bad, long_lines, cut_bands;
	bool header, trailer, cut;
	bool heap_seen;         /* a sample had a heap figure (null with --light) */
};

static bool num(struct pt_json o, const char *key, double *out)
{
	struct pt_json v;
	char buf[64];
	size_t n;
	char *end;

	if (!pt_json_get(o, key, &v) || pt_json_type(v) != PT_JSON_NUMBER)
		return false;
	n = (size_t)(v.end - v.p);
	if (n >= sizeof(buf))
		return false;
	memcpy(buf, v.p, n);
	buf[n] = 0;
	*out = strtod(buf, &end);
	return end != buf;
}

static int tl_push_band(struct tl *t, struct pt_json o, double ms)
{
	struct tl_band *b;
	struct pt_json v;
	double seq = 0;
	char raw[4 * PT_REQID_LEN];

	if (t->nband == t->bcap) {
		size_t nc = t->bcap ? t->bcap * 2 : 64;

		if (nc > 100000) {
			t->cut_bands++;
			return 0;
		}
		if (!(b = realloc(t->band, nc * sizeof(*b))))
			return -ENOMEM;
		t->band = b;
		t->bcap = nc;
	}
	b = &t->band[t->nband++];
	memset(b, 0, sizeof(*b));
	num(o, "seq", &seq);
	b->seq = (uint64_t)seq;
	b->t0 = ms;
	b->t1 = -1;
	/* Raw JSON string text (escapes not decoded), sanitized like every request id. */
	if (pt_json_get(o, "id", &v) && pt_json_str_copy(v, raw, sizeof(raw)))
		pt_sanitize(b->id, sizeof(b->id), raw);
	return 0;
}

static void tl_end_band(struct tl *t, struct pt_json o, double ms)
{
	struct pt_json v;
	double seq = -1;
	char raw[64];
	size_t i;

	num(o, "seq", &seq);
	for (i = t->nband; i-- > 0;)
		if ((double)t->band[i].seq == seq) {
			t->band[i].t1 = ms;
			if (pt_json_get(o, "outcome", &v) && pt_json_str_copy(v, raw, sizeof(raw)))
				pt_sanitize(t->band[i].outcome, sizeof(t->band[i].outcome), raw);
			return;
		}
}

static int tl_line(struct tl *t, const char *s, size_t len)
{
	struct pt_json o, v;
	double ms, x;
	struct tl_pt *p;

	if (pt_json_parse(s, len, &o) || pt_json_type(o) != PT_JSON_OBJECT) {
		t->bad++;
		return 0;
	}
	if (pt_json_get(o, "timeline", &v)) {
		t->header = true;
		if (num(o, "interval_ms", &x))
			t->interval_ms = (uint64_t)x;
		return 0;
	}
	if (pt_json_get(o, "end", &v) && pt_json_type(v) == PT_JSON_TRUE) {
		t->trailer = true;
		if (num(o, "samples", &x))
			t->samples = (uint64_t)x;
		if (num(o, "dropped", &x))
			t->dropped = (uint64_t)x;
		if (num(o, "missed_ticks", &x))
			t->missed = (uint64_t)x;
		return 0;
	}
	if (!num(o, "t", &ms)) {
		t->bad++;
		return 0;
	}
	if (pt_json_get(o, "event", &v)) {
		if (pt_json_str_is(v, "start"))
			return tl_push_band(t, o, ms);
		if (pt_json_str_is(v, "end"))
			tl_end_band(t, o, ms);
		return 0;
	}
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 1024;

		if (!(p = realloc(t->pt, nc * sizeof(*p))))
			return -ENOMEM;
		t->pt = p;
		t->cap = nc;
	}
	p = &t->pt[t->n];
	memset(p, 0, sizeof(*p));
	p->t = ms;
	if (!num(o, "rss", &p->rss)) {
		t->bad++;
		return 0;
	}
	num(o, "rss_max", &p->rss_max);
	if (num(o, "heap", &p->heap))
		t->heap_seen = true;
	t->n++;
	return 0;
}

/* 0 read, -ENOENT absent, else -errno. Never blocks: a FIFO or device is refused. */
static int tl_read(struct tl *t, const char *dir)
{
	char path[4096], line[PT_HTML_MAX_TL_LINE + 2];
	struct stat sb;
	FILE *f;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/timeline.jsonl", dir);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		return -errno;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);

		if (++t->lines > PT_HTML_MAX_TL_LINES) {
			t->cut = true;
			break;
		}
		if (len && line[len - 1] != '\n' && !feof(f)) {
			int c;

			t->long_lines++;
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		err = tl_line(t, line, len);
	}
	fclose(f);
	return err;
}

/* Merge to at most max points; each keeps its bucket's first t and the maximum of each figure. */
static size_t tl_merge(struct tl *t, size_t max)
{
	size_t k = (t->n + max - 1) / max, i, o = 0;

	if (t->n <= max)
		return 1;
	for (i = 0; i < t->n; i += k, o++) {
		struct tl_pt m = t->pt[i];
		size_t j;

		for (j = i + 1; j < i + k && j < t->n; j++) {
			if (t->pt[j].rss > m.rss)
				m.rss = t->pt[j].rss;
			if (t->pt[j].rss_max > m.rss_max)
				m.rss_max = t->pt[j].rss_max;
			if (t->pt[j].heap > m.heap)
				m.heap = t->pt[j].heap;
		}
		t->pt[o] = m;
	}
	t->n = o;
	return k;
}

static void tl_series(FILE *f, const struct tl *t, size_t off, const char *name)
{
	size_t i;

	fprintf(f, ", \"%s\": [", name);
	for (i = 0; i < t->n; i++)
		fprintf(f, "%s%.0f", i ? "," : "", *(const double *)((const char *)&t->pt[i] + off));
	fputc(']', f);
}

static void tl_write(FILE *f, struct tl *t, const char *source, const char *note, bool have_heap)
{
	size_t merged = tl_merge(t, PT_HTML_MAX_POINTS), i;

	fputs("{\"source\": ", f);
	pt_json_str_script(f, source);
	fputs(", \"note\": ", f);
	pt_json_str_script(f, note);
	fprintf(f, ", \"interval_ms\": %" PRIu64 ", \"samples\": %" PRIu64 ", \"dropped\": %" PRIu64
		   ", \"missed_ticks\": %" PRIu64 ", \"trailer\": %s, \"bad_lines\": %" PRIu64
		   ", \"long_lines\": %" PRIu64 ", \"cut\": %s, \"cut_bands\": %" PRIu64
		   ", \"merged\": %zu, \"heap\": %s",
		t->interval_ms, t->samples, t->dropped, t->missed, t->trailer ? "true" : "false", t->bad,
		t->long_lines, t->cut ? "true" : "false", t->cut_bands, merged, have_heap ? "true" : "false");
	tl_series(f, t, offsetof(struct tl_pt, t), "t");
	tl_series(f, t, offsetof(struct tl_pt, rss), "rss");
	tl_series(f, t, offsetof(struct tl_pt, rss_max), "rss_max");
	if (have_heap)
		tl_series(f, t, offsetof(struct tl_pt, heap), "heap_v");
	fputs(", \"bands\": [", f);
	for (i = 0; i < t->nband; i++) {
		fprintf(f, "%s{\"seq\": %" PRIu64 ", \"t0\": %.3f, \"t1\": %.3f, \"id\": ", i ? "," : "",
			t->band[i].seq, t->band[i].t0, t->band[i].t1);
		pt_json_str_script(f, t->band[i].id);
		fputs(", \"outcome\": ", f);
		pt_json_str_script(f, t->band[i].outcome);
		fputc('}', f);
	}
	fputs("]}", f);
}

/* The invocation records' own RSS trajectories (start, sampled points, end), in ms since the
 * first record's start; the Lambda line is their running maximum. */
static int tl_from_records(struct tl *t, const struct pt_inv_list *invs)
{
	uint64_t t0 = 0;
	uint32_t k, j;
	double hwm = 0;

	for (k = 0; invs && k < invs->n; k++)
		if (invs->r[k].start_ns && (!t0 || invs->r[k].start_ns < t0))
			t0 = invs->r[k].start_ns;
	for (k = 0; invs && k < invs->n; k++) {
		const struct pt_inv_record *ir = &invs->r[k];
		size_t need = t->n + ir->traj_n + 2;

		if (ir->overwritten || !ir->start_ns || ir->start_ns < t0)
			continue;
		if (need > t->cap) {
			struct tl_pt *p = realloc(t->pt, need * 2 * sizeof(*p));

			if (!p)
				return -ENOMEM;
			t->pt = p;
			t->cap = need * 2;
		}
		if (t->nband < 100000) {
			struct tl_band *b = realloc(t->band, (t->nband + 1) * sizeof(*b));

			if (!b)
				return -ENOMEM;
			t->band = b;
			b = &t->band[t->nband++];
			memset(b, 0, sizeof(*b));
			b->seq = ir->seq;
			b->t0 = (double)(ir->start_ns - t0) / 1e6;
			b->t1 = ir->end_ns >= ir->start_ns ? (double)(ir->end_ns - t0) / 1e6 : -1;
			snprintf(b->id, sizeof(b->id), "%s", ir->id);
			snprintf(b->outcome, sizeof(b->outcome), "%s", pt_inv_outcome(ir));
		}
#define TL_ADD(ns, v) do { double r_ = (double)(v); if (r_ > hwm) hwm = r_; \
	t->pt[t->n++] = (struct tl_pt){ (double)((ns) - t0) / 1e6, r_, hwm, 0 }; } while (0)
		TL_ADD(ir->start_ns, ir->rss_start);
		for (j = 0; j < ir->traj_n; j++)
			if (ir->traj[j].t_ns >= ir->start_ns)
				TL_ADD(ir->traj[j].t_ns, ir->traj[j].rss);
		if (ir->end_ns >= ir->start_ns)
			TL_ADD(ir->end_ns, ir->rss_end);
#undef TL_ADD
	}
	return 0;
}

void pt_html_timeline(FILE *f, const char *dir, const struct pt_inv_list *invs)
{
	struct tl t = { 0 };
	int err = tl_read(&t, dir);
	const char *why = NULL;

	if (err == 0 && t.n) {
		tl_write(f, &t, "timeline.jsonl", "", t.heap_seen);
	} else {
		if (err == 0)
			why = "timeline.jsonl has no samples";
		else if (err != -ENOENT)
			why = "timeline.jsonl could not be read";
		free(t.pt);
		free(t.band);
		memset(&t, 0, sizeof(t));
		if (tl_from_records(&t, invs) == 0 && t.n) {
			/* Said in the page: where the chart's points came from, and why. */
			tl_write(f, &t, "records", why ? why : "no timeline.jsonl", false);
		} else {
			fputs("{\"source\": null, \"reason\": ", f);
			pt_json_str_script(f, why ? why : "no timeline.jsonl and no invocation with an RSS trajectory");
			fputc('}', f);
		}
	}
	free(t.pt);
	free(t.band);
}
