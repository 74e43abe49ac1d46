// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_rapi: Runtime API request recognition (bpf/rapi.h, shared with the BPF program) and the
 * request-id header parser (user/invocation.c). */
#include <string.h>
#include "check.h"
#include "bpf/rapi.h"
#include "invocation/invocation.h"

static void test_long_ids(void);
static void test_pieces(void);

static int classify(const char *s, char *id, size_t idlen)
{
	char buf[PT_RAPI_SCAN];
	__u32 off, len, n = strlen(s) < PT_RAPI_SCAN ? strlen(s) : PT_RAPI_SCAN;
	int k;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, s, n);
	k = pt_rapi_classify(buf, n, &off, &len);
	if (id) {
		id[0] = 0;
		if (len && len < idlen) {
			memcpy(id, buf + off, len);
			id[len] = 0;
		}
	}
	return k;
}

/* The BPF side's reassembly (bpf/invocation.bpf.h rapi_piece), modelled: bytes appended per
 * write, the line so far classified strictly, kept while pt_rapi_partial says it may still
 * become a request line. Returns the kind found at the write that completed it (its index in
 * *at), the id in id. */
static int feed(const char *line, size_t step, size_t *at, char *id, size_t idcap, int *unparsed)
{
	char acc[2 * PT_RAPI_SCAN];
	size_t len = 0, total = strlen(line), w = 0;

	*unparsed = 0;
	for (size_t pos = 0; pos < total; pos += step, w++) {
		size_t n = total - pos < step ? total - pos : step;
		__u32 off, idl;
		int k, ended = 0;

		if (n > PT_RAPI_SCAN - len)
			n = PT_RAPI_SCAN - len;
		memcpy(acc + len, line + pos, n);
		for (size_t i = len; i < len + n; i++)
			ended |= i >= 5 && (acc[i] == ' ' || acc[i] == '\r' || acc[i] == '\n');
		len += n;
		k = pt_rapi_classify_in(acc, (__u32)len, &off, &idl, 1);
		if (k != PT_RAPI_OTHER) {
			*at = w;
			if (id && idl < idcap) {
				memcpy(id, acc + off, idl);
				id[idl] = 0;
			}
			return k;
		}
		k = ended ? 0 : pt_rapi_partial(acc, (__u32)len);
		*unparsed += k == 2 || (k && len >= PT_RAPI_SCAN);
		if (k != 1 || len >= PT_RAPI_SCAN)
			return PT_RAPI_OTHER;
	}
	return PT_RAPI_OTHER;
}

static void test_pieces(void)
{
	static char line[1200], id[600], want[600];
	size_t at = 0;
	int un;

	CHECK_EQ_U64(feed("GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\nHost: x\r\n\r\n", 1, &at, NULL, 0, &un),
		     PT_RAPI_NEXT, "GET next written byte by byte");
	CHECK_EQ_U64(at, 39, "... found at the space after the path (write #39)");
	CHECK_EQ_U64(feed("GET /2018-06-01/runtime/invocation/nextfoo HTTP/1.1\r\n", 1, &at, NULL, 0, &un),
		     PT_RAPI_OTHER, "nextfoo byte by byte is not next");
	CHECK_EQ_U64(feed("POST /2018-06-01/runtime/invocation/8476a536-e9f4-11e8-9739-2dfe598c3fcd/response HTTP/1.1\r\n",
			  7, &at, id, sizeof(id), &un), PT_RAPI_RESPONSE, "POST response in 7-byte writes");
	CHECK_STR(id, "8476a536-e9f4-11e8-9739-2dfe598c3fcd", "... its request id");
	CHECK_EQ_U64(feed("POST /2018-06-01/runtime/invocation/abc/error HTTP/1.1\r\n", 1, &at, id, sizeof(id), &un),
		     PT_RAPI_ERROR, "POST error byte by byte");
	CHECK_EQ_U64(feed("POST /2018-06-01/runtime/invocation/abc/responses HTTP/1.1\r\n", 1, &at, NULL, 0, &un),
		     PT_RAPI_OTHER, "/responses byte by byte is not /response");
	CHECK_EQ_U64(un, 0, "... and not counted as unparsed");
	CHECK_EQ_U64(feed("POST /2018-06-01/runtime/invocation/abc/other HTTP/1.1\r\n", 3, &at, NULL, 0, &un),
		     PT_RAPI_OTHER, "another POST in pieces");
	CHECK_EQ_U64(un, 0, "... not counted as unparsed");
	CHECK_EQ_U64(feed("PUT /x HTTP/1.1\r\n", 1, &at, NULL, 0, &un), PT_RAPI_OTHER, "PUT byte by byte");
	CHECK_EQ_U64(feed("Pretty much anything", 1, &at, NULL, 0, &un), PT_RAPI_OTHER, "text starting with P");
	CHECK_EQ_U64(pt_rapi_partial("POST /2018-06-01/runtime/invoc", 30), 1, "a POST line's start may continue");
	CHECK_EQ_U64(pt_rapi_partial("GET /2018-06-01/runtime/inv", 27), 1, "a GET next line's start may continue");
	CHECK_EQ_U64(pt_rapi_partial("GET /2018-06-01/runtime/invocation/next", 39), 1, "... up to next");
	CHECK_EQ_U64(pt_rapi_partial("GET /2018-06-01/runtime/invocation/nexty", 40), 0, "... not past it");
	CHECK_EQ_U64(pt_rapi_partial("GET /2019", 9), 0, "another GET: no");
	/* 200-character ids, byte by byte; and one longer than PT_RAPI_ID_MAX: counted as unparsed. */
	memset(want, 'a', 200);
	want[200] = 0;
	snprintf(line, sizeof(line), "POST /2018-06-01/runtime/invocation/%s/response HTTP/1.1\r\n", want);
	CHECK_EQ_U64(feed(line, 1, &at, id, sizeof(id), &un), PT_RAPI_RESPONSE, "a 200-character id byte by byte");
	CHECK_STR(id, want, "... the whole id");
	memset(want, 'b', 480);
	want[480] = 0;
	snprintf(line, sizeof(line), "POST /2018-06-01/runtime/invocation/%s/response HTTP/1.1\r\n", want);
	CHECK_EQ_U64(feed(line, 64, &at, NULL, 0, &un), PT_RAPI_OTHER, "a 480-character id: not parsed");
	CHECK_EQ_U64(un, 1, "... and counted");
	CHECK_EQ_U64(feed(line, 2000, &at, NULL, 0, &un), PT_RAPI_OTHER, "... written at once");
	CHECK_EQ_U64(un, 1, "... counted too");
}

static void test_long_ids(void)
{
	static char line[1200], want[600], id[600];
	__u64 h = PT_RAPI_HASH0;

	memset(want, 'x', PT_RAPI_ID_MAX);
	want[PT_RAPI_ID_MAX] = 0;
	snprintf(line, sizeof(line), "POST /2018-06-01/runtime/invocation/%s/response HTTP/1.1\r\n", want);
	CHECK_EQ_U64(classify(line, id, sizeof(id)), PT_RAPI_RESPONSE, "an id of PT_RAPI_ID_MAX characters");
	CHECK_STR(id, want, "... whole");
	want[PT_RAPI_ID_MAX] = 'x';
	want[PT_RAPI_ID_MAX + 1] = 0;
	snprintf(line, sizeof(line), "POST /2018-06-01/runtime/invocation/%s/response HTTP/1.1\r\n", want);
	CHECK_EQ_U64(classify(line, NULL, 0), PT_RAPI_OTHER, "one character more: not parsed");
	CHECK_EQ_U64(classify("GET /2018-06-01/runtime/invocation/next", NULL, 0), PT_RAPI_NEXT, "next at a write's end");
	{
		__u32 o, l;

		CHECK_EQ_U64(pt_rapi_classify_in("GET /2018-06-01/runtime/invocation/next", 39, &o, &l, 1), PT_RAPI_OTHER,
			     "strict: next at the end of the bytes so far is not known yet");
		CHECK_EQ_U64(pt_rapi_classify_in("POST /2018-06-01/runtime/invocation/a/response", 46, &o, &l, 1),
			     PT_RAPI_OTHER, "strict: nor /response");
	}
	h = pt_rapi_hash_step(h, 'a');
	CHECK_EQ_U64(h, 0xaf63dc4c8601ec8cULL, "FNV-1a 64 of \"a\"");
}

int main(void)
{
	char id[80], out[80];
	const char *resp;

	CHECK_EQ_U64(classify("GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\nHost: x\r\n\r\n", NULL, 0),
		     PT_RAPI_NEXT, "GET next");
	CHECK_EQ_U64(classify("GET /2018-06-01/runtime/invocation/next", NULL, 0), PT_RAPI_NEXT,
		     "GET next, request line cut at the path");
	CHECK_EQ_U64(classify("GET /2018-06-01/runtime/invocation/nextx HTTP/1.1", NULL, 0), PT_RAPI_OTHER,
		     "a longer path is not next");
	CHECK_EQ_U64(classify("GET /2018-06-01/runtime/invocation/nex", NULL, 0), PT_RAPI_OTHER,
		     "a cut request line is not next");
	CHECK_EQ_U64(classify("POST /2018-06-01/runtime/invocation/8476a536-e9f4-11e8-9739-2dfe598c3fcd/response HTTP/1.1\r\n",
			      id, sizeof(id)), PT_RAPI_RESPONSE, "POST response");
	CHECK_STR(id, "8476a536-e9f4-11e8-9739-2dfe598c3fcd", "request id of a response");
	CHECK_EQ_U64(classify("POST /2018-06-01/runtime/invocation/abc/error HTTP/1.1\r\n", id, sizeof(id)),
		     PT_RAPI_ERROR, "POST error");
	CHECK_STR(id, "abc", "request id of an error");
	CHECK_EQ_U64(classify("POST /2018-06-01/runtime/init/error HTTP/1.1\r\n", NULL, 0), PT_RAPI_INIT_ERROR,
		     "POST init/error");
	CHECK_EQ_U64(classify("POST /2018-06-01/runtime/invocation/abc/other HTTP/1.1\r\n", NULL, 0),
		     PT_RAPI_OTHER, "unknown POST");
	CHECK_EQ_U64(classify("POST /2018-06-01/runtime/invocation//response HTTP/1.1\r\n", NULL, 0),
		     PT_RAPI_OTHER, "empty request id");
	CHECK_EQ_U64(classify("POST /2018-06-01/runtime/invocation/abc HTTP/1.1\r\n", NULL, 0), PT_RAPI_OTHER,
		     "no /response after the id");
	CHECK_EQ_U64(classify("POST /2018-06-01/runtime/invocation/0123456789012345678901234567890123456789"
			      "0123456789012345678901234567890123456789/response", id, sizeof(id)),
		     PT_RAPI_RESPONSE, "an id longer than PT_REQID_LEN is accepted");
	test_long_ids();
	test_pieces();
	CHECK_EQ_U64(classify("POST /2018-06-01/runtime/invocation/abc/responsefoo HTTP/1.1\r\n", NULL, 0),
		     PT_RAPI_OTHER, "/responsefoo is not /response");
	CHECK_EQ_U64(classify("POST /2018-06-01/runtime/invocation/abc/errors HTTP/1.1\r\n", NULL, 0),
		     PT_RAPI_OTHER, "/errors is not /error");
	CHECK_EQ_U64(classify("POST /2018-06-01/runtime/invocation/abc/response?x=1 HTTP/1.1\r\n", NULL, 0),
		     PT_RAPI_RESPONSE, "/response with a query string");
	CHECK_EQ_U64(classify("POST /2018-06-01/runtime/invocation/abc/response", NULL, 0), PT_RAPI_RESPONSE,
		     "/response at the end of the write");
	CHECK_EQ_U64(classify("HTTP/1.1 200 OK\r\n", NULL, 0), PT_RAPI_OTHER, "a response is no request");
	CHECK_EQ_U64(classify("", NULL, 0), PT_RAPI_OTHER, "empty write");

	resp = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	       "Lambda-Runtime-Deadline-Ms: 1700000000000\r\n"
	       "Lambda-Runtime-Aws-Request-Id: 2f1c9b1e-6a0b-4f7e-9d3c-0a1b2c3d4e5f\r\n"
	       "Lambda-Runtime-Trace-Id: Root=1-5bef4de7-ad49b0e87f6ef6c87fc2e700\r\n\r\n{}";
	CHECK_EQ_U64(pt_rapi_request_id(resp, strlen(resp), out, sizeof(out)), 36, "request id header found");
	CHECK_STR(out, "2f1c9b1e-6a0b-4f7e-9d3c-0a1b2c3d4e5f", "request id value");
	resp = "HTTP/1.1 200 OK\r\nlambda-runtime-aws-request-id:abc \r\n\r\n";
	pt_rapi_request_id(resp, strlen(resp), out, sizeof(out));
	CHECK_STR(out, "abc", "header name case-insensitive, spaces trimmed");
	resp = "HTTP/1.1 200 OK\r\nX-Lambda-Runtime-Aws-Request-Id: no\r\n\r\n";
	CHECK_EQ_U64(pt_rapi_request_id(resp, strlen(resp), out, sizeof(out)), 0,
		     "only a header at the start of a line counts");
	resp = "HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: 0123456789";
	pt_rapi_request_id(resp, strlen(resp), out, 5);
	CHECK_STR(out, "0123", "value truncated to the output size");
	CHECK_EQ_U64(pt_rapi_request_id("", 0, out, sizeof(out)), 0, "empty input");

	{
		static char hb[PT_RAPI_HDR_SCAN + 16];
		const char *h = "POST /2018-06-01/runtime/invocation/abc/response HTTP/1.1\r\nHost: x\r\n"
				"Lambda-Runtime-Function-Response-Mode: streaming\r\nTransfer-Encoding: chunked\r\n\r\n";

		memset(hb, 0, sizeof(hb));
		memcpy(hb, h, strlen(h));
		CHECK(pt_rapi_is_streaming(hb, strlen(h)), "streaming response mode header found");
		CHECK(!pt_rapi_is_streaming(hb, 60), "... not when cut before it");
		memset(hb, 0, sizeof(hb));
		memcpy(hb, "POST /x HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{}", 52);
		CHECK(!pt_rapi_is_streaming(hb, 52), "a buffered response is not streaming");
		CHECK(pt_rapi_chunked_end("0\r\n\r\n", 5, NULL), "a write of the zero-length chunk ends the body");
		CHECK(pt_rapi_chunked_end("4\r\nabcd\r\n0\r\n\r\n", 16, "\r\n0\r\n\r\n"),
		      "a last chunk written with the terminator ends the body");
		CHECK(!pt_rapi_chunked_end("4\r\nabcd\r\n", 11, "cd\r\nabc"), "a data chunk does not");
		CHECK(!pt_rapi_chunked_end("10\r\n", 4, NULL), "a chunk size starting with 1 does not");
	}
	/* The Extensions API: the process writing it is an extension (sandbox.bpf.h). */
	{
		static const char *const ext[] = {
			"POST /2020-01-01/extension/register HTTP/1.1\r\nLambda-Extension-Name: x\r\n",
			"GET /2020-01-01/extension/event/next HTTP/1.1\r\n",
		};
		static const char *const not_ext[] = {
			"GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\n",
			"POST /2020-01-01/extensionX HTTP/1.1\r\n",
			"PUT /2020-01-01/extension/register HTTP/1.1\r\n",
			"POST /2020-01-01/extension",
			"GET /2020-08-15/logs HTTP/1.1\r\n",
		};

		for (size_t k = 0; k < sizeof(ext) / sizeof(ext[0]); k++)
			CHECK(pt_rapi_is_extension(ext[k], strlen(ext[k])), "an extension request (#%zu)", k);
		for (size_t k = 0; k < sizeof(not_ext) / sizeof(not_ext[0]); k++)
			CHECK(!pt_rapi_is_extension(not_ext[k], strlen(not_ext[k])), "not an extension request (#%zu)",
			      k);
	}
	return CHECK_DONE();
}
