// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * logfmt.c — Lambda's log lines, ids and error bodies, as small pure functions.
 *
 * Everything that must match Lambda byte for byte lives here, away from the threads: the REPORT
 * line (tab-separated, every field followed by a tab, Init Duration on cold starts only), billed
 * duration, the MB rounding of Max Memory Used, and the wording of runtime exits.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include "host.h"

static void random_bytes(unsigned char *p, size_t n)
{
	ssize_t got = getrandom(p, n, 0);

	/* getrandom() on a booted kernel does not fail for <= 256 bytes; keep ids distinct anyway. */
	if (got != (ssize_t)n) {
		static unsigned long ctr;
		struct timespec ts;
		size_t i;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (i = 0; i < n; i++)
			p[i] = (unsigned char)((unsigned long)ts.tv_nsec >> (i % 8) ^ ++ctr * 131 ^ i);
	}
}

static void hex(char *out, const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

void uuid_v4(char out[REQ_ID_LEN + 1])
{
	unsigned char b[16];
	char h[33];

	random_bytes(b, sizeof(b));
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);   /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);   /* RFC 4122 variant */
	hex(h, b, sizeof(b));
	snprintf(out, REQ_ID_LEN + 1, "%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12, h + 16, h + 20);
}

/* X-Ray's format: Root=1-<epoch seconds, hex>-<96 random bits>;Parent=<64 bits>;Sampled=0 */
void trace_id_new(char *out, size_t outsz)
{
	unsigned char b[20];
	char root[25], parent[17];

	random_bytes(b, sizeof(b));
	hex(root, b, 12);
	hex(parent, b + 12, 8);
	snprintf(out, outsz, "Root=1-%08lx-%s;Parent=%s;Sampled=0", (unsigned long)time(NULL), root,
		 parent);
}

/* Lambda names a sandbox's stream YYYY/MM/DD/[VERSION]<32 hex>. */
void log_stream_name(char *out, size_t outsz)
{
	unsigned char b[16];
	char h[33], day[16];
	time_t now = time(NULL);
	struct tm tm;

	random_bytes(b, sizeof(b));
	hex(h, b, sizeof(b));
	gmtime_r(&now, &tm);
	strftime(day, sizeof(day), "%Y/%m/%d", &tm);
	snprintf(out, outsz, "%s/[$LATEST]%s", day, h);
}

/* Durations are shown in hundredths of a millisecond; everything derives from that one value. */
static unsigned long long hundredths(double ms)
{
	return ms > 0 ? (unsigned long long)(ms * 100.0 + 0.5) : 0;
}

/*
 * Lambda bills in 1 ms steps, rounding up, never less than 1 ms. Rounded up from the duration as
 * printed, so "Duration: 11.00 ms" never comes with "Billed Duration: 12 ms".
 */
unsigned long billed_ms(double duration_ms)
{
	unsigned long long h = hundredths(duration_ms);

	return h <= 100 ? 1 : (unsigned long)((h + 99) / 100);
}

/* Memory figures are whole MB (MiB); round up so a footprint is never under-reported. */
unsigned long used_mb(uint64_t bytes)
{
	return (unsigned long)((bytes + (1u << 20) - 1) >> 20);
}

int format_report(char *out, size_t outsz, const char *id, double duration_ms, unsigned memory_mb,
		  unsigned long max_used_mb, double init_ms, const char *status,
		  const char *error_type)
{
	unsigned long long d = hundredths(duration_ms), i = hundredths(init_ms);
	int n = snprintf(out, outsz,
			 "REPORT RequestId: %s\tDuration: %llu.%02llu ms\tBilled Duration: %lu ms\t"
			 "Memory Size: %u MB\tMax Memory Used: %lu MB\t",
			 id, d / 100, d % 100, billed_ms(duration_ms), memory_mb, max_used_mb);

	if (n >= 0 && init_ms >= 0 && (size_t)n < outsz)
		n += snprintf(out + n, outsz - (size_t)n, "Init Duration: %llu.%02llu ms\t", i / 100,
			      i % 100);
	if (n >= 0 && status && (size_t)n < outsz)
		n += snprintf(out + n, outsz - (size_t)n, "Status: %s\t", status);
	if (n >= 0 && error_type && (size_t)n < outsz)
		n += snprintf(out + n, outsz - (size_t)n, "Error Type: %s\t", error_type);
	return n;
}

/* {"errorType":"T","errorMessage":"M"} with M JSON-escaped. */
int json_error(char *out, size_t outsz, const char *type, const char *fmt, ...)
{
	char msg[1024];
	size_t o = 0;
	va_list ap;
	const char *s;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = snprintf(out, outsz, "{\"errorType\":\"%s\",\"errorMessage\":\"", type);
	if (n < 0 || (size_t)n >= outsz)
		return -1;
	o = (size_t)n;
	for (s = msg; *s && o + 8 < outsz; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			o += (size_t)snprintf(out + o, outsz - o, "\\%c", ch);
		else if (ch < 0x20)
			o += (size_t)snprintf(out + o, outsz - o, "\\u%04x", ch);
		else
			out[o++] = (char)ch;
	}
	n = snprintf(out + o, outsz - o, "\"}");
	return n < 0 ? -1 : (int)(o + (size_t)n);
}

void iso8601_now(char *out, size_t outsz)
{
	struct timespec ts;
	struct tm tm;
	char buf[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, outsz, "%s.%03ldZ", buf, ts.tv_nsec / 1000000);
}

/* Go's os/exec wording, which Lambda's messages use: "exit status 1", "signal: killed". */
void describe_exit(int wstatus, char *out, size_t outsz)
{
	if (WIFEXITED(wstatus)) {
		snprintf(out, outsz, "exit status %d", WEXITSTATUS(wstatus));
	} else if (WIFSIGNALED(wstatus)) {
		const char *name = strsignal(WTERMSIG(wstatus));
		size_t i, n;

		n = (size_t)snprintf(out, outsz, "signal: %s", name ? name : "unknown");
		for (i = 8; i < n && i < outsz; i++)
			out[i] = (char)tolower((unsigned char)out[i]);
	} else {
		snprintf(out, outsz, "unknown status %#x", wstatus);
	}
}

/* Ids we hand out are UUIDs; accept the same alphabet so bad input never reaches a log line. */
bool valid_request_id(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > 64)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-')
			return false;
	return true;
}
