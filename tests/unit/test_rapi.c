// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_rapi: Runtime API request recognition (bpf/rapi.h, shared with the BPF program) and the
 * request-id header parser (user/invocation.c). */
#include <string.h>
#include "check.h"
#include "bpf/rapi.h"
#include "invocation/invocation.h"

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
			      "0123456789012345678901234567890123456789/response", NULL, 0),
		     PT_RAPI_OTHER, "an id longer than PT_REQID_LEN is refused");
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
