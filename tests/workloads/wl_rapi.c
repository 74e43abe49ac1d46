/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_rapi — a Lambda runtime that writes its Runtime API requests in pieces (tests/sections/
 * rapi.py): the Runtime API detector (bpf/invocation.bpf.h) must reassemble them.
 *
 * Usage: wl_rapi HOST:PORT N STEP
 *
 * N times: "GET /2018-06-01/runtime/invocation/next HTTP/1.1" and its headers, written STEP
 * bytes per write(2) (1: byte by byte); the answer's Lambda-Runtime-Aws-Request-Id header (of
 * any length) and its body, a number of MiB; that many MiB malloc'ed and touched, freed; then
 * "POST /2018-06-01/runtime/invocation/ID/response HTTP/1.1" with a small body, written STEP
 * bytes per write too, and its answer read. One keep-alive connection. No stdio (wl_common.h).
 * Exits 0 after N invocations, 1 on any protocol error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "wl_common.h"

static char rbuf[65536];
static size_t rlen;

/* Write s in pieces of step bytes, one write(2) each. */
static int put(int fd, const char *s, size_t n, size_t step)
{
	while (n) {
		size_t k = n < step ? n : step;
		ssize_t w = write(fd, s, k);

		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One HTTP response: its headers in rbuf (NUL-ended), its body at *body (Content-Length bytes). */
static int get_response(int fd, char **body, size_t *blen)
{
	char *end, *cl;
	size_t need;

	rlen = 0;
	for (;;) {
		ssize_t r;

		rbuf[rlen] = 0;
		if ((end = strstr(rbuf, "\r\n\r\n")))
			break;
		if (rlen >= sizeof(rbuf) - 1 || (r = read(fd, rbuf + rlen, sizeof(rbuf) - 1 - rlen)) <= 0)
			return -1;
		rlen += (size_t)r;
	}
	cl = strcasestr(rbuf, "\r\nContent-Length:");
	*blen = cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0;
	need = (size_t)(end + 4 - rbuf) + *blen;
	if (need >= sizeof(rbuf))
		return -1;
	while (rlen < need) {
		ssize_t r = read(fd, rbuf + rlen, need - rlen);

		if (r <= 0)
			return -1;
		rlen += (size_t)r;
	}
	rbuf[rlen] = 0;
	*end = 0;
	*body = end + 4;
	return 0;
}

static WL_SCENARIO void scn_rapi_handler(size_t mb)
{
	char *p = malloc(wl_opaque_size(mb << 20));

	if (!p)
		return;
	memset(p, 1, mb << 20);
	wl_sink(p);
	free(p);
}

int main(int argc, char **argv)
{
	static char req[4096], id[2048];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char *colon, *body, *h;
	size_t step, blen;
	int fd, n, one = 1;

	if (argc != 4 || !(colon = strchr(argv[1], ':')))
		return 2;
	*colon = 0;
	sa.sin_port = htons((unsigned short)atoi(colon + 1));
	n = atoi(argv[2]);
	step = strtoul(argv[3], NULL, 10);
	if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1 || !step)
		return 2;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	/* Each piece its own segment, as a client flushing small writes would send them. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return 1;
	for (int i = 0; i < n; i++) {
		int len = snprintf(req, sizeof(req), "GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\n"
				   "Host: %s\r\n\r\n", argv[1]);
		size_t k;

		if (put(fd, req, (size_t)len, step) || get_response(fd, &body, &blen))
			return 1;
		h = strcasestr(rbuf, "\r\nLambda-Runtime-Aws-Request-Id:");
		if (!h)
			return 1;
		h += 32;
		while (*h == ' ')
			h++;
		for (k = 0; h[k] && h[k] != '\r' && k < sizeof(id) - 1; k++)
			id[k] = h[k];
		id[k] = 0;
		scn_rapi_handler(strtoul(body, NULL, 10));
		len = snprintf(req, sizeof(req), "POST /2018-06-01/runtime/invocation/%s/response HTTP/1.1\r\n"
			       "Host: %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
			       id, argv[1]);
		if (len >= (int)sizeof(req) || put(fd, req, (size_t)len, step) || get_response(fd, &body, &blen))
			return 1;
	}
	return 0;
}
