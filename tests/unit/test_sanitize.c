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

int main(void)
{
	test_rule();
	test_cut();
	test_json();
	return CHECK_DONE();
}
