/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rapi.h — recognizing Lambda Runtime API requests in the bytes a runtime writes to its socket.
 * Pure functions shared by the BPF program and the host unit tests (tests/unit/test_rapi.c).
 *
 * A runtime asks for work with "GET /2018-06-01/runtime/invocation/next" and the response that
 * comes back on that socket starts the invocation; it ends the invocation with
 * "POST /2018-06-01/runtime/invocation/ID/response" (or ".../error"). Runtimes keep several
 * keep-alive sockets, so callers key state on (process, fd).
 */
#ifndef PEAKTRACE_RAPI_H
#define PEAKTRACE_RAPI_H

#include "peaktrace.h"

/* Bytes of a request line examined (in one write, or reassembled from several): request ids
 * up to PT_RAPI_ID_MAX characters fit. A longer POST .../invocation/ line is counted as not
 * parsed (g.rapi_unparsed). */
#define PT_RAPI_SCAN 512
#define PT_RAPI_ID_MAX (PT_RAPI_SCAN - PT_RAPI_POST_LEN - 10)

enum pt_rapi_kind {
	PT_RAPI_OTHER = 0,
	PT_RAPI_NEXT = 1,        /* GET .../invocation/next */
	PT_RAPI_RESPONSE = 2,    /* POST .../invocation/ID/response */
	PT_RAPI_ERROR = 3,       /* POST .../invocation/ID/error */
	PT_RAPI_INIT_ERROR = 4,  /* POST .../init/error */
};

#define PT_RAPI_NEXT_LINE "GET /2018-06-01/runtime/invocation/next"
#define PT_RAPI_NEXT_LEN 39
#define PT_RAPI_POST_LINE "POST /2018-06-01/runtime/invocation/"
#define PT_RAPI_POST_LEN 36
#define PT_RAPI_INIT_ERR_LINE "POST /2018-06-01/runtime/init/error"
#define PT_RAPI_INIT_ERR_LEN 35

/* Constant-length compare the BPF verifier can unroll. */
static inline int pt_rapi_prefix(const char *b, const char *lit, int n)
{
	for (int i = 0; i < n; i++)
		if (b[i] != lit[i])
			return 0;
	return 1;
}

/* The request path ends at b[i]: a space or '?' follows, or the write (or the scanned part of it)
 * ends there — so ".../responsefoo" is not ".../response". strict: bytes reassembled from several
 * writes, where more may follow: the end of the bytes is not the end of the path. */
static inline int pt_rapi_path_end(const char *b, __u32 len, __u32 i, int strict)
{
	if (i >= len || i >= PT_RAPI_SCAN)
		return !strict;
	return b[i & (PT_RAPI_SCAN - 1)] == ' ' || b[i & (PT_RAPI_SCAN - 1)] == '?';
}

/* One step of the request id's search in a POST .../invocation/ID/ line: the '/' ending it at b[i]
 * (1), a space or line end first (-1: no id), or on (0). */
static inline int pt_rapi_id_step(const char *b, __u32 i)
{
	char c = b[i & (PT_RAPI_SCAN - 1)];

	if (c == '/')
		return 1;
	return c == ' ' || c == '\r' || c == '\n' ? -1 : 0;
}
/* Positions the search tries in len bytes: an id of up to PT_RAPI_ID_MAX characters and the '/'. */
#define PT_RAPI_ID_SPAN(len) \
	((len) < PT_RAPI_POST_LEN + PT_RAPI_ID_MAX + 1 ? (len) - PT_RAPI_POST_LEN : PT_RAPI_ID_MAX + 1)

/* pt_rapi_classify's first step: the request line's kind, or PT_RAPI_POST_ID for a POST to
 * .../invocation/ID/ whose id ends at *end (the '/' after it). */
#define PT_RAPI_POST_ID 5
static inline int pt_rapi_classify_line(const char *b, __u32 len, __u32 *end, int strict)
{
	*end = 0;
	if (len >= PT_RAPI_NEXT_LEN && pt_rapi_prefix(b, PT_RAPI_NEXT_LINE, PT_RAPI_NEXT_LEN)) {
		/* "next" followed by a space or '?' — not "nextfoo". */
		if (pt_rapi_path_end(b, len, PT_RAPI_NEXT_LEN, strict))
			return PT_RAPI_NEXT;
		return PT_RAPI_OTHER;
	}
	if (len >= PT_RAPI_INIT_ERR_LEN && pt_rapi_prefix(b, PT_RAPI_INIT_ERR_LINE, PT_RAPI_INIT_ERR_LEN))
		return PT_RAPI_INIT_ERROR;
	if (len < PT_RAPI_POST_LEN + 2 || !pt_rapi_prefix(b, PT_RAPI_POST_LINE, PT_RAPI_POST_LEN))
		return PT_RAPI_OTHER;
#ifdef PT_RAPI_ID_SEARCH
	/* BPF: the search as a bpf_loop (invocation.bpf.h), its step verified once. */
	*end = PT_RAPI_ID_SEARCH(len);
#else
	for (__u32 i = 0; i < PT_RAPI_ID_SPAN(len); i++) {
		int r = pt_rapi_id_step(b, PT_RAPI_POST_LEN + i);

		if (r < 0)
			return PT_RAPI_OTHER;
		if (r > 0) {
			*end = PT_RAPI_POST_LEN + i;
			break;
		}
	}
#endif
	if (!*end || *end == PT_RAPI_POST_LEN)
		return PT_RAPI_OTHER;
	return PT_RAPI_POST_ID;
}

/* Its second step: what follows the id ending at b[end] ("/response" or "/error"). The BPF side
 * runs the two steps as separate global functions, so the verifier checks this one once for
 * any end, not once for each end the id search can stop at (~25K instructions inlined). */
static inline int pt_rapi_classify_action(const char *b, __u32 len, __u32 end, int strict)
{
	if (end + 9 <= len && end + 9 <= PT_RAPI_SCAN && pt_rapi_prefix(b + end, "/response", 9) &&
	    pt_rapi_path_end(b, len, end + 9, strict))
		return PT_RAPI_RESPONSE;
	if (end + 6 <= len && end + 6 <= PT_RAPI_SCAN && pt_rapi_prefix(b + end, "/error", 6) &&
	    pt_rapi_path_end(b, len, end + 6, strict))
		return PT_RAPI_ERROR;
	return PT_RAPI_OTHER;
}

/*
 * Classify the first len bytes (len <= PT_RAPI_SCAN) of a write (strict: of a request line
 * reassembled so far). For RESPONSE and ERROR the request id is b[*id_off .. *id_off + *id_len).
 */
static inline int pt_rapi_classify_in(const char *b, __u32 len, __u32 *id_off, __u32 *id_len, int strict)
{
	__u32 end;
	int kind = pt_rapi_classify_line(b, len, &end, strict);

	*id_off = 0;
	*id_len = 0;
	if (kind != PT_RAPI_POST_ID)
		return kind;
	*id_off = PT_RAPI_POST_LEN;
	*id_len = end - PT_RAPI_POST_LEN;
	return pt_rapi_classify_action(b, len, end, strict);
}

static inline int pt_rapi_classify(const char *b, __u32 len, __u32 *id_off, __u32 *id_len)
{
	return pt_rapi_classify_in(b, len, id_off, id_len, 0);
}

/* Could b[0, len), a request line's start without its end (no line end in it), still become one
 * classified above (so its next bytes, written separately, are worth waiting for)? 1: a prefix of
 * "GET .../invocation/next" or of "POST /2018-06-01/runtime/", and no space after the path's
 * start. 2: too long to tell (a POST .../invocation/ line of PT_RAPI_SCAN bytes or more: its id
 * is longer than PT_RAPI_ID_MAX): counted as not parsed. */
#define PT_RAPI_POST_COMMON 25   /* "POST /2018-06-01/runtime/" */
static const char pt_rapi_lits[2][64] = { PT_RAPI_NEXT_LINE, PT_RAPI_POST_LINE };
/* Bytes of b compared to the line it may start: b[0] is 'G' or 'P' (else none match). */
static inline __u32 pt_rapi_partial_span(const char *b, __u32 len)
{
	__u32 n = b[0] == 'G' ? PT_RAPI_NEXT_LEN : PT_RAPI_POST_COMMON;

	return len < n ? len : n;
}
/* One step of that compare: does b[i] match? (BPF runs it under bpf_loop.) */
static inline int pt_rapi_partial_step(const char *b, __u32 i)
{
	return b[i & (PT_RAPI_SCAN - 1)] == pt_rapi_lits[b[0] != 'G'][i & 63];
}
/* The verdict once the span matched (matched 0: it did not). */
static inline int pt_rapi_partial_end(const char *b, __u32 len, int matched)
{
	if (!matched || !len || (b[0] != 'G' && b[0] != 'P'))
		return 0;
	if (b[0] == 'G')
		return len <= PT_RAPI_NEXT_LEN;
	if (len >= PT_RAPI_SCAN)
		return len >= PT_RAPI_POST_LEN && pt_rapi_prefix(b, PT_RAPI_POST_LINE, PT_RAPI_POST_LEN) ? 2 : 0;
	return 1;
}
static inline int pt_rapi_partial(const char *b, __u32 len)
{
	int matched = len > 0;

	for (__u32 i = 0; matched && i < pt_rapi_partial_span(b, len); i++)
		matched = pt_rapi_partial_step(b, i);
	return pt_rapi_partial_end(b, len, matched);
}

/* FNV-1a (64-bit) of a request id, byte by byte: BPF hashes the id of the POST line whole, user
 * space the one in the answer to "next", so an id longer than the PT_REQID_LEN bytes kept is
 * still matched to its invocation's. */
#define PT_RAPI_HASH0 0xcbf29ce484222325ULL
static inline __u64 pt_rapi_hash_step(__u64 h, unsigned char c)
{
	return (h ^ c) * 0x100000001b3ULL;
}

/* A request to the Lambda Extensions API ("GET /2020-01-01/extension/event/next", "POST
 * /2020-01-01/extension/register"): the process writing it is an extension. */
#define PT_RAPI_EXT_PATH "/2020-01-01/extension/"
#define PT_RAPI_EXT_LEN 22
static inline int pt_rapi_is_extension(const char *b, __u32 len)
{
	if (len >= 4 + PT_RAPI_EXT_LEN && pt_rapi_prefix(b, "GET ", 4))
		return pt_rapi_prefix(b + 4, PT_RAPI_EXT_PATH, PT_RAPI_EXT_LEN);
	if (len >= 5 + PT_RAPI_EXT_LEN && pt_rapi_prefix(b, "POST ", 5))
		return pt_rapi_prefix(b + 5, PT_RAPI_EXT_PATH, PT_RAPI_EXT_LEN);
	return 0;
}

/* Bytes of a "POST .../response" write searched for the streaming response-mode header. */
#define PT_RAPI_HDR_SCAN 512

/* Positions of b the streaming search tries: those where the 15 bytes fit in len. */
static inline __u32 pt_rapi_hdr_positions(__u32 len)
{
	if (len > PT_RAPI_HDR_SCAN)
		len = PT_RAPI_HDR_SCAN;
	return len < 15 ? 0 : len - 14;
}

/* One step of the search: does "Mode: streaming" start at b[i] (i < PT_RAPI_HDR_SCAN)? The BPF
 * side runs this under bpf_loop: as a bounded loop its ~500 unrolled steps cost the verifier
 * ~170K instructions (~0.4 s) in each of the three programs that see writes. */
static inline int pt_rapi_mode_at(const char *b, __u32 i)
{
	const char *p = b + (i & (PT_RAPI_HDR_SCAN - 1));

	return p[0] == 'M' && pt_rapi_prefix(p, "Mode: streaming", 15);
}

/* "Lambda-Runtime-Function-Response-Mode: streaming" among the headers in b[0, len): the body
 * follows as chunks and the invocation ends with the zero-length chunk, not with the POST line.
 * b must have 16 bytes of slack after PT_RAPI_HDR_SCAN (the compare reads past i). */
static inline int pt_rapi_is_streaming(const char *b, __u32 len)
{
	__u32 n = pt_rapi_hdr_positions(len);

	for (__u32 i = 0; i < n; i++)
		if (pt_rapi_mode_at(b, i))
			return 1;
	return 0;
}

/* The end of a chunked body: a write that starts with the zero-length chunk ("0\r\n"), given
 * its first bytes; or one whose last 7 bytes are "\r\n0\r\n\r\n". */
static inline int pt_rapi_chunked_end(const char *first, __u32 len, const char *last7)
{
	if (len >= 3 && pt_rapi_prefix(first, "0\r\n", 3))
		return 1;
	return len >= 7 && last7 && pt_rapi_prefix(last7, "\r\n0\r\n\r\n", 7);
}

#endif
