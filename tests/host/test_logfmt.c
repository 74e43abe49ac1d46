// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_logfmt: lambda-host's Lambda-exact formatting (tools/lambda-host/logfmt.c) and the sample
 * runtime's event scraps (tools/functions/runtime.c), as pure functions on the host.
 * Built by `make lambda-host` into BUILD/tests/host/test_logfmt; run by tests/host/test_host.py. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include "check.h"
#include "host.h"
#include "runtime.h"

static void test_report(void)
{
	char buf[512];
	const char *id = "8476a536-e9f4-4e8e-8cd6-6a3f4d0f7c40";

	format_report(buf, sizeof(buf), id, 12.344, 128, 18, -1, NULL, NULL);
	CHECK_STR(buf, "REPORT RequestId: 8476a536-e9f4-4e8e-8cd6-6a3f4d0f7c40\tDuration: 12.34 ms\t"
		  "Billed Duration: 13 ms\tMemory Size: 128 MB\tMax Memory Used: 18 MB\t", "warm REPORT");
	format_report(buf, sizeof(buf), id, 1.0, 256, 40, 120.556, NULL, NULL);
	CHECK_STR(buf, "REPORT RequestId: 8476a536-e9f4-4e8e-8cd6-6a3f4d0f7c40\tDuration: 1.00 ms\t"
		  "Billed Duration: 1 ms\tMemory Size: 256 MB\tMax Memory Used: 40 MB\t"
		  "Init Duration: 120.56 ms\t", "cold REPORT has Init Duration");
	format_report(buf, sizeof(buf), id, 250.5, 128, 128, -1, "error", "Runtime.OutOfMemory");
	CHECK_STR(buf, "REPORT RequestId: 8476a536-e9f4-4e8e-8cd6-6a3f4d0f7c40\tDuration: 250.50 ms\t"
		  "Billed Duration: 251 ms\tMemory Size: 128 MB\tMax Memory Used: 128 MB\t"
		  "Status: error\tError Type: Runtime.OutOfMemory\t", "OOM REPORT");
	format_report(buf, sizeof(buf), id, 11.003, 128, 9, -1, NULL, NULL);
	CHECK(strstr(buf, "\tDuration: 11.00 ms\tBilled Duration: 11 ms\t") != NULL,
	      "printed duration and billed agree: %s", buf);
	format_report(buf, sizeof(buf), id, 3000.0, 128, 9, -1, "timeout", NULL);
	CHECK(strstr(buf, "Billed Duration: 3000 ms\t") && strstr(buf, "\tStatus: timeout\t") &&
	      !strstr(buf, "Error Type"), "timeout REPORT: %s", buf);
}

static void test_rounding(void)
{
	CHECK_EQ_U64(billed_ms(0.01), 1, "billed minimum 1 ms");
	CHECK_EQ_U64(billed_ms(1.0), 1, "billed 1.00 ms");
	CHECK_EQ_U64(billed_ms(1.006), 2, "billed rounds up (1.01 ms)");
	CHECK_EQ_U64(billed_ms(100.0), 100, "billed exact");
	CHECK_EQ_U64(billed_ms(11.003), 11, "billed follows the printed 11.00");
	CHECK_EQ_U64(billed_ms(11.006), 12, "printed 11.01 bills 12");
	CHECK_EQ_U64(used_mb(0), 0, "0 bytes = 0 MB");
	CHECK_EQ_U64(used_mb(1), 1, "1 byte rounds up to 1 MB");
	CHECK_EQ_U64(used_mb(64ull << 20), 64, "64 MiB = 64 MB");
	CHECK_EQ_U64(used_mb((64ull << 20) + 1), 65, "64 MiB + 1 = 65 MB");
}

static void test_exit_and_errors(void)
{
	char buf[256];

	describe_exit(SIGKILL, buf, sizeof(buf));   /* wait status of a SIGKILLed child */
	CHECK_STR(buf, "signal: killed", "SIGKILL wording");
	describe_exit(SIGSEGV, buf, sizeof(buf));
	CHECK_STR(buf, "signal: segmentation fault", "SIGSEGV wording");
	describe_exit(3 << 8, buf, sizeof(buf));
	CHECK_STR(buf, "exit status 3", "exit wording");
	json_error(buf, sizeof(buf), "Runtime.ExitError", "say \"%s\"\n\\", "hi");
	CHECK_STR(buf, "{\"errorType\":\"Runtime.ExitError\","
		  "\"errorMessage\":\"say \\\"hi\\\"\\u000a\\\\\"}", "json_error escapes");
	CHECK(json_error(buf, 16, "T", "%s", "a long message that cannot fit") < 0 ||
	      strlen(buf) < 16, "json_error stays in bounds");
}

static void test_ids(void)
{
	char id[REQ_ID_LEN + 1], id2[REQ_ID_LEN + 1], trace[96];

	uuid_v4(id);
	uuid_v4(id2);
	CHECK(strlen(id) == 36 && id[8] == '-' && id[14] == '4' && strchr("89ab", id[19]),
	      "uuid v4 shape: %s", id);
	CHECK(strcmp(id, id2) != 0, "two uuids differ");
	CHECK(valid_request_id(id, strlen(id)), "our ids are valid ids");
	CHECK(!valid_request_id("a/b", 3) && !valid_request_id("", 0) &&
	      !valid_request_id("x\r\n", 3), "bad ids rejected");
	trace_id_new(trace, sizeof(trace));
	CHECK(!strncmp(trace, "Root=1-", 7) && strstr(trace, ";Parent=") &&
	      strstr(trace, ";Sampled=0"), "trace id: %s", trace);
}

static void test_json_scraps(void)
{
	const char *ev = "{\"a\": {\"mb\" : 64}, \"fail\":true, \"neg\":-5, \"bad\": \"x\"}";
	size_t n = strlen(ev);

	CHECK_EQ_U64(rt_json_int(ev, n, "mb", 0), 64, "nested mb");
	CHECK_EQ_U64(rt_json_int(ev, n, "neg", 0), (uint64_t)-5, "negative");
	CHECK_EQ_U64(rt_json_int(ev, n, "bad", 7), 7, "non-number gives the default");
	CHECK_EQ_U64(rt_json_int(ev, n, "missing", 9), 9, "missing gives the default");
	CHECK_EQ_U64(rt_json_int(ev, 10, "mb", 1), 1, "length bound respected");
	CHECK_EQ_U64(rt_json_int("{\"mb\":", 6, "mb", 2), 2, "truncated input");
	CHECK(rt_json_bool(ev, n, "fail", false), "bool true");
	CHECK(!rt_json_bool("{\"fail\":false}", 14, "fail", true), "bool false");
	CHECK(rt_json_bool("{\"fail\":1}", 10, "fail", true), "bool malformed gives the default");
}

/* The sample runtime's HTTP client de-chunks a body of many small chunks holding NULs and CRLFs
 * (a real loopback socket; the server writes the whole response at once, so one recv brings
 * thousands of chunks: the case that used to cost a memmove per chunk). */
#define CHUNKS 20000
static void test_chunked(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM, 0), ok = 1;
	char hp[32], *want = malloc(CHUNKS * 8);
	size_t wlen = 0;
	pid_t pid;

	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &al) || !want) {
		CHECK(0, "loopback listener for the chunked test");
		return;
	}
	for (int i = 0; i < CHUNKS; i++)
		for (int k = 0; k < 1 + i % 7; k++)
			want[wlen++] = (char)("a\0\r\nz"[(i + k) % 5]);
	pid = fork();
	if (pid == 0) {
		static char out[CHUNKS * 16 + 256], req[4096];
		size_t n = 0, w = 0;
		int cs = accept(ls, NULL, NULL);

		if (cs < 0 || recv(cs, req, sizeof(req), 0) <= 0)
			_exit(1);
		n += (size_t)sprintf(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
		for (int i = 0; i < CHUNKS; i++) {
			int len = 1 + i % 7;

			n += (size_t)sprintf(out + n, "%x\r\n", len);
			memcpy(out + n, want + w, (size_t)len);
			n += (size_t)len;
			w += (size_t)len;
			memcpy(out + n, "\r\n", 2);
			n += 2;
		}
		n += (size_t)sprintf(out + n, "0\r\nX-Trailer: 1\r\n\r\n");
		for (size_t off = 0; off < n;) {
			ssize_t k = send(cs, out + off, n - off, 0);

			if (k <= 0)
				_exit(1);
			off += (size_t)k;
		}
		sleep(5);
		_exit(0);
	}
	close(ls);
	snprintf(hp, sizeof(hp), "127.0.0.1:%d", ntohs(a.sin_port));
	{
		struct http_conn c;
		struct http_resp r = {0};
		const char *why = NULL;
		int rc = http_init(&c, hp, 10.0);

		if (!rc)
			rc = http_request(&c, "GET", "/chunked", "", NULL, 0, &r, &why);
		CHECK_EQ_U64((uint64_t)(rc == 0), 1, "chunked response read");
		ok = rc == 0 && r.body.len == wlen && !memcmp(r.body.data, want, wlen);
		CHECK(ok, "20000 small chunks with NUL and CRLF bytes de-chunked exactly");
		CHECK_EQ_U64(r.body.len, wlen, "de-chunked body length");
		http_resp_free(&r);
		http_close(&c);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	free(want);
}

int main(void)
{
	test_report();
	test_rounding();
	test_exit_and_errors();
	test_ids();
	test_json_scraps();
	test_chunked();
	return CHECK_DONE();
}
