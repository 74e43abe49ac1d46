/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_flood — many fake Lambda Runtime API exchanges, as fast as it can (issue 23, finding 4).
 *
 * Usage: wl_flood N [BIG_EVERY]
 *
 * Over a socketpair (a, b), each exchange k = 1..N is what a runtime does on its Runtime API
 * socket: b sends the answer to "next" (HTTP/1.1 200, request id "fld-K"), a writes
 * "GET /2018-06-01/runtime/invocation/next", reads that answer (the invocation starts), and
 * writes "POST /2018-06-01/runtime/invocation/fld-K/response" (it ends); b drains a's requests.
 * No other process, no network: what peaktrace's Runtime API detector sees from any process.
 *
 * Every BIG_EVERY-th exchange (default 5000), at k = BIG_EVERY/2 + j*BIG_EVERY, the invocation
 * maps 4 MiB, touches it and unmaps it: its RSS peak stands 4 MiB above the others', so
 * a report that keeps the biggest peaks keeps exactly those. When done it writes
 * "wl: flood N big M\n" (M: how many big ones) to stdout (write(2)) and exits 0.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "wl_common.h"

#define BIG_BYTES (4u << 20)

static char resp[256], post[256], rbuf[65536];
static const char get_next[] = "GET /2018-06-01/runtime/invocation/next HTTP/1.1\r\n"
			       "Host: 127.0.0.1:9001\r\nUser-Agent: wl_flood\r\n\r\n";

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* An invocation whose RSS peaks 4 MiB higher: mapped, touched and unmapped (a malloc'd block
 * would stay resident in glibc's heap once its mmap threshold rose past 4 MiB). */
WL_SCENARIO void scn_flood_big(void)
{
	char *p = mmap(NULL, BIG_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	memset(p, 1, BIG_BYTES);
	wl_sink(p);
	munmap(p, BIG_BYTES);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	unsigned long every = argc > 2 ? strtoul(argv[2], NULL, 10) : 5000, big = 0;
	char done[64];
	int sv[2];

	if (!every)
		every = 1;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	for (unsigned long k = 1; k <= n; k++) {
		int rl = snprintf(resp, sizeof(resp),
				  "HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: fld-%lu\r\n"
				  "Content-Length: 2\r\n\r\n{}", k);
		int pl = snprintf(post, sizeof(post),
				  "POST /2018-06-01/runtime/invocation/fld-%lu/response HTTP/1.1\r\n"
				  "Content-Length: 2\r\n\r\n{}", k);

		if (write_all(sv[1], resp, (size_t)rl) ||
		    write_all(sv[0], get_next, sizeof(get_next) - 1) ||
		    read(sv[0], rbuf, sizeof(rbuf)) <= 0)
			return 1;
		if (k % every == every / 2) {
			scn_flood_big();
			big++;
		}
		if (write_all(sv[0], post, (size_t)pl) || read(sv[1], rbuf, sizeof(rbuf)) <= 0)
			return 1;
	}
	snprintf(done, sizeof(done), "wl: flood %lu big %lu\n", n, big);
	wl_say(1, done);
	return 0;
}
