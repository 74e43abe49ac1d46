// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* stream.c — the invocation stream while tracing (stream.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "util/fmt.h"
#include "util/outdir.h"
#include "bpf/inv.h"
#include "bpf/sample.h"
#include "target/proc.h"
#include "invocation/stream.h"
#include "invocation/invgraphs.h"

#define READING_SETTLE_NS 50000000ULL

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint32_t pt_stacks_span(const struct peaktrace_bpf *skel, uint32_t max_stacks)
{
	uint32_t max = max_stacks, inner = pt_tier_start(max, PT_TIER_INNER);
	uint32_t leaf = pt_tier_start(max, PT_TIER_LEAF);
	uint64_t whole = skel->bss->g.next_stack + 1, in = skel->bss->tier_next[PT_TIER_INNER];

	if (skel->bss->tier_next[PT_TIER_LEAF])
		return max;
	if (in)
		return inner + (uint32_t)(in < leaf - inner ? in : leaf - inner);
	return whole < inner ? (uint32_t)whole : inner;
}

/* A streaming output file in the output directory; NULL after saying why. */
static FILE *open_out(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = pt_out_fopen(path);
	if (!f)
		fprintf(stderr, "peaktrace: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

int pt_inv_stream_open(struct pt_inv_stream *st, const char *outdir, bool emf, uint64_t max_output,
		       bool launched, const char *comm)
{
	st->out_cap = outdir ? max_output : 0;
	if (outdir) {
		if (!(st->jsonl = open_out(outdir, "invocations.jsonl")) ||
		    (emf && !(st->emf = open_out(outdir, "emf.jsonl"))))
			return -1;
	} else if (emf) {
		st->emf = stdout;
	}
	if (emf)
		pt_emf_function_name(st->pid, launched, comm, st->function_name, sizeof(st->function_name));
	return 0;
}

/* The record whose end reading is pending, no longer pending (NULL: none). */
static struct pt_inv_record *reading_pending(struct pt_inv_stream *st)
{
	if (!st->reading_due)
		return NULL;
	st->reading_due = 0;
	return st->reading_rec < st->list->n ? &st->list->r[st->reading_rec] : NULL;
}

/* The next invocation began (at start_ts) before the pending reading was due: it is not taken.
 * Reading smaps and the arenas now would run beside that invocation and slow it (the mappings'
 * walk holds the target's mmap lock and takes a core: a 5 ms Node invocation took 1.5 ms
 * longer under --light); the record says so instead (reading_skipped, next_gap_ns). */
static void reading_skip(struct pt_inv_stream *st, uint64_t start_ts)
{
	struct pt_inv_record *rec = reading_pending(st);

	if (!rec)
		return;
	/* The row since attaching, ended by this start itself (the runtime already waited for its
	 * first event): there was no moment between the two to read in, so nothing was skipped. */
	if (rec->seq == 0 && rec->attached && rec->outcome == PT_OUT_INIT && start_ts >= rec->end_ns &&
	    start_ts - rec->end_ns < 1000000)
		return;
	rec->reading_skipped = true;
	rec->next_gap_ns = start_ts > rec->end_ns ? start_ts - rec->end_ns : 0;
}

void pt_inv_reading_now(struct pt_inv_stream *st)
{
	struct pt_inv_record *rec = reading_pending(st);

	if (rec)
		st->reading(st->reading_ctx, rec, st->reading_rec);
}

/* rec's stacks were read, or would be, while its half of the stacks' counters was reused. */
static void inv_stacks_lost(struct pt_inv_record *rec)
{
	free(rec->all);
	free(rec->rss_all);
	rec->all = rec->rss_all = NULL;
	rec->nall = rec->nrss_all = rec->ntop = rec->nrss_top = 0;
	rec->other_stacks = 0;
	rec->other_bytes = rec->other_count = 0;
	rec->stacks_lost = true;
}

/* --max-invocations-kept: the records no longer needed by position (written, and not awaiting
 * their end reading) let go of but for the report's (invocation.h), the indexes into them
 * moved down with them. */
static void inv_trim(struct pt_inv_stream *st)
{
	uint32_t hi = st->written, gone;

	if (st->reading_due && st->reading_rec < hi)
		hi = st->reading_rec;
	if (!(gone = pt_inv_list_trim(st->list, hi)))
		return;
	st->written -= gone;
	if (st->reading_rec >= gone)
		st->reading_rec -= gone;
}

/* A request id BPF kept only the first PT_REQID_LEN bytes of (its POST line's id was longer):
 * the whole one from the answer to "next" when it is the same id (length, hash and those bytes,
 * bpf/rapi.h); else the part kept, followed by "...". */
static void inv_whole_id(struct pt_inv_stream *st, struct pt_inv_record *rec, const struct pt_inv *inv)
{
	const char *id = st->start_id[inv->seq & 1];
	size_t n = strlen(id);
	uint64_t h = PT_RAPI_HASH0;

	if (inv->id_full_len <= PT_REQID_LEN || inv->id_len < PT_REQID_LEN)
		return;
	for (size_t i = 0; i < n; i++)
		h = pt_rapi_hash_step(h, (unsigned char)id[i]);
	if (n == inv->id_full_len && h == inv->id_hash && !memcmp(id, inv->id, PT_REQID_LEN))
		snprintf(rec->id, sizeof(rec->id), "%s", id);
	else
		snprintf(rec->id + PT_REQID_LEN, sizeof(rec->id) - PT_REQID_LEN, "...");
}

/* No record event (the ring buffer was full), and two more invocations began before we got
 * here: the buffer holds a newer one. Its figures are lost, not its times. */
static void inv_overwritten(struct pt_inv_stream *st, struct pt_inv_record *rec, uint64_t seq,
			    uint64_t end_ts)
{
	free(rec->all);
	memset(rec, 0, sizeof(*rec));
	rec->seq = seq;
	rec->overwritten = true;
	/* The ring buffer's START and END events keep its times, for invocations.jsonl. */
	rec->start_ns = st->start_ts[seq & 1];
	rec->end_ns = end_ts;
	/* And its epochs, which place blocks (invocation/leaks.c): every invocation, the init
	 * phase (0, seeded at epoch 1) included, takes exactly one bump when it starts and one when
	 * it ends (bpf/invocation.bpf.h: inv_start ends the one before if needed). */
	rec->start_epoch = 2 * seq + 1;
	rec->end_epoch = 2 * seq + 2;
	if (st->list->n) {   /* its START event lost too: no earlier than the record before */
		const struct pt_inv_record *prev = &st->list->r[st->list->n - 1];

		if (rec->start_ns < prev->start_ns)
			rec->start_ns = prev->end_ns ? prev->end_ns : prev->start_ns;
	}
}

/* The record's VmHWM: the process's now, never below its mark at the invocation's end, its mm's
 * at exit, its RSS of the moment or any read before. */
static void inv_vmhwm(struct pt_inv_stream *st, struct pt_inv_record *rec, uint64_t hwm_end,
		      const struct pt_inv_target *t)
{
	rec->vmhwm = pt_proc_vmhwm(st->pid);
	if (rec->vmhwm < hwm_end)
		rec->vmhwm = hwm_end;      /* the mark at its end, whatever happened since */
	if (rec->vmhwm < t->hiwater)
		rec->vmhwm = t->hiwater;   /* the process is gone: its mm's mark at exit */
	if (rec->vmhwm < (uint64_t)rec->rss_end)
		rec->vmhwm = rec->rss_end;    /* VmHWM is never below the RSS of the moment */
	if (rec->vmhwm < *t->vmhwm)
		rec->vmhwm = *t->vmhwm;
	else
		*t->vmhwm = rec->vmhwm;
}

/* An invocation (or the init phase) ended: its figures from its PT_EV_INV_RECORD, else from its
 * half of the double buffer, and its stacks from the stats map now. */
static void inv_ended(struct pt_inv_stream *st, uint64_t seq, uint64_t end_ts, const struct pt_inv_target *t)
{
	volatile struct pt_global *g = &st->skel->bss->g;
	const struct pt_inv *inv = st->ended_ok && st->ended.seq == seq ? &st->ended : &st->skel->bss->g.inv[seq & 1];
	uint64_t rss_seq = st->skel->bss->rss_g.inv_peak_seq[seq & 1];
	uint32_t nstacks = pt_stacks_span(st->skel, st->max_stacks);
	struct pt_inv_record rec;
	uint64_t hwm_end;
	/* Its stacks' snapshots at its peak are in its half of each stack's counters until the
	 * invocation after next starts (bpf/heap.bpf.h): then they are not read at all, which
	 * also lets a loop that fell behind (~20 ms a read at 115k stacks) catch up. */
	bool behind = g->inv_seq >= seq + 2;
	int stats_fd = behind ? -1 : bpf_map__fd(st->skel->maps.stats);

	st->ended_ok = false;
	pt_inv_capture(&rec, inv, stats_fd, nstacks, st->per_invocation,
		       st->sampled ? PT_SAMPLE_COUNT_SHIFT : 0);
	pt_inv_capture_rss(&rec, rss_seq, stats_fd, nstacks, st->per_invocation);
	if (behind || g->inv_seq >= seq + 2)
		inv_stacks_lost(&rec);
	inv_whole_id(st, &rec, inv);
	hwm_end = inv->hwm_end;
	if (inv->seq != seq) {
		hwm_end = 0;
		inv_overwritten(st, &rec, seq, end_ts);
	}
	if (!rec.id[0] && seq)
		snprintf(rec.id, sizeof(rec.id), "%s", st->start_id[seq & 1]);
	rec.attached = st->attached;
	rec.light = st->light;
	/* The kernel closes the invocation the process ended in after the exit event (bpf/
	 * process.bpf.h), so the exit code is known here: a signal killed it, or it exited. */
	if (t->exited)
		pt_inv_exit_outcome(&rec, t->exit_code);
	inv_vmhwm(st, &rec, hwm_end, t);
	pt_inv_reading_now(st);   /* the previous one, if still pending */
	inv_trim(st);
	if (pt_inv_append(st->list, &rec) == 0 && st->readings) {
		st->reading_rec = st->list->n - 1;
		st->reading_due = now_ns() + READING_SETTLE_NS;
	}
}

void pt_inv_event(struct pt_inv_stream *st, const void *data, size_t len, const struct pt_inv_target *t)
{
	const struct pt_inv_event *ie = data;
	const struct pt_inv_record_event *re = data;

	switch (ie->type) {
	case PT_EV_INV_START:
		if (len < sizeof(*ie))
			return;
		pt_rapi_request_id(ie->data, ie->len < PT_RAPI_COPY ? ie->len : PT_RAPI_COPY,
				   st->start_id[ie->seq & 1], sizeof(st->start_id[0]));
		st->start_ts[ie->seq & 1] = ie->ts;
		reading_skip(st, ie->ts);   /* the next invocation began before the reading was due */
		break;
	case PT_EV_INV_RECORD:
		if (len < sizeof(*re))
			return;
		memcpy(&st->ended, &re->inv, sizeof(st->ended));
		st->ended_ok = true;
		break;
	case PT_EV_INV_END:
		if (len < sizeof(*ie))
			return;
		inv_ended(st, ie->seq, ie->ts, t);
		break;
	}
}

/* --max-output: room for another line in DIR's streams, else *cut counted (the line not written). */
static bool out_room(struct pt_inv_stream *st, uint64_t *cut)
{
	if (!st->out_cap || st->out_used < st->out_cap)
		return true;
	(*cut)++;
	return false;
}

/* The streams' bytes so far, for out_room (the per-invocation graphs come after them). */
static void out_count(struct pt_inv_stream *st)
{
	long a = st->jsonl ? ftell(st->jsonl) : 0, b = st->emf && st->emf != stdout ? ftell(st->emf) : 0;

	st->out_used = (a > 0 ? (uint64_t)a : 0) + (b > 0 ? (uint64_t)b : 0);
}

/* Kept out of the event callback: symbolizing can take a while (a large binary's first lookup),
 * and the kernel keeps only two invocations, so every pending end is captured first and written
 * afterwards. */
void pt_inv_flush(struct pt_inv_stream *st, const struct pt_stack_src *src)
{
	if (st->reading_due && now_ns() >= st->reading_due)
		pt_inv_reading_now(st);
	for (; st->written < st->list->n && !(st->reading_due && st->written >= st->reading_rec);
	     st->written++) {
		const struct pt_inv_record *rec = &st->list->r[st->written];

		if (rec->seq && !st->quiet) {
			fputs("peaktrace: ", stderr);
			pt_inv_line(stderr, rec);
		}
		if (st->jsonl && out_room(st, &st->jsonl_cut)) {
			pt_inv_json(st->jsonl, rec, src);
			fputc('\n', st->jsonl);
			fflush(st->jsonl);
			out_count(st);
		}
		if (st->emf && rec->seq && (st->emf == stdout || out_room(st, &st->emf_cut))) {
			struct timespec now;

			clock_gettime(CLOCK_REALTIME, &now);
			pt_inv_emf(st->emf, rec, st->function_name,
				   (uint64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000);
			fputc('\n', st->emf);
			fflush(st->emf);
			out_count(st);
		}
	}
	inv_trim(st);
}

void pt_inv_close_running(struct pt_inv_stream *st, const struct pt_inv_target *t)
{
	struct pt_inv cur = st->skel->bss->g.inv[st->skel->bss->g.inv_seq & 1];
	const struct pt_global *gg = &st->skel->bss->g;
	struct pt_inv_record rec;
	uint32_t n = pt_stacks_span(st->skel, st->max_stacks);

	if (cur.state != PT_INV_RUNNING)
		return;
	/* Closed by the rule the BPF side uses at a boundary (bpf/inv.h). */
	pt_inv_close(&cur, gg, now_ns(), PT_OUT_UNFINISHED);
	/* Blocks allocated from here on are after it, as the BPF side's end would say. */
	cur.end_epoch = __atomic_add_fetch(&st->skel->bss->g.epoch, 1, __ATOMIC_SEQ_CST);
	pt_inv_capture(&rec, &cur, bpf_map__fd(st->skel->maps.stats), n, st->per_invocation,
		       st->sampled ? PT_SAMPLE_COUNT_SHIFT : 0);
	/* And its RSS stacks, as inv_ended reads them at a boundary. */
	pt_inv_capture_rss(&rec, st->skel->bss->rss_g.inv_peak_seq[cur.seq & 1],
			   bpf_map__fd(st->skel->maps.stats), n, st->per_invocation);
	if (!rec.id[0] && rec.seq)
		snprintf(rec.id, sizeof(rec.id), "%s", st->start_id[rec.seq & 1]);
	rec.attached = st->attached;
	rec.light = st->light;
	rec.vmhwm = *t->vmhwm > t->hiwater ? *t->vmhwm : t->hiwater;
	pt_inv_append(st->list, &rec);
}

int pt_inv_max_peak(const struct pt_inv_list *l, uint64_t max_peak, int code, int max_peak_code)
{
	uint32_t k;

	for (k = 0; k < l->n; k++) {
		const struct pt_inv_record *ir = &l->r[k];
		char b1[32], b2[32];

		if (ir->seq == 0 || (uint64_t)ir->rss_peak <= max_peak)
			continue;
		fprintf(stderr, "peaktrace: invocation %" PRIu64 " (RequestId %s) peaked at %s RSS, over "
				"--max-peak %s; top stacks at its peak in the report\n",
			ir->seq, ir->id[0] ? ir->id : "?",
			pt_fmt_bytes(b1, sizeof(b1), (double)ir->rss_peak),
			pt_fmt_bytes(b2, sizeof(b2), (double)max_peak));
		code = max_peak_code;
	}
	if (l->dropped_over_max_peak) {
		fprintf(stderr, "peaktrace: and %" PRIu64 " more invocations over --max-peak, not kept in memory "
				"(--max-invocations-kept %u): in invocations.jsonl\n",
			l->dropped_over_max_peak, l->keep);
		code = max_peak_code;
	}
	return code;
}

void pt_inv_stream_close(struct pt_inv_stream *st)
{
	if (st->jsonl)
		fclose(st->jsonl);
	if (st->emf && st->emf != stdout)
		fclose(st->emf);
	st->jsonl = st->emf = NULL;
}

void pt_inv_stream_account(const struct pt_inv_stream *st, struct pt_outcap *out)
{
	out->cap = st->out_cap;
	out->used = st->out_used;
	out->jsonl_cut = st->jsonl_cut;
	out->emf_cut = st->emf_cut;
}
