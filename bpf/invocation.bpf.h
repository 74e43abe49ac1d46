/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * invocation.bpf.h — invocations: their start and end from the target's Runtime
 * API traffic (rapi.h parses it) or from uprobes on runtime functions, and what each records
 * (pt_inv in g.inv[], closed by inv.h's rule); user space hears of each edge by the ring buffer.
 */
#ifndef PEAKTRACE_INVOCATION_BPF_H
#define PEAKTRACE_INVOCATION_BPF_H

#include "state.bpf.h"
/* rapi.h's request id search, as a bpf_loop (rapi_id_search below). */
static __u32 rapi_id_search(__u32 len);
#define PT_RAPI_ID_SEARCH(len) rapi_id_search(len)
#include "rapi.h"
#include "inv.h"
#include "rss.bpf.h"
#include "sandbox.bpf.h"

/* key: tgid << 32 | fd; value: enum pt_rapi_fd_state (peaktrace.h): PT_RAPI_FD_AWAITING once
 * the socket sent "GET .../next" and awaits its answer; PT_RAPI_FD_CONNECTED for a Runtime API
 * socket found by user space at attach time, whose request may have been sent before we were
 * there. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u32);
} rapi_fds SEC(".maps");

/* A request line written in pieces (a client writing "GET /2018-06-01/runtime/invocation/next"
 * a few bytes at a time): its bytes so far, per socket. A piece is appended at len <
 * PT_RAPI_SCAN, at most PT_RAPI_SCAN bytes of it: buf has room for both. */
struct rapi_part {
	__u32 len;
	__u32 pad;
	char buf[2 * PT_RAPI_SCAN];
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, struct rapi_part);
} rapi_parts SEC(".maps");

/* Scratch for reading a write's first bytes (per CPU: used within one program run). */
struct rapi_scratch {
	char buf[PT_RAPI_HDR_SCAN + 16];   /* slack: pt_rapi_is_streaming reads past its index */
	char tail[8];
	__u32 len;                         /* rapi_piece: the reassembled line's length in buf */
	__u32 id_len;                      /* ... and its request id's (RESPONSE, ERROR) */
	struct rapi_part part;             /* a new rapi_parts entry, built here */
};
_Static_assert(PT_RAPI_SCAN <= PT_RAPI_HDR_SCAN, "the scratch holds a whole request line");

/* key: tgid << 32 | fd; value: the request id of a streaming response in progress on it. */
struct rapi_stream {
	__u32 id_len;      /* its whole length (id[] holds the first PT_REQID_LEN bytes) */
	__u32 pad;
	__u64 id_hash;
	char id[PT_REQID_LEN];
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, struct rapi_stream);
} rapi_streams SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rapi_scratch);
} rapi_buf SEC(".maps");

/* Room for an invocation record of this type: the ring under three quarters full
 * (rb_inv_shed); the last quarter (256 KiB: ~5,000 exit or mapping records) is the rare
 * events'. */
static __always_inline bool inv_room(__u32 type)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) < rb_inv_room)
		return true;
	/* Not in the errors map: user space adds rb_inv_shed to ringbuf_lost (a map lookup here,
	 * in every program that ends invocations, cost the verifier more than the 200K budget). */
	__sync_fetch_and_add(&rb_inv_shed, 1);
	__sync_fetch_and_add(&rb_lost[type & (PT_RB_KINDS - 1)], 1);
	return false;
}

static __always_inline void inv_emit(__u32 type, __u64 seq, __u32 fd, const void *data, __u32 len)
{
	__u64 flags = ev_wake_flags();
	struct pt_inv_event *e;
	__u64 id = bpf_get_current_pid_tgid();

	if (!inv_room(type))
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		rb_lost_count(type);
		return;
	}
	e->type = type;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->fd = fd;
	e->seq = seq;
	e->ts = bpf_ktime_get_ns();
	e->pad = 0;
	e->len = 0;
	if (data && len) {
		__u64 n = len;

		/* Clamp after an opaque move, or clang hands the helper the unclamped copy. */
		asm volatile("" : "+r"(n));
		if (n > PT_RAPI_COPY)
			n = PT_RAPI_COPY;
		if (bpf_probe_read_user(e->data, n, data) == 0)
			e->len = n;
	}
	bpf_ringbuf_submit(e, flags);
}

/* End the running invocation (or init phase). id may be NULL; id_len is its whole length (its
 * first PT_REQID_LEN bytes are kept), id_hash its hash (0: none). */
static __always_inline void inv_end_id(__u32 outcome, const char *id, __u32 id_len, __u64 id_hash, __u32 fd)
{
	__u64 seq = g.inv_seq;
	struct pt_inv *inv = &g.inv[seq & 1];

	if (inv->state != PT_INV_RUNNING)
		return;
	pt_inv_close(inv, &g, bpf_ktime_get_ns(), outcome);
	inv->end_epoch = __sync_add_and_fetch(&g.epoch, 1);
	{
		/* Pages, as VmHWM counts them; the kernel raises hiwater_rss lazily (when RSS
		 * falls), so user space takes the larger of it and the RSS at the end. */
		struct mm_struct *mm = BPF_CORE_READ(bpf_get_current_task_btf(), mm);

		inv->hwm_end = mm ? BPF_CORE_READ(mm, hiwater_rss) * 4096 : 0;
	}
	inv->id_hash = 0;
	inv->id_full_len = 0;
	if (id && id_len) {
		inv->id_full_len = id_len;
		inv->id_hash = id_hash;
		if (id_len > PT_REQID_LEN)
			id_len = PT_REQID_LEN;
		for (int i = 0; i < PT_REQID_LEN; i++) {
			if (i >= id_len)
				break;
			inv->id[i] = id[i & (PT_RAPI_SCAN - 1)];
		}
		inv->id_len = id_len;
	}
	inv->boundary_fd = fd;
	inv->state = PT_INV_ENDED;
	sbx_inv_end(seq);
	{
		/* A copy of the whole record, copied by a helper (1.3 KB: an inlined copy would
		 * be ~170 instructions in every program that ends invocations). */
		struct pt_inv_record_event *r = NULL;

		if (inv_room(PT_EV_INV_RECORD) &&
		    !(r = bpf_ringbuf_reserve(&events, sizeof(*r), 0)))
			rb_lost_count(PT_EV_INV_RECORD);
		if (r) {
			r->type = PT_EV_INV_RECORD;
			r->pad = 0;
			if (bpf_probe_read_kernel(&r->inv, sizeof(r->inv), inv))
				r->type = 0;    /* never: user space then reads the buffer */
			bpf_ringbuf_submit(r, 0);
		}
	}
	inv_emit(PT_EV_INV_END, seq, fd, NULL, 0);
}

static __always_inline void inv_end(__u32 outcome, const char *id, __u32 id_len, __u32 fd)
{
	inv_end_id(outcome, id, id_len, 0, fd);
}

/* Start invocation seq + 1 in the other half of the double buffer. */
static __always_inline void inv_start(__u32 fd, const void *data, __u32 len)
{
	__u64 seq = g.inv_seq + 1;
	struct pt_inv *inv = &g.inv[seq & 1];
	__s64 rss = pt_rss_total(&g);

	/* The previous invocation never posted its result: unfinished. The phase before the first
	 * invocation ends here asking for work even when its GET .../next was not seen: peaktrace
	 * attached while the runtime already waited in it (the phase's row said "unfinished"). */
	inv_end(g.inv_seq ? PT_OUT_UNFINISHED : PT_OUT_INIT, NULL, 0, 0);
	/* Field by field: the record is too large for an inlined memset; id and traj[] are
	 * only read up to id_len and traj_n. */
	inv->end_ns = 0;
	inv->end_epoch = 0;
	inv->hwm_end = 0;
	inv->rss_end = inv->heap_end = 0;
	inv->alloc_count = inv->alloc_bytes = inv->free_count = inv->free_bytes = 0;
	inv->outcome = 0;
	inv->id_len = 0;
	inv->traj_n = 0;
	inv->seq = seq;
	inv->start_ns = bpf_ktime_get_ns();
	inv->start_epoch = __sync_add_and_fetch(&g.epoch, 1);
	inv->rss_start = inv->rss_peak = rss;
	inv->heap_start = inv->heap_peak = g.live_bytes;
	inv->heap_peak_count = g.live_count;
	inv->alloc_count0 = g.alloc_count;
	inv->alloc_bytes0 = g.alloc_bytes;
	inv->free_count0 = pt_free_count(&g);
	inv->free_bytes0 = pt_free_bytes(&g);
	inv->peak_seq = __sync_fetch_and_add(&g.inv_peak_counter, 1) + 1;
	rss_inv_new_peak(seq);   /* rss.bpf.h: the RSS attribution's own snapshot sequence */
	inv->boundary_fd = fd;
	inv->state = PT_INV_RUNNING;
	/* Publish last: the hot path reads g.inv_seq to pick the half it updates. */
	g.inv_seq = seq;
	sbx_inv_start(seq);
	inv_emit(PT_EV_INV_START, seq, fd, data, len);
}

/* RSS moved to rss (kmem:rss_stat): the running invocation's RSS peak, and a sample of its
 * trajectory when RSS moved far enough from the last one. */
static __always_inline void inv_rss(__s64 rss)
{
	struct pt_inv *inv = &g.inv[g.inv_seq & 1];

	if (inv->state == PT_INV_RUNNING) {
		__u32 n = inv->traj_n;
		__s64 step = (__s64)((__u64)inv->rss_peak >> 4), last;

		if (rss > inv->rss_peak)
			inv->rss_peak = rss;
		if (step < (1 << 20))
			step = 1 << 20;
		last = n ? inv->traj[(n - 1) & (PT_TRAJ_MAX - 1)].rss : inv->rss_start;
		if (rss - last >= step || last - rss >= step) {
			if (n >= PT_TRAJ_MAX)
				n = PT_TRAJ_MAX - 1;
			inv->traj[n & (PT_TRAJ_MAX - 1)].t_ns = bpf_ktime_get_ns();
			inv->traj[n & (PT_TRAJ_MAX - 1)].rss = rss;
			inv->traj_n = n + 1;
		}
	}
}

/* The streaming header search (rapi.h) as a bpf_loop: the callback is verified once. */
struct rapi_hdr_scan {
	__u32 found;
};

static long rapi_hdr_step(__u64 i, void *arg)
{
	struct rapi_hdr_scan *h = arg;
	struct rapi_scratch *sc;
	__u32 zero = 0;

	sc = bpf_map_lookup_elem(&rapi_buf, &zero);
	if (!sc)
		return 1;
	if (pt_rapi_mode_at(sc->buf, (__u32)i)) {
		h->found = 1;
		return 1;
	}
	return 0;
}

/* pt_rapi_is_streaming() on the scratch buffer's first len bytes. */
static __always_inline int rapi_is_streaming(__u32 len)
{
	struct rapi_hdr_scan h = { 0 };

	bpf_loop(pt_rapi_hdr_positions(len), rapi_hdr_step, &h, 0);
	return h.found;
}

/* The request id search (rapi.h pt_rapi_id_step) over the scratch, and the id's hash, as bpf_loops:
 * as bounded loops their ~470 steps were verified one by one (~800K instructions). */
struct rapi_loop {
	__u32 from;     /* the first position */
	__u32 found;    /* id search: the '/' ending the id (0: none) */
	__u64 h;        /* hash */
	__u32 ended;    /* space scan: a space, CR or LF seen */
};

static long rapi_id_step(__u64 i, void *arg)
{
	struct rapi_loop *l = arg;
	struct rapi_scratch *sc;
	__u32 zero = 0, at = l->from + (__u32)i;
	int r;

	sc = bpf_map_lookup_elem(&rapi_buf, &zero);
	if (!sc)
		return 1;
	r = pt_rapi_id_step(sc->buf, at);
	if (r > 0)
		l->found = at;
	return r != 0;
}

static __u32 rapi_id_search(__u32 len)
{
	struct rapi_loop l = { .from = PT_RAPI_POST_LEN };

	if (len <= PT_RAPI_POST_LEN)
		return 0;
	bpf_loop(PT_RAPI_ID_SPAN(len), rapi_id_step, &l, 0);
	return l.found;
}

static long rapi_hash_step(__u64 i, void *arg)
{
	struct rapi_loop *l = arg;
	struct rapi_scratch *sc;
	__u32 zero = 0;

	sc = bpf_map_lookup_elem(&rapi_buf, &zero);
	if (!sc)
		return 1;
	l->h = pt_rapi_hash_step(l->h, sc->buf[(l->from + (__u32)i) & (PT_RAPI_SCAN - 1)]);
	return 0;
}

/* pt_rapi_partial's compare (rapi.h) over the scratch. */
static long rapi_partial_step(__u64 i, void *arg)
{
	struct rapi_loop *l = arg;
	struct rapi_scratch *sc;
	__u32 zero = 0;

	sc = bpf_map_lookup_elem(&rapi_buf, &zero);
	if (!sc || !pt_rapi_partial_step(sc->buf, (__u32)i)) {
		l->found = 0;
		return 1;
	}
	return 0;
}

/* A space, CR or LF in the scratch's bytes at from + i, past the method's own space. */
static long rapi_space_step(__u64 i, void *arg)
{
	struct rapi_loop *l = arg;
	struct rapi_scratch *sc;
	__u32 zero = 0, at = l->from + (__u32)i;
	char c;

	sc = bpf_map_lookup_elem(&rapi_buf, &zero);
	if (!sc)
		return 1;
	c = sc->buf[at & (PT_RAPI_SCAN - 1)];
	if (at >= 5 && (c == ' ' || c == '\r' || c == '\n')) {
		l->ended = 1;
		return 1;
	}
	return 0;
}

/* pt_rapi_classify (rapi.h) on the scratch's first len bytes, its two steps as global functions:
 * each is verified once for any length and id end. Inlined, the action's compares were verified
 * again for every position the id search can stop at and every length the write program reaches
 * it with (~30K of that program's ~37K instructions). */
__noinline int pt_rapi_line_scratch(struct rapi_scratch *sc, __u32 len, int strict)
{
	__u32 end;
	int kind;

	if (!sc)
		return PT_RAPI_OTHER;
	kind = pt_rapi_classify_line(sc->buf, len < PT_RAPI_SCAN ? len : PT_RAPI_SCAN, &end, strict);
	return kind | (end & 0xffff) << 8;
}

__noinline int pt_rapi_action_scratch(struct rapi_scratch *sc, __u32 len, __u32 end, int strict)
{
	if (!sc || end >= PT_RAPI_SCAN)
		return PT_RAPI_OTHER;
	/* A no-op mask that bounds every copy clang makes of end, for the verifier (after an
	 * opaque move, or clang drops it as implied by the check above). */
	asm volatile("" : "+r"(end));
	end &= PT_RAPI_SCAN - 1;
	return pt_rapi_classify_action(sc->buf, len < PT_RAPI_SCAN ? len : PT_RAPI_SCAN, end, strict);
}

/* The hash (rapi.h pt_rapi_hash_step) of the request id sc->buf[PT_RAPI_POST_LEN, + len). */
static __always_inline __u64 pt_rapi_id_hash(struct rapi_scratch *sc, __u32 len)
{
	struct rapi_loop l = { .from = PT_RAPI_POST_LEN, .h = PT_RAPI_HASH0 };

	bpf_loop(len < PT_RAPI_ID_MAX ? len : PT_RAPI_ID_MAX, rapi_hash_step, &l, 0);
	return l.h;
}

/*
 * A request line written in pieces. With a rapi_parts entry for the socket (key), the write's
 * bytes are appended to it; without one (start set), a write that starts like a request line
 * but does not hold a whole one begins it. The line so far is classified as bytes that may
 * continue (pt_rapi_classify_in's strict): a kind once its path has ended. Returns -1 when the
 * socket has no entry (start not set), 0 while waiting or when the bytes are no request line
 * (a Runtime API POST line too long for PT_RAPI_SCAN is counted in g.rapi_unparsed), else the
 * kind, the line in sc->buf (sc->len bytes).
 */
__noinline int rapi_piece(__u64 key, __u64 ubuf, __u64 count, int start)
{
	struct rapi_scratch *sc;
	struct rapi_part *p;
	__u32 off = 0, n, len, zero = 0;
	__u64 sz;
	int ended, kind, partial, fresh;

	/* Looked up here, not passed: a global function's pointer argument is plain memory to the
	 * verifier, which 6.1 does not take as a map update's value (sc->part below). */
	sc = bpf_map_lookup_elem(&rapi_buf, &zero);
	if (!sc)
		return 0;
	p = bpf_map_lookup_elem(&rapi_parts, &key);
	if (!p && !start)
		return -1;
	/* A flag, not a compare of p with &sc->part: pointers of two kinds. */
	fresh = !p;
	if (!p) {
		p = &sc->part;
		p->len = 0;
	}
	off = p->len;
	asm volatile("" : "+r"(off));
	off &= PT_RAPI_SCAN - 1;   /* never stored at PT_RAPI_SCAN or more */
	/* Sizes as 64-bit values clamped after an opaque move (as inv_emit's): with 32-bit ones
	 * clang hands the helper an unclamped copy, which 6.1's verifier refuses. */
	sz = count < PT_RAPI_SCAN - off ? count : PT_RAPI_SCAN - off;
	asm volatile("" : "+r"(sz));
	if (sz > PT_RAPI_SCAN)
		sz = PT_RAPI_SCAN;
	if (!sz || bpf_probe_read_user(p->buf + off, sz, (const void *)ubuf))
		goto drop;
	n = (__u32)sz;
	sz += off;
	asm volatile("" : "+r"(sz));
	if (sz > PT_RAPI_SCAN)
		sz = PT_RAPI_SCAN;
	if (bpf_probe_read_kernel(sc->buf, sz, p->buf))
		goto drop;
	len = (__u32)sz;
	{
		/* A space, CR or LF among the new bytes, past the method's own space: the path
		 * ended in them. */
		struct rapi_loop l = { .from = off };

		bpf_loop(n, rapi_space_step, &l, 0);
		ended = l.ended;
	}
	sc->len = len;
	sc->id_len = 0;
	kind = pt_rapi_line_scratch(sc, len, 1);
	if ((kind & 0xff) == PT_RAPI_POST_ID) {
		__u32 end = (kind >> 8) & 0xffff;

		kind = pt_rapi_action_scratch(sc, len, end, 1);
		sc->id_len = end - PT_RAPI_POST_LEN;
	} else {
		kind &= 0xff;
	}
	if (kind != PT_RAPI_OTHER) {
		if (!fresh)
			bpf_map_delete_elem(&rapi_parts, &key);
		return kind;
	}
	partial = 0;
	if (!ended) {
		struct rapi_loop l = { .found = 1 };

		bpf_loop(pt_rapi_partial_span(sc->buf, len), rapi_partial_step, &l, 0);
		partial = pt_rapi_partial_end(sc->buf, len, l.found);
	}
	if (partial == 2 || (partial && len >= PT_RAPI_SCAN))
		__sync_fetch_and_add(&g.rapi_unparsed, 1);
	if (partial != 1 || len >= PT_RAPI_SCAN)
		goto drop;
	p->len = len;
	if (fresh && bpf_map_update_elem(&rapi_parts, &key, p, BPF_ANY))
		__sync_fetch_and_add(&g.rapi_full, 1);
	return 0;
drop:
	if (!fresh)
		bpf_map_delete_elem(&rapi_parts, &key);
	return 0;
}

/* pt_rapi_classify with those two steps. */
static __always_inline int rapi_classify_scratch(struct rapi_scratch *sc, __u32 len, __u32 *id_off,
						 __u32 *id_len)
{
	int kind = pt_rapi_line_scratch(sc, len, 0);
	__u32 end = (kind >> 8) & 0xffff;

	*id_off = 0;
	*id_len = 0;
	kind &= 0xff;
	if (kind != PT_RAPI_POST_ID)
		return kind;
	*id_off = PT_RAPI_POST_LEN;
	*id_len = end - PT_RAPI_POST_LEN;
	return pt_rapi_action_scratch(sc, len, end, 0);
}

/* A write-like syscall of the target: look at its first bytes for a Runtime API request. */
static __always_inline void rapi_write(__u32 fd, const void *buf, __u64 count)
{
	struct rapi_scratch *sc;
	struct rapi_stream *stream;
	__u32 zero = 0, len, id_off = 0, id_len = 0;
	__u64 key;
	int kind, start;

	if (!rapi_boundaries || !is_target())
		return;
	sc = bpf_map_lookup_elem(&rapi_buf, &zero);
	if (!sc)
		return;
	key = PT_RAPI_FD_KEY(bpf_get_current_pid_tgid() >> 32, fd);
	stream = bpf_map_lookup_elem(&rapi_streams, &key);
	if (stream) {
		/* A streamed response in progress: the invocation ends with its last chunk. */
		__u32 n = count < 8 ? count : 8;

		if (bpf_probe_read_user(sc->buf, 3, buf))
			return;
		if (count >= 7 && bpf_probe_read_user(sc->tail, 7, buf + count - 7))
			return;
		/* sc->tail always (n < 7 when count < 7: not looked at): with "count >= 7 ? tail :
		 * NULL" clang drops the NULL test and 6.1's verifier, which does not see that
		 * count < 7 and n >= 7 cannot both hold, read through the NULL. */
		if (pt_rapi_chunked_end(sc->buf, n, sc->tail)) {
			inv_end_id(PT_OUT_RESPONSE, stream->id, stream->id_len, stream->id_hash, fd);
			bpf_map_delete_elem(&rapi_streams, &key);
		}
		return;
	}
	/* Read exactly what was written (up to PT_RAPI_SCAN): more could cross into an unmapped
	 * page. */
	{
		__u64 sz = count < PT_RAPI_SCAN ? count : PT_RAPI_SCAN;

		asm volatile("" : "+r"(sz));
		if (sz > PT_RAPI_SCAN)
			sz = PT_RAPI_SCAN;
		if (!sz || bpf_probe_read_user(sc->buf, sz, buf))
			return;
		len = (__u32)sz;
	}
	/* Only the common prefix "GET /2018" or "POST /201" is worth the full classification. */
	start = sc->buf[0] == 'G' || sc->buf[0] == 'P';
	kind = PT_RAPI_OTHER;
	if (start && count >= PT_RAPI_NEXT_LEN) {
		if (sbx_on && pt_rapi_is_extension(sc->buf, len)) {
			sbx_extension();
			return;
		}
		kind = rapi_classify_scratch(sc, len, &id_off, &id_len);
	}
	if (kind == PT_RAPI_OTHER) {
		/* The rest of a request line written in pieces, or the start of one (a short
		 * write, or a line whose rest is still to be written); or one too long. */
		kind = rapi_piece(key, (__u64)buf, count, start);
		if (kind <= 0)
			return;
		id_off = PT_RAPI_POST_LEN;
		id_len = sc->id_len;
	} else if (kind == PT_RAPI_RESPONSE) {
		/* The headers may say the body will be streamed. Read exactly what was written
		 * (up to PT_RAPI_HDR_SCAN): a longer read could cross into an unmapped page. */
		__u64 hl = count < PT_RAPI_HDR_SCAN ? count : PT_RAPI_HDR_SCAN;

		asm volatile("" : "+r"(hl));
		if (hl > PT_RAPI_HDR_SCAN)
			hl = PT_RAPI_HDR_SCAN;
		if ((hl <= PT_RAPI_SCAN || bpf_probe_read_user(sc->buf, hl, buf) == 0) &&
		    rapi_is_streaming((__u32)hl)) {
			struct rapi_stream rs = { .id_len = id_len, .id_hash = pt_rapi_id_hash(sc, id_len) };

			for (int i = 0; i < PT_REQID_LEN; i++) {
				if (i >= id_len)
					break;
				rs.id[i] = sc->buf[(id_off + i) & (PT_RAPI_HDR_SCAN - 1)];
			}
			/* A global counter, not count_err(): this program is near the verifier's
			 * limit and a map lookup here pushes it over. */
			if (bpf_map_update_elem(&rapi_streams, &key, &rs, BPF_ANY))
				__sync_fetch_and_add(&g.rapi_full, 1);
			return;
		}
	}
	switch (kind) {
	case PT_RAPI_NEXT: {
		__u32 one = PT_RAPI_FD_AWAITING;

		if (bpf_map_update_elem(&rapi_fds, &key, &one, BPF_ANY))
			__sync_fetch_and_add(&g.rapi_full, 1);
		/* Lambda's init phase ends when the runtime first asks for work. */
		if (g.inv_seq == 0)
			inv_end(PT_OUT_INIT, NULL, 0, fd);
		break;
	}
	case PT_RAPI_RESPONSE:
	case PT_RAPI_ERROR:
		inv_end_id(kind == PT_RAPI_RESPONSE ? PT_OUT_RESPONSE : PT_OUT_ERROR,
			   sc->buf + (id_off & (PT_RAPI_SCAN - 1)), id_len, pt_rapi_id_hash(sc, id_len), fd);
		break;
	case PT_RAPI_INIT_ERROR:
		if (g.inv_seq == 0)
			inv_end(PT_OUT_ERROR, NULL, 0, fd);
		break;
	}
}

/* The syscall number of writev (arch/): the one write-like call whose buffer is an iovec. */
#define RAPI_NR_WRITEV PT_ARCH_NR_WRITEV

/* sys_enter of write, sendto (fd, buf, count: the same three first arguments) or writev (its
 * first buffer, where the request line is), as a write. */
static __always_inline int rapi_write_like(struct trace_event_raw_sys_enter *ctx)
{
	struct { __u64 base, len; } iov = { ctx->args[1], ctx->args[2] };

	if (!rapi_boundaries || !is_target())
		return 0;
	/* One inlined rapi_write below, whichever the call: two would double the verifier's work. */
	if (ctx->id == RAPI_NR_WRITEV &&
	    (ctx->args[2] < 1 || bpf_probe_read_user(&iov, sizeof(iov), (const void *)ctx->args[1])))
		return 0;
	rapi_write(ctx->args[0], (const void *)iov.base, iov.len);
	return 0;
}

/*
 * The answer to "next" arrives as a read/recvfrom returning > 0 on the socket that asked. Its
 * fd and buffer come from the user registers saved at syscall entry (still intact at exit), not
 * from an entry probe: a runtime found waiting when we attach entered that syscall before us.
 */
static __always_inline int rapi_read_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct pt_regs *regs;
	__u32 *awaiting, fd;
	const void *buf;
	__u64 key;

	if ((!rapi_boundaries && !rapi_first_start) || ctx->ret <= 0 || !is_target())
		return 0;
	/* Uprobe boundaries: only the first start, and only if no boundary probe came first (the
	 * runtime was idle in get_next when we attached, not busy in its handler). */
	if (!rapi_boundaries && (g.inv_seq != 0 || g.inv[0].state != PT_INV_RUNNING))
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	fd = (__u32)BPF_CORE_READ(regs, PT_ARCH_SYSARG0);
	buf = (const void *)BPF_CORE_READ(regs, PT_ARCH_SYSARG1);
	key = PT_RAPI_FD_KEY(bpf_get_current_pid_tgid() >> 32, fd);
	awaiting = bpf_map_lookup_elem(&rapi_fds, &key);
	if (!awaiting)
		return 0;
	if (*awaiting == PT_RAPI_FD_CONNECTED) {
		/* Attached while the runtime waited for work: on a Runtime API socket only the
		 * answer to "next" is a 200 (posting a result gets 202). */
		char st[12];

		if (bpf_probe_read_user(st, sizeof(st), buf) || !pt_rapi_prefix(st, "HTTP/1.1 200", 12))
			return 0;
	}
	/* The first bytes of the answer to "next": the invocation starts now. */
	bpf_map_delete_elem(&rapi_fds, &key);
	/* Uprobe boundaries whose get_next entry was not seen: the phase before ends as the
	 * Runtime API detector ends it, as init ("next" when attached), not unfinished. */
	if (!rapi_boundaries)
		inv_end(PT_OUT_INIT, NULL, 0, fd);
	inv_start(fd, buf, (__u32)ctx->ret);
	return 0;
}

/* libstdc++'s std::string (C++11 ABI) starts with its data pointer and length. */
struct cxx_string {
	__u64 ptr;
	__u64 len;
};

/* Copy a std::string at addr into the per-CPU scratch; returns its length (0 if unreadable). */
static __always_inline __u32 read_cxx_string(const void *addr, struct rapi_scratch *sc)
{
	struct cxx_string cs;
	__u64 n;

	if (bpf_probe_read_user(&cs, sizeof(cs), addr))
		return 0;
	n = cs.len;
	asm volatile("" : "+r"(n));
	if (n > PT_REQID_LEN)
		n = PT_REQID_LEN;
	if (!n || bpf_probe_read_user(sc->buf, n, (const void *)cs.ptr))
		return 0;
	return (__u32)n;
}

/*
 * Boundaries from uprobes on runtime functions. The attach cookie (enum pt_boundary_cookie) says
 * which edge this is: a user-named pair, or aws-lambda-cpp's own functions, whose arguments carry
 * the request id.
 */
static __always_inline int boundary_uprobe(struct pt_regs *ctx)
{
	struct rapi_scratch *sc;
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 zero = 0, n;

	if (!is_target())
		return 0;
	switch (cookie) {
	case PT_BOUNDARY_START:
		inv_start(0, NULL, 0);
		return 0;
	case PT_BOUNDARY_END:
		inv_end(PT_OUT_RESPONSE, NULL, 0, 0);
		return 0;
	case PT_BOUNDARY_AWS_NEXT_CALL:
		/* Where the hidden result pointer is not returned (arm64: x8), kept until the
		 * return (arch/). */
		PT_ARCH_SRET_ENTRY(ctx);
		/* Lambda's init phase ends when the runtime first asks for work (as the Runtime
		 * API detector sees it), not when the first event arrives. */
		if (g.inv_seq == 0)
			inv_end(PT_OUT_INIT, NULL, 0, 0);
		return 0;
	}
	sc = bpf_map_lookup_elem(&rapi_buf, &zero);
	if (!sc)
		return 0;
	if (cookie == PT_BOUNDARY_AWS_NEXT) {
		/* get_next() returns outcome<invocation_request, ...> through a hidden pointer,
		 * handed back in rax on x86-64, kept from the entry's x8 on arm64 (arch/);
		 * invocation_request's request_id follows its payload string (32 bytes, libstdc++'s
		 * std::string on both). */
		struct pt_inv *inv;

		n = read_cxx_string((const void *)(PT_ARCH_SRET_AT_RETURN(ctx) + 32), sc);
		inv_start(0, NULL, 0);
		inv = &g.inv[g.inv_seq & 1];
		for (int i = 0; i < PT_REQID_LEN; i++) {
			if (i >= n)
				break;
			inv->id[i] = sc->buf[i & (PT_RAPI_SCAN - 1)];
		}
		inv->id_len = n;
		return 0;
	}
	/* post_success/post_failure return an outcome through a hidden pointer too: their
	 * arguments are `this` and the request id (x86-64: rdi is the pointer, rsi `this`, rdx
	 * the request id; arm64: x8 the pointer, x0 `this`, x1 the request id). */
	n = read_cxx_string((const void *)PT_ARCH_SRET_ARG2(ctx), sc);
	inv_end(cookie == PT_BOUNDARY_AWS_SUCCESS ? PT_OUT_RESPONSE : PT_OUT_ERROR, sc->buf, n, 0);
	return 0;
}

#endif /* PEAKTRACE_INVOCATION_BPF_H */
