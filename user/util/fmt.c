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

/* The code point of the valid n-byte UTF-8 sequence at s. */
static uint32_t utf8_cp(const unsigned char *s, size_t n)
{
	uint32_t cp = n == 1 ? s[0] : n == 2 ? s[0] & 0x1f : n == 3 ? s[0] & 0x0f : s[0] & 0x07;

	for (size_t i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/* Unicode's format characters (general category Cf, Unicode 15.1), and the line and paragraph
 * separators U+2028/U+2029: invisible, yet they reorder (bidi overrides and isolates), join,
 * hide or break the text around them, so "evil\u202e)(cod.py" could read as another name. */
bool pt_is_format_cp(uint32_t cp)
{
	static const uint32_t ranges[][2] = {
		{ 0x00ad, 0x00ad }, { 0x0600, 0x0605 }, { 0x061c, 0x061c }, { 0x06dd, 0x06dd },
		{ 0x070f, 0x070f }, { 0x0890, 0x0891 }, { 0x08e2, 0x08e2 }, { 0x180e, 0x180e },
		{ 0x200b, 0x200f }, { 0x2028, 0x202e }, { 0x2060, 0x2064 }, { 0x2066, 0x206f },
		{ 0xfeff, 0xfeff }, { 0xfff9, 0xfffb }, { 0x110bd, 0x110bd }, { 0x110cd, 0x110cd },
		{ 0x13430, 0x1343f }, { 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a }, { 0xe0001, 0xe0001 },
		{ 0xe0020, 0xe007f },
	};

	if (cp < 0xad)
		return false;
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (cp >= ranges[i][0] && cp <= ranges[i][1])
			return true;
	return false;
}

size_t pt_format_char(const unsigned char *s, uint32_t *cp)
{
	size_t n = s[0] >= 0xc2 ? pt_utf8_len(s) : 0;
	uint32_t c = n ? utf8_cp(s, n) : 0;

	if (!n || !pt_is_format_cp(c))
		return 0;
	if (cp)
		*cp = c;
	return n;
}

int pt_format_escape(char *out, size_t cap, uint32_t cp)
{
	return snprintf(out, cap, cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
}

/* How many bytes at s are kept as they are (0: escape what starts at s). */
static size_t kept_len(const unsigned char *s)
{
	size_t n;

	if (*s < 0x20 || *s == 0x7f)
		return 0;
	n = pt_utf8_len(s);
	if (n == 2 && s[0] == 0xc2 && s[1] <= 0x9f)
		return 0;   /* U+0080-U+009F: C1 controls, encoded */
	if (n > 1 && pt_format_char(s, NULL))
		return 0;
	return n;
}

size_t pt_sanitize(char *dst, size_t cap, const char *src)
{
	const unsigned char *in = (const unsigned char *)(src ? src : "");
	size_t need = 0, end = 0, n, w;
	bool full = !dst || !cap;

	while (*in) {
		char esc[12];
		const char *piece = (const char *)in;
		uint32_t cp;

		n = kept_len(in);
		w = n;
		if (!n && (n = pt_format_char(in, &cp))) {
			/* A whole format character: its code point, as "\u202e". */
			w = (size_t)pt_format_escape(esc, sizeof(esc), cp);
			piece = esc;
		} else if (!n) {
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

/* A format character (pt_is_format_cp) in a JSON string: escaped, so the raw code point is never
 * in the file. In report.json as a JSON escape (a surrogate pair above U+FFFF): the data keeps
 * the character. Inside report.html's <script> the page shows the text, and a decoded \u202e
 * would act there: the visible "\u202e" pt_sanitize writes instead. */
static void json_format(FILE *f, uint32_t cp, bool script)
{
	char esc[12];

	if (script) {
		pt_format_escape(esc, sizeof(esc), cp);
		fprintf(f, "\\%s", esc);
	} else if (cp > 0xffff) {
		cp -= 0x10000;
		fprintf(f, "\\u%04x\\u%04x", 0xd800 | (cp >> 10), 0xdc00 | (cp & 0x3ff));
	} else {
		fprintf(f, "\\u%04x", cp);
	}
}

/* One JSON string writer for both: script adds what must not appear raw inside an HTML
 * <script> element ('<', '>', '&' as \u00XX; U+2028/U+2029, which end a line in older JS, are
 * format characters here) and writes every control character as \u00XX. */
static void json_str(FILE *f, const char *s, bool script)
{
	const unsigned char *in = (const unsigned char *)(s ? s : "");
	uint32_t cp;
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
		else if (pt_format_char(in, &cp))
			json_format(f, cp, script);
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
