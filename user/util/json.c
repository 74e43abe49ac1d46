// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * json.c — the bounded JSON reader of json.h: one skipper (skip_value) that every lookup
 * uses, so a value is checked by the same code that steps over it.
 */
#include <errno.h>
#include <string.h>
#include "util/json.h"

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* p at '"': past the closing quote, or NULL. Control bytes inside are errors (RFC 8259). */
static const char *skip_string(const char *p, const char *end)
{
	int i;

	for (p++; p < end; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c != '\\')
			continue;
		if (++p >= end)
			return NULL;
		if (*p == 'u') {
			for (i = 0; i < 4; i++)
				if (++p >= end || !is_hex(*p))
					return NULL;
		} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
			return NULL;
		}
	}
	return NULL;
}

static const char *skip_number(const char *p, const char *end)
{
	const char *d;

	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (p < end && is_digit(*p))
		while (p < end && is_digit(*p))
			p++;
	else
		return NULL;
	if (p < end && *p == '.') {
		for (d = ++p; p < end && is_digit(*p); p++)
			;
		if (p == d)
			return NULL;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		for (d = p; p < end && is_digit(*p); p++)
			;
		if (p == d)
			return NULL;
	}
	return p;
}

static const char *skip_word(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);

	return (size_t)(end - p) >= n && memcmp(p, w, n) == 0 ? p + n : NULL;
}

/* p at a value (no white space before it): past it, or NULL if it is not well formed. */
static const char *skip_value(const char *p, const char *end, int depth)
{
	char close;

	if (p >= end)
		return NULL;
	switch (*p) {
	case '"': return skip_string(p, end);
	case 't': return skip_word(p, end, "true");
	case 'f': return skip_word(p, end, "false");
	case 'n': return skip_word(p, end, "null");
	case '{': case '[': break;
	default: return skip_number(p, end);
	}
	if (depth >= PT_JSON_MAX_DEPTH)
		return NULL;
	close = *p == '{' ? '}' : ']';
	p = skip_ws(p + 1, end);
	if (p < end && *p == close)
		return p + 1;
	for (;;) {
		if (close == '}') {
			if (p >= end || *p != '"' || !(p = skip_string(p, end)))
				return NULL;
			p = skip_ws(p, end);
			if (p >= end || *p != ':')
				return NULL;
			p = skip_ws(p + 1, end);
		}
		if (!(p = skip_value(p, end, depth + 1)))
			return NULL;
		p = skip_ws(p, end);
		if (p < end && *p == close)
			return p + 1;
		if (p >= end || *p != ',')
			return NULL;
		p = skip_ws(p + 1, end);
	}
}

int pt_json_parse(const char *s, size_t len, struct pt_json *doc)
{
	const char *end = s + len, *p = skip_ws(s, end), *q;

	q = skip_value(p, end, 0);
	if (!q || skip_ws(q, end) != end)
		return -EINVAL;
	doc->p = p;
	doc->end = q;
	return 0;
}

enum pt_json_type pt_json_type(struct pt_json v)
{
	if (v.p >= v.end)
		return PT_JSON_BAD;
	switch (*v.p) {
	case '{': return PT_JSON_OBJECT;
	case '[': return PT_JSON_ARRAY;
	case '"': return PT_JSON_STRING;
	case 't': return PT_JSON_TRUE;
	case 'f': return PT_JSON_FALSE;
	case 'n': return PT_JSON_NULL;
	default: return PT_JSON_NUMBER;
	}
}

bool pt_json_get(struct pt_json obj, const char *key, struct pt_json *val)
{
	const char *p, *k, *q, *end = obj.end;
	size_t klen = strlen(key);

	if (pt_json_type(obj) != PT_JSON_OBJECT)
		return false;
	p = skip_ws(obj.p + 1, end);
	while (p < end && *p == '"') {
		k = p + 1;
		if (!(p = skip_string(p, end)))
			return false;
		q = p - 1;	/* the closing quote */
		p = skip_ws(p, end);
		if (p >= end || *p != ':')
			return false;
		p = skip_ws(p + 1, end);
		val->p = p;
		if (!(p = skip_value(p, end, 1)))
			return false;
		val->end = p;
		if ((size_t)(q - k) == klen && memcmp(k, key, klen) == 0)
			return true;
		p = skip_ws(p, end);
		if (p >= end || *p != ',')
			return false;
		p = skip_ws(p + 1, end);
	}
	return false;
}

bool pt_json_u64(struct pt_json v, uint64_t *out)
{
	const char *p;
	uint64_t x = 0;

	if (v.p >= v.end || !is_digit(*v.p) || (*v.p == '0' && v.end - v.p > 1))
		return false;
	for (p = v.p; p < v.end; p++) {
		if (!is_digit(*p) || x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	*out = x;
	return true;
}

bool pt_json_str_is(struct pt_json v, const char *s)
{
	size_t n = strlen(s);

	return pt_json_type(v) == PT_JSON_STRING && (size_t)(v.end - v.p) == n + 2 &&
	       memcmp(v.p + 1, s, n) == 0;
}

bool pt_json_str_copy(struct pt_json v, char *buf, size_t cap)
{
	size_t n;

	if (pt_json_type(v) != PT_JSON_STRING || v.end - v.p < 2 || !cap)
		return false;
	n = (size_t)(v.end - v.p) - 2;
	if (n > cap - 1)
		n = cap - 1;
	memcpy(buf, v.p + 1, n);
	buf[n] = '\0';
	return true;
}

bool pt_json_iter(struct pt_json arr, struct pt_json *it)
{
	if (pt_json_type(arr) != PT_JSON_ARRAY)
		return false;
	it->p = arr.p + 1;
	it->end = arr.end;
	return true;
}

bool pt_json_next(struct pt_json *it, struct pt_json *elem)
{
	const char *p = skip_ws(it->p, it->end), *q;

	if (p >= it->end || *p == ']')
		return false;
	if (!(q = skip_value(p, it->end, 1)))
		return false;
	elem->p = p;
	elem->end = q;
	q = skip_ws(q, it->end);
	if (q < it->end && *q == ',')
		q++;
	it->p = q;
	return true;
}
