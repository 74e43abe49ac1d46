// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_sandbox: the sandbox report (follow/sandbox.c) from a hand-made kernel record: roles, the
 * shares' check, the REPORT-style lines with the request ids from the runtime's own
 * invocations.jsonl, and sandbox.json's figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "follow/sandbox.h"
#include "util/outdir.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *b = calloc(1, 1 << 16);

	if (f && b)
		b[fread(b, 1, (1 << 16) - 1, f)] = 0;
	if (f)
		fclose(f);
	return b;
}

int main(void)
{
	static struct pt_sandbox sb;
	struct pt_sbx_image img[3] = {
		{ .pid = 100, .slot = 0, .image = 1, .comm = "sh", .dir = "proc-100-sh", .traced = true, .held = true,
		  .held_ns = 2000000, .session_rc = 0 },
		{ .pid = 101, .slot = 1, .image = 1, .comm = "ext", .dir = "proc-101-ext", .traced = true, .held = true,
		  .held_ns = 4000000, .session_rc = 0 },
		{ .pid = 102, .slot = 2, .image = 1, .comm = "python3", .dir = "proc-102-python3", .traced = true, .held = true,
		  .held_ns = 6000000, .session_rc = 0 },
	};
	struct pt_sbx_report r = { .sb = &sb, .img = img, .nimg = 3, .top = 3 };
	char dir[] = "/tmp/test_sandbox.XXXXXX", path[256], *txt, *js;
	FILE *f;

	sb.extension[1] = 2;
	sb.runtime[2] = 1;
	CHECK_STR(pt_sbx_role(&sb, 0), "process", "no API traffic: a process");
	CHECK_STR(pt_sbx_role(&sb, 1), "extension", "Extensions API traffic: an extension");
	CHECK_STR(pt_sbx_role(&sb, 2), "runtime", "invocations: the runtime");
	CHECK_STR(pt_sbx_role(&sb, PT_SBX_SLOTS), "process", "a slot out of range");

	sb.at_peak[0] = 1 << 20;
	sb.at_peak[1] = 8 << 20;
	sb.at_peak[2] = 56 << 20;
	sb.peak = 65 << 20;
	CHECK_EQ_U64(pt_sbx_unexplained(sb.at_peak, sb.peak), 0, "shares adding up to the peak");
	sb.at_peak[2] += 4096;
	CHECK_EQ_U64(pt_sbx_unexplained(sb.at_peak, sb.peak), 4096, "a share moved during the copy");
	sb.at_peak[2] -= 4096;
	sb.own_peak[0] = 1 << 20;
	sb.own_peak[1] = 40 << 20;
	sb.own_peak[2] = 56 << 20;
	sb.inv_n = 2;
	sb.invs[0] = (struct pt_sbx_inv){ .owner = 3, .seq = 1, .peak = (65 << 20) + 1,
					  .at_peak = { 1 << 20, 8 << 20, (56 << 20) + 1 } };
	sb.invs[1] = (struct pt_sbx_inv){ .owner = 3, .seq = 2, .peak = 30 << 20,
					  .at_peak = { 1 << 20, 8 << 20, 21 << 20 } };

	if (!mkdtemp(dir) || pt_outdir_prepare(dir))   /* outputs go through the held dir */
		return 1;
	r.outdir = dir;
	snprintf(path, sizeof(path), "%s/proc-102-python3", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc-102-python3/invocations.jsonl", dir);
	f = fopen(path, "w");
	fprintf(f, "{\"seq\": 0, \"phase\": \"init\", \"request_id\": \"\"}\n"
		   "{\"seq\": 1, \"phase\": \"invocation\", \"started_before_trace\": false, \"request_id\": \"id-one\"}\n"
		   "{\"seq\": 2, \"phase\": \"invocation\", \"started_before_trace\": false, \"request_id\": \"id-\\u001btwo\"}\n");
	fclose(f);
	CHECK(pt_sbx_report_write(&r, true) == 0, "sandbox.txt and sandbox.json written");
	snprintf(path, sizeof(path), "%s/sandbox.txt", dir);
	txt = slurp(path);
	CHECK(strstr(txt, "SANDBOX RequestId: id-one\tInvocation: 1\tMax Memory Used: 66 MB\t"
			  "sh[100] process: 1 MB\text[101] extension: 8 MB\tpython3[102] runtime: 57 MB\n") != NULL,
	      "REPORT-style line: the id from the runtime's invocations.jsonl, MB rounded up, each share");
	CHECK(strstr(txt, "SANDBOX RequestId: id-\tInvocation: 2\tMax Memory Used: 30 MB") != NULL,
	      "an escaped id is cut at its escape, never printed raw");
	CHECK(strstr(txt, "peak of the summed RSS: 65.00 MiB (the sum of each process's own peak would say 97.00 MiB)")
	      != NULL, "the peak of the sum beside the sum of own peaks");
	CHECK(strstr(txt, "3 process images traced (3 held at their exec until traced: 4 ms each on average, at most 6 ms)") != NULL,
	      "what holding cost");
	snprintf(path, sizeof(path), "%s/sandbox.json", dir);
	js = slurp(path);
	CHECK(strstr(js, "\"rss_peak\": 68157440,") != NULL, "sandbox.json rss_peak");
	CHECK(strstr(js, "\"sum_of_own_peaks\": 101711872,") != NULL, "sandbox.json sum_of_own_peaks");
	CHECK(strstr(js, "\"at_peak\": {\"100\": 1048576, \"101\": 8388608, \"102\": 58720256}") != NULL,
	      "sandbox.json at_peak by pid");
	CHECK(strstr(js, "\"request_id\": \"id-one\"") != NULL, "sandbox.json invocation request id");
	CHECK(strstr(js, "\"role\": \"extension\"") != NULL, "sandbox.json role");
	free(txt);
	free(js);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path))
		return 1;
	return CHECK_DONE();
}
