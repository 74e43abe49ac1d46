/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* fmt.c — formatting shared by every writer: byte sizes for people, JSON strings, and
 * the one rule that makes names a traced process controls safe to print. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/fmt.h"

const char *pt_fmt_bytes(char *buf, size_t len, double b)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double a = b < 0 ? -b : b;
	int u = 0;

	while (a >= 1024 && u < 4) {
		a /= 1024;
		b /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%.0f B", b);
	else
		snprintf(buf, len, "%.2f %s", b, units[u]);
	return buf;
}

size_t pt_utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* The second byte's range is what rules out overlongs and surrogates. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/* How many bytes at s are kept as they are (0: escape s[0]). */
static size_t kept_len(const unsigned char *s)
{
	size_t n;

	if (*s < 0x20 || *s == 0x7f)
		return 0;
	n = pt_utf8_len(s);
	if (n == 2 && s[0] == 0xc2 && s[1] <= 0x9f)
		return 0;   /* U+0080-U+009F: C1 controls, encoded */
	return n;
}

size_t pt_sanitize(char *dst, size_t cap, const char *src)
{
	const unsigned char *in = (const unsigned char *)(src ? src : "");
	size_t need = 0, end = 0, n, w;
	bool full = !dst || !cap;

	while (*in) {
		char esc[5];
		const char *piece = (const char *)in;

		n = kept_len(in);
		w = n;
		if (!n) {
			snprintf(esc, sizeof(esc), "\\x%02x", *in);
			piece = esc;
			n = 1;
			w = 4;
		}
		/* Whole pieces only: a cut never leaves half a character or half an escape. */
		if (!full && end + w < cap) {
			memcpy(dst + end, piece, w);
			end += w;
		} else {
			full = true;
		}
		need += w;
		in += n;
	}
	if (dst && cap)
		dst[end] = '\0';
	return need;
}

char *pt_sanitize_dup(const char *src)
{
	size_t n = pt_sanitize(NULL, 0, src);
	char *out = malloc(n + 1);

	if (out)
		pt_sanitize(out, n + 1, src);
	return out;
}

int pt_needs_sanitize(const char *s)
{
	const unsigned char *in = (const unsigned char *)(s ? s : "");
	size_t n;

	for (; *in; in += n)
		if (!(n = kept_len(in)))
			return 1;
	return 0;
}

void pt_put_u64(FILE *f, uint64_t v)
{
	char buf[20];
	int i = sizeof(buf);

	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite(buf + i, 1, sizeof(buf) - i, f);
}

/* One JSON string writer for both: script adds what must not appear raw inside an HTML
 * <script> element ('<', '>', '&' as \u00XX; U+2028/U+2029, which end a line in older JS) and
 * writes every control character as \u00XX. */
static void json_str(FILE *f, const char *s, bool script)
{
	const unsigned char *in = (const unsigned char *)(s ? s : "");
	size_t n;

	fputc('"', f);
	for (; *in; in += n) {
		unsigned char c = *in;

		n = 1;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n' && !script)
			fputs("\\n", f);
		else if (c == '\t' && !script)
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f || (script && (c == '<' || c == '>' || c == '&')))
			fprintf(f, "\\u%04x", c);
		else if (c < 0x80)
			fputc(c, f);
		else if (!(n = pt_utf8_len(in)))
			/* Not UTF-8, which JSON must be: the replacement character, one per byte. */
			fputs("\\ufffd", f), n = 1;
		else if (n == 2 && c == 0xc2 && in[1] <= 0x9f)
			fprintf(f, "\\u%04x", in[1]);   /* a C1 control, escaped like C0 */
		else if (script && n == 3 && c == 0xe2 && in[1] == 0x80 && (in[2] == 0xa8 || in[2] == 0xa9))
			fprintf(f, "\\u%04x", 0x2000 | (in[2] - 0x80));
		else
			fwrite(in, 1, n, f);
	}
	fputc('"', f);
}

void pt_json_str(FILE *f, const char *s)
{
	json_str(f, s, false);
}

void pt_json_str_script(FILE *f, const char *s)
{
	json_str(f, s, true);
}
