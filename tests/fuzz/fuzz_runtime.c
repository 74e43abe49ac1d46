// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_runtime — the HTTP/1.1 client of the bundled runtime (tools/functions/runtime.c, also the
 * invoke tool's): the input is what the server sent on the keep-alive connection, read through
 * a socketpair by read_response (status line, headers, Content-Length / chunked / to-EOF body,
 * trailers) until it fails or the bytes run out, with http_header and the JSON scraps on each
 * response. runtime.c is included: its reader is static.
 */
#include <fcntl.h>
#include <sys/socket.h>
#include "tools/functions/runtime.c"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_conn c = { .fd = -1 };
	struct http_resp r = { 0 };
	int sv[2], rounds = 0;
	size_t off = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 0;
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	while (off < size) {
		ssize_t n = write(sv[1], data + off, size - off);

		if (n <= 0)
			break;  /* the socket buffer is full: the rest is never sent */
		off += (size_t)n;
	}
	close(sv[1]);
	c.fd = sv[0];
	c.timeout_s = 1;
	while (rounds++ < 64) {
		const char *why = NULL;
		bool got_any = false;   /* only says whether to retry on a fresh connection */
		char v[128];
		int n;

		if (read_response(&c, &r, &got_any, &why)) {
			FUZZ_ASSERT(why != NULL);
			break;
		}
		FUZZ_ASSERT(r.status >= 100 && r.status <= 999);
		FUZZ_ASSERT(r.head.data && strlen(r.head.data) == r.head.len);
		FUZZ_ASSERT(!r.body.len || r.body.data[r.body.len] == 0);
		n = http_header(&r, "Lambda-Runtime-Aws-Request-Id", v, sizeof(v));
		FUZZ_ASSERT(n < (int)sizeof(v));
		n = http_header(&r, "Lambda-Runtime-Deadline-Ms", v, sizeof(v));
		FUZZ_ASSERT(n < (int)sizeof(v));
		(void)rt_json_int(r.body.data, r.body.len, "mb", 0);
		(void)rt_json_bool(r.body.data, r.body.len, "fail", false);
		if (r.close)
			break;
	}
	http_resp_free(&r);
	rt_buf_free(&c.in);
	close(sv[0]);
	return 0;
}
