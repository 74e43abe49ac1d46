// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sandbox.c — the sandbox report: the peak of the summed RSS of every traced process, each
 * process's share at it, its own top stacks (from its own report), and one line per invocation
 * in the style of Lambda's REPORT line, for the whole sandbox.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"
#include "util/outdir.h"
#include "follow/sandbox.h"

#define MIB (1024.0 * 1024.0)

const char *pt_sbx_role(const struct pt_sandbox *sb, int slot)
{
	if (slot < 0 || slot >= PT_SBX_SLOTS)
		return "process";
	if (sb->extension[slot])
		return "extension";
	if (sb->runtime[slot])
		return "runtime";
	return "process";
}

int64_t pt_sbx_unexplained(const __s64 *at_peak, __s64 peak)
{
	int64_t sum = 0;

	for (int i = 0; i < PT_SBX_SLOTS; i++)
		sum += at_peak[i];
	return sum - peak;
}

/* The slot's last image: the program the process finally became. */
static const struct pt_sbx_image *slot_image(const struct pt_sbx_report *r, int slot)
{
	const struct pt_sbx_image *last = NULL;

	for (int i = 0; i < r->nimg; i++)
		if (r->img[i].slot == slot)
			last = &r->img[i];
	return last;
}

/* Lambda's REPORT spells memory in whole MB (MiB), rounded up. */
static uint64_t lambda_mb(int64_t bytes)
{
	return bytes <= 0 ? 0 : ((uint64_t)bytes + (1 << 20) - 1) >> 20;
}

/* The request id of invocation seq of a slot, from its images' invocations.jsonl. */
static void request_id(const struct pt_sbx_report *r, int slot, uint64_t seq, char *out, size_t cap)
{
	char path[4096], line[8192], key[64], raw[256];

	snprintf(out, cap, "?");
	snprintf(key, sizeof(key), "{\"seq\": %" PRIu64 ",", seq);
	for (int i = 0; i < r->nimg; i++) {
		FILE *f;

		if (r->img[i].slot != slot)
			continue;
		snprintf(path, sizeof(path), "%s/%s/invocations.jsonl", r->outdir, r->img[i].dir);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f)) {
			char *p = strstr(line, "\"request_id\": \"");
			size_t n = 0;

			if (strncmp(line, key, strlen(key)) || !p)
				continue;
			/* Up to the closing quote; an escaped id is cut at its first escape. */
			for (p += 15; *p && *p != '"' && *p != '\\' && n < sizeof(raw) - 1; p++)
				raw[n++] = *p;
			raw[n] = 0;
			pt_sanitize(out, cap, raw);
		}
		fclose(f);
	}
}

/* A process's top stacks at its own peak: the biggest lines of one of its folded files. */
static void top_stacks(FILE *f, const struct pt_sbx_report *r, const struct pt_sbx_image *im)
{
	static const char *const files[] = { "peak.folded", "rss.folded" };
	char path[4096], line[16384];
	struct { uint64_t v; char s[160]; } best[5];
	int nb = 0, top = r->top < 5 ? r->top : 5;
	FILE *in = NULL;
	size_t k;

	for (k = 0; k < 2 && !in; k++) {
		snprintf(path, sizeof(path), "%s/%s/%s", r->outdir, im->dir, files[k]);
		in = fopen(path, "r");
	}
	if (!in)
		return;
	memset(best, 0, sizeof(best));
	while (fgets(line, sizeof(line), in)) {
		char *sp = strrchr(line, ' '), *leaf;
		uint64_t v;
		int j;

		if (!sp)
			continue;
		v = strtoull(sp + 1, NULL, 10);
		*sp = 0;
		for (j = nb; j > 0 && best[j - 1].v < v; j--)
			if (j < top)
				best[j] = best[j - 1];
		if (j >= top)
			continue;
		/* The last three frames say where; the whole stack is in the file. */
		leaf = line + strlen(line);
		for (int fr = 0; fr < 3 && leaf > line; fr++)
			for (leaf--; leaf > line && *leaf != ';'; leaf--)
				;
		best[j].v = v;
		snprintf(best[j].s, sizeof(best[j].s), "%s%.150s", leaf > line ? "..." : "", leaf);
		if (nb < top)
			nb++;
	}
	fclose(in);
	fprintf(f, "      its own top stacks (%s/%s):\n", im->dir, files[k - 1]);
	for (int j = 0; j < nb; j++) {
		char b[32];

		fprintf(f, "        %10s  %s\n", pt_fmt_bytes(b, sizeof(b), (double)best[j].v), best[j].s);
	}
}

static void text_members(FILE *f, const struct pt_sbx_report *r)
{
	const struct pt_sandbox *sb = r->sb;

	fprintf(f, "  at that peak (each process's share; its own peak beside it):\n");
	for (int slot = 0; slot < PT_SBX_SLOTS; slot++) {
		const struct pt_sbx_image *im = slot_image(r, slot);
		char b1[32], b2[32];

		if (!im)
			continue;
		fprintf(f, "    PID %-7d %-16s %-9s %10s   own peak %10s   %s/%s\n", im->pid, im->comm,
			pt_sbx_role(sb, slot), pt_fmt_bytes(b1, sizeof(b1), (double)sb->at_peak[slot]),
			pt_fmt_bytes(b2, sizeof(b2), (double)sb->own_peak[slot]), im->dir,
			im->traced ? "" : im->hold_limit ? "  (not traced: let go after the hold limit)" :
			"  (not traced: its session did not start)");
		top_stacks(f, r, im);
	}
}

/* One line per invocation, as Lambda's REPORT line, for the whole sandbox. */
static void text_invocations(FILE *f, const struct pt_sbx_report *r)
{
	const struct pt_sandbox *sb = r->sb;
	uint64_t n = sb->inv_n, first = n > PT_SBX_INVS ? n - PT_SBX_INVS : 0;

	if (!n)
		return;
	fprintf(f, "  invocations (the whole sandbox, in the style of Lambda's REPORT line):\n");
	if (first)
		fprintf(f, "    the first %" PRIu64 " are left out (the kernel keeps the last %d)\n", first,
			PT_SBX_INVS);
	for (uint64_t i = first; i < n; i++) {
		const struct pt_sbx_inv *v = &sb->invs[i % PT_SBX_INVS];
		char id[PT_REQID_LEN + 8];

		request_id(r, (int)v->owner - 1, v->seq, id, sizeof(id));
		fprintf(f, "SANDBOX RequestId: %s\tInvocation: %" PRIu64 "\tMax Memory Used: %" PRIu64 " MB",
			id, (uint64_t)v->seq, lambda_mb(v->peak));
		for (int slot = 0; slot < PT_SBX_SLOTS; slot++) {
			const struct pt_sbx_image *im = slot_image(r, slot);

			if (im)
				fprintf(f, "\t%s[%d] %s: %" PRIu64 " MB", im->comm, im->pid,
					pt_sbx_role(sb, slot), lambda_mb(v->at_peak[slot]));
		}
		fprintf(f, "\n");
	}
}

const char *const pt_sbx_spare_names[] = { "none", "loaded", "loading" };

static void text_follow(FILE *f, const struct pt_sbx_report *r)
{
	const struct pt_sbx_counters *c = &r->c;
	uint64_t held = 0, sum = 0, max = 0, traced = 0, spare[3] = { 0 };

	for (int i = 0; i < r->nimg; i++) {
		traced += r->img[i].traced;
		if (r->img[i].traced && r->img[i].spare >= 0 && r->img[i].spare < 3)
			spare[r->img[i].spare]++;
		if (!r->img[i].held || !r->img[i].traced)
			continue;
		held++;
		sum += r->img[i].held_ns;
		if (r->img[i].held_ns > max)
			max = r->img[i].held_ns;
	}
	fprintf(f, "  following: %" PRIu64 " process images traced (%" PRIu64 " held at their exec until "
		   "traced: %.0f ms each on average, at most %.0f ms)\n", traced, held,
		held ? sum / 1e6 / held : 0.0, max / 1e6);
	fprintf(f, "  sessions: %" PRIu64 " images taken by a spare session already loaded, %" PRIu64
		   " by one still loading, %" PRIu64 " by a session started for them (%" PRIu64 " spares "
		   "started, %" PRIu64 " images unfit for one, %" PRIu64 " spares failed)\n",
		spare[PT_SBX_SPARE_LOADED], spare[PT_SBX_SPARE_LOADING], spare[PT_SBX_SPARE_NONE],
		c->spares_started, c->spares_unfit, c->spares_failed);
	fprintf(f, "  not traced: %" PRIu64 " processes ended before an exec, %" PRIu64 " past %d "
		   "processes, %" PRIu64 " whose session failed, %" PRIu64 " let go untraced after %.1f s "
		   "held at exec, %" PRIu64 " let go before their allocator was mapped; %" PRIu64
		   " invocations overlapping another process's (not in the sandbox figures)\n",
		c->exited_without_exec, c->slots_full, PT_SBX_SLOTS, c->session_failed, c->hold_limit,
		r->hold_ms / 1000.0, c->alloc_not_found, (uint64_t)r->sb->inv_overlap);
	if (r->sb->inv_owner)
		fprintf(f, "  an invocation was still running when tracing stopped: it is in its process's "
			   "own report, not in the sandbox's lines\n");
}

static void write_text(FILE *f, const struct pt_sbx_report *r)
{
	const struct pt_sandbox *sb = r->sb;
	int64_t own = 0, unexpl = pt_sbx_unexplained(sb->at_peak, sb->peak);
	char b1[32], b2[32], b3[32];

	for (int i = 0; i < PT_SBX_SLOTS; i++)
		own += sb->own_peak[i];
	fprintf(f, "SANDBOX (every traced process together)\n");
	fprintf(f, "  peak of the summed RSS: %s (the sum of each process's own peak would say %s); "
		   "shares not adding up to it: %s\n", pt_fmt_bytes(b1, sizeof(b1), (double)sb->peak),
		pt_fmt_bytes(b2, sizeof(b2), (double)own),
		pt_fmt_bytes(b3, sizeof(b3), (double)unexpl));
	text_members(f, r);
	text_invocations(f, r);
	text_follow(f, r);
}

static void json_i64s(FILE *f, const char *name, const __s64 *v, const struct pt_sbx_report *r)
{
	bool first = true;

	fprintf(f, "\"%s\": {", name);
	for (int slot = 0; slot < PT_SBX_SLOTS; slot++) {
		const struct pt_sbx_image *im = slot_image(r, slot);

		if (!im)
			continue;
		fprintf(f, "%s\"%d\": %" PRId64, first ? "" : ", ", im->pid, (int64_t)v[slot]);
		first = false;
	}
	fprintf(f, "}");
}

static void json_images(FILE *f, const struct pt_sbx_report *r)
{
	const struct pt_sandbox *sb = r->sb;

	fprintf(f, "  \"images\": [");
	for (int i = 0; i < r->nimg; i++) {
		const struct pt_sbx_image *im = &r->img[i];

		fprintf(f, "%s\n    {\"pid\": %d, \"image\": %d, \"comm\": ", i ? "," : "", im->pid, im->image);
		pt_json_str(f, im->comm);
		fprintf(f, ", \"dir\": ");
		pt_json_str(f, im->dir);
		fprintf(f, ", \"role\": \"%s\", \"traced\": %s, \"held\": %s, \"held_ms\": %.3f, \"spare\": \"%s\", "
			   "\"session_exit\": %d, "
			   "\"share_at_peak\": %" PRId64 ", \"own_peak\": %" PRId64 ", "
			   "\"extension_requests\": %u, \"invocations\": %u}",
			pt_sbx_role(sb, im->slot), im->traced ? "true" : "false", im->held ? "true" : "false",
			im->held_ns / 1e6, pt_sbx_spare_names[im->spare >= 0 && im->spare < 3 ? im->spare : 0],
			im->session_rc, (int64_t)sb->at_peak[im->slot], (int64_t)sb->own_peak[im->slot],
			sb->extension[im->slot], sb->runtime[im->slot]);
	}
	fprintf(f, "\n  ],\n");
}

static void json_invocations(FILE *f, const struct pt_sbx_report *r)
{
	const struct pt_sandbox *sb = r->sb;
	uint64_t n = sb->inv_n, first = n > PT_SBX_INVS ? n - PT_SBX_INVS : 0;

	fprintf(f, "  \"invocations_left_out\": %" PRIu64 ",\n  \"invocations\": [", first);
	for (uint64_t i = first; i < n; i++) {
		const struct pt_sbx_inv *v = &sb->invs[i % PT_SBX_INVS];
		const struct pt_sbx_image *im = slot_image(r, (int)v->owner - 1);
		char id[PT_REQID_LEN + 8];

		request_id(r, (int)v->owner - 1, v->seq, id, sizeof(id));
		fprintf(f, "%s\n    {\"pid\": %d, \"seq\": %" PRIu64 ", \"request_id\": ", i > first ? "," : "",
			im ? im->pid : 0, (uint64_t)v->seq);
		pt_json_str(f, id);
		fprintf(f, ", \"rss_start\": %" PRId64 ", \"rss_peak\": %" PRId64 ", \"peak_ms\": %.3f, ",
			(int64_t)v->start, (int64_t)v->peak,
			v->peak_ns > r->start_ns ? (v->peak_ns - r->start_ns) / 1e6 : 0.0);
		json_i64s(f, "at_peak", v->at_peak, r);
		fprintf(f, "}");
	}
	fprintf(f, "\n  ],\n");
}

static void write_json(FILE *f, const struct pt_sbx_report *r)
{
	const struct pt_sandbox *sb = r->sb;
	const struct pt_sbx_counters *c = &r->c;
	int64_t own = 0;

	for (int i = 0; i < PT_SBX_SLOTS; i++)
		own += sb->own_peak[i];
	fprintf(f, "{\n  \"rss_peak\": %" PRId64 ",\n  \"peak_ms\": %.3f,\n  \"sum_of_own_peaks\": %" PRId64
		   ",\n  \"shares_unexplained\": %" PRId64 ",\n  \"rss_updates\": %" PRIu64 ",\n  ",
		(int64_t)sb->peak, sb->peak_ns > r->start_ns ? (sb->peak_ns - r->start_ns) / 1e6 : 0.0, own,
		pt_sbx_unexplained(sb->at_peak, sb->peak), (uint64_t)sb->updates);
	json_i64s(f, "at_peak", sb->at_peak, r);
	fprintf(f, ",\n");
	json_images(f, r);
	json_invocations(f, r);
	fprintf(f, "  \"not_traced\": {\"exited_without_exec\": %" PRIu64 ", \"slots_full\": %" PRIu64
		   ", \"session_failed\": %" PRIu64 ", \"hold_limit\": %" PRIu64
		   ", \"allocator_not_found\": %" PRIu64 "},\n"
		   "  \"spares\": {\"started\": %" PRIu64 ", \"unfit\": %" PRIu64 ", \"failed\": %" PRIu64 "},\n"
		   "  \"processes_started\": %" PRIu64 ",\n  \"execs\": %" PRIu64 ",\n"
		   "  \"invocations_overlapping\": %" PRIu64 ",\n  \"invocation_running_at_end\": %s\n}\n",
		c->exited_without_exec, c->slots_full, c->session_failed, c->hold_limit, c->alloc_not_found,
		c->spares_started, c->spares_unfit, c->spares_failed, c->processes,
		c->execs, (uint64_t)sb->inv_overlap, sb->inv_owner ? "true" : "false");
}

int pt_sbx_report_write(const struct pt_sbx_report *r, bool quiet)
{
	char path[4096];
	FILE *f;
	int err = 0;

	if (!quiet)
		write_text(stdout, r);
	snprintf(path, sizeof(path), "%s/sandbox.txt", r->outdir);
	if ((f = pt_out_fopen(path))) {
		write_text(f, r);
		if (fclose(f))
			err = -errno;
	} else {
		err = -errno;
	}
	snprintf(path, sizeof(path), "%s/sandbox.json", r->outdir);
	if ((f = pt_out_fopen(path))) {
		write_json(f, r);
		if (fclose(f))
			err = -errno;
	} else {
		err = -errno;
	}
	return err;
}
