// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_sanitize: the one rule for names a traced process controls (util/fmt.h pt_sanitize),
 * JSON escaping of every control byte (pt_json_str), and the profile's interning point. */
#include <stdlib.h>
#include "check.h"
#include "util/fmt.h"

/* The result is checked with strcmp and printed only if it is safe to print (no raw bytes). */
static void expect(const char *in, const char *want, const char *what)
{
	char *got = pt_sanitize_dup(in);

	CHECK(got && !strcmp(got, want), "sanitize %s (got \"%s\", want \"%s\")", what,
	      got && !pt_needs_sanitize(got) ? got : "(unprintable)", want);
	CHECK(pt_needs_sanitize(in) == (strcmp(in, want) != 0), "pt_needs_sanitize %s", what);
	free(got);
}

static void test_rule(void)
{
	char all[256], *got;
	int i, raw = 0;

	expect("", "", "empty");
	expect("malloc", "malloc", "plain ASCII");
	expect("std::vector<int>::push_back(int&&)", "std::vector<int>::push_back(int&&)", "C++ name");
	expect("evil\x1b[31mRED", "evil\\x1b[31mRED", "ESC sequence");
	expect("a\rb\nc\td\be", "a\\x0db\\x0ac\\x09d\\x08e", "CR LF TAB BS");
	expect("del\x7f", "del\\x7f", "DEL");
	expect("c1\x9b" "2J", "c1\\x9b2J", "a lone 8-bit CSI (not UTF-8)");
	expect("c1\xc2\x9b" "2J", "c1\\xc2\\x9b2J", "a UTF-8 encoded C1 CSI (U+009B)");
	expect("nbsp\xc2\xa0x", "nbsp\xc2\xa0x", "U+00A0 kept");
	expect("\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac", "CJK kept");
	expect("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", "4-byte UTF-8 kept");
	expect("over\xc0\xaf", "over\\xc0\\xaf", "overlong");
	expect("sur\xed\xa0\x80", "sur\\xed\\xa0\\x80", "surrogate");
	expect("cut\xe6\x97", "cut\\xe6\\x97", "truncated sequence");
	expect("back\\x1b", "back\\x1b", "a backslash is kept");
	got = pt_sanitize_dup(NULL);
	CHECK(got && !*got, "NULL reads as empty");
	free(got);

	/* Every byte value: no control byte survives. */
	for (i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = 0;
	got = pt_sanitize_dup(all);
	for (i = 0; got && got[i]; i++) {
		unsigned char c = (unsigned char)got[i];

		raw += c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f && i && (unsigned char)got[i - 1] != 0xc2);
	}
	CHECK(got && raw == 0 && !pt_needs_sanitize(got), "bytes 1..255: no raw control byte left (%d)", raw);
	free(got);
}

static void test_cut(void)
{
	char buf[8];
	size_t need;

	need = pt_sanitize(buf, sizeof(buf), "ab\x1b" "cdef");
	CHECK_EQ_U64(need, 10, "length needed");
	CHECK(!strcmp(buf, "ab\\x1bc"), "cut after whole pieces (got \"%s\")", buf);
	need = pt_sanitize(buf, 5, "abc\x1b");
	CHECK(!strcmp(buf, "abc"), "an escape that does not fit is left out whole (got \"%s\")", buf);
	pt_sanitize(buf, 4, "a\xe6\x97\xa5");
	CHECK(!strcmp(buf, "a"), "a character that does not fit is left out whole (got \"%s\")", buf);
	CHECK_EQ_U64(pt_sanitize(NULL, 0, "\x01\x02"), 8, "length only");
}

static void test_json(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int i, raw = 0;

	pt_json_str(f, "e\x1b[0m\x7f\xc2\x9b\x9b\xc3\xa9\"\\");
	fclose(f);
	CHECK(buf && !strcmp(buf, "\"e\\u001b[0m\\u007f\\u009b\\ufffd\xc3\xa9\\\"\\\\\""),
	      "JSON: ESC, DEL, C1 escaped, invalid byte replaced, UTF-8 kept (got %s)",
	      buf && !pt_needs_sanitize(buf) ? buf : "(unprintable)");
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	for (i = 1; i < 256; i++) {
		char one[2] = { (char)i, 0 };

		pt_json_str(f, one);
	}
	fclose(f);
	for (i = 0; buf && buf[i]; i++)
		raw += (unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f;
	CHECK(raw == 0, "JSON: no byte 1..255 alone is written raw unless printable ASCII (%d)", raw);
	free(buf);
}

/* UTF-8 of a code point (valid ones only, as the tests use). */
static size_t enc(uint32_t cp, char *o)
{
	if (cp < 0x80)
		return o[0] = (char)cp, 1;
	if (cp < 0x800)
		return o[0] = (char)(0xc0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3f)), 2;
	if (cp < 0x10000)
		return o[0] = (char)(0xe0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 0x3f)),
		       o[2] = (char)(0x80 | (cp & 0x3f)), 3;
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Bidi and other format characters (Trojan Source): each escaped visibly, in every writer. */
static void test_format(void)
{
	static const uint32_t fmt[] = { 0x00ad, 0x061c, 0x200b, 0x200c, 0x200d, 0x200e, 0x200f, 0x2028,
					0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2060, 0x2064,
					0x2066, 0x2067, 0x2068, 0x2069, 0xfeff, 0xfff9, 0xfffb, 0x110bd,
					0xe0001, 0xe0041, 0xe007f };
	static const uint32_t kept[] = { 0x00a0, 0x00ae, 0x05d0, 0x2010, 0x2030, 0x2065 /* unassigned */,
					 0x2070, 0xfefe, 0xfffc, 0xe0080, 0x1f600 };
	char in[16], want[32], *got, *buf = NULL;
	size_t len = 0, i, n;
	int bad = 0, raw = 0;
	FILE *f;

	expect("evil\xe2\x80\xae)yp.doc", "evil\\u202e)yp.doc", "U+202E RIGHT-TO-LEFT OVERRIDE");
	expect("a\xe2\x81\xa6" "b\xe2\x81\xa9", "a\\u2066b\\u2069", "bidi isolates");
	expect("tag\xf3\xa0\x80\x81", "tag\\U000e0001", "a tag character (4-byte)");
	expect("\xef\xbb\xbfmain", "\\ufeffmain", "BOM / ZWNBSP");
	for (i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		n = enc(fmt[i], in);
		in[n] = 0;
		snprintf(want, sizeof(want), fmt[i] > 0xffff ? "\\U%08x" : "\\u%04x", fmt[i]);
		got = pt_sanitize_dup(in);
		bad += !got || strcmp(got, want) || !pt_needs_sanitize(in) || strlen(got) >= PT_SANITIZE_MAX(n);
		free(got);
	}
	CHECK(bad == 0, "%zu format characters each escaped as \\uXXXX within PT_SANITIZE_MAX (%d wrong)",
	      sizeof(fmt) / sizeof(fmt[0]), bad);
	bad = 0;
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		n = enc(kept[i], in);
		in[n] = 0;
		got = pt_sanitize_dup(in);
		bad += !got || strcmp(got, in) || pt_needs_sanitize(in);
		free(got);
	}
	CHECK(bad == 0, "neighbouring characters that are not format characters kept (%d wrong)", bad);

	/* Every code point: pt_is_format_cp is Unicode 15.1's Cf plus U+2028/U+2029. */
	n = 0;
	for (uint32_t cp = 0; cp <= 0x10ffff; cp++)
		n += pt_is_format_cp(cp);
	CHECK_EQ_U64(n, 170 + 2, "Cf has 170 code points (Unicode 15.1), plus U+2028 and U+2029");

	f = open_memstream(&buf, &len);
	pt_json_str(f, "x\xe2\x80\xaey\xf3\xa0\x80\x81");
	fclose(f);
	CHECK(buf && !strcmp(buf, "\"x\\u202ey\\udb40\\udc01\""), "JSON: format characters as JSON escapes (got %s)",
	      buf && !pt_needs_sanitize(buf) ? buf : "(unprintable)");
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	pt_json_str_script(f, "x\xe2\x80\xaey\xe2\x80\xa8");
	fclose(f);
	CHECK(buf && !strcmp(buf, "\"x\\\\u202ey\\\\u2028\""),
	      "HTML script JSON: format characters as visible text once decoded (got %s)",
	      buf && !pt_needs_sanitize(buf) ? buf : "(unprintable)");
	free(buf);
	/* Every format character through both JSON writers: none written raw. */
	buf = NULL;
	f = open_memstream(&buf, &len);
	for (uint32_t cp = 0xa0; cp <= 0x10ffff; cp++) {
		if (!pt_is_format_cp(cp))
			continue;
		n = enc(cp, in);
		in[n] = 0;
		pt_json_str(f, in);
		pt_json_str_script(f, in);
	}
	fclose(f);
	for (i = 0; buf && i < len; i++)
		raw += (unsigned char)buf[i] >= 0x80;
	CHECK(buf && raw == 0, "JSON: no format character written raw by either writer (%d bytes)", raw);
	free(buf);
}

int main(void)
{
	test_rule();
	test_cut();
	test_json();
	test_format();
	return CHECK_DONE();
}
