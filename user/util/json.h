/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * json.h — a small read-only JSON reader (a leaf: includes nothing of peaktrace).
 *
 * No tree is built: a value is a span of the text, and lookups walk it. Every walk is bounded
 * by the span's end and by PT_JSON_MAX_DEPTH nested arrays/objects, so any input — a truncated
 * file, a binary file, a hostile one — gives an error, never a crash or a deep recursion.
 * Strings are checked for well-formed escapes but not decoded; keys are compared as raw bytes
 * (the keys asked for are plain ASCII).
 */
#ifndef PEAKTRACE_UTIL_JSON_H
#define PEAKTRACE_UTIL_JSON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PT_JSON_MAX_DEPTH 64

/* One value's text: [p, end). */
struct pt_json {
	const char *p, *end;
};

enum pt_json_type { PT_JSON_BAD = 0, PT_JSON_OBJECT, PT_JSON_ARRAY, PT_JSON_STRING,
		    PT_JSON_NUMBER, PT_JSON_TRUE, PT_JSON_FALSE, PT_JSON_NULL };

/* The whole of s[0, len) as one JSON value (white space around it allowed): 0 and *doc, or
 * -EINVAL if it is not exactly one well-formed value. */
int pt_json_parse(const char *s, size_t len, struct pt_json *doc);
enum pt_json_type pt_json_type(struct pt_json v);
/* Member key of object obj: true and *val, false if obj is not an object or has no such key
 * (the first one when a key repeats). */
bool pt_json_get(struct pt_json obj, const char *key, struct pt_json *val);
/* An unsigned integer (no sign, fraction or exponent; fits in 64 bits): true and *out. */
bool pt_json_u64(struct pt_json v, uint64_t *out);
/* Whether v is a string whose raw text (between the quotes) is exactly s. */
bool pt_json_str_is(struct pt_json v, const char *s);
/* A string's raw text, cut to cap - 1 bytes, NUL-terminated: true if v is a string. */
bool pt_json_str_copy(struct pt_json v, char *buf, size_t cap);

/* Elements of an array, in order: pt_json_iter(arr, &it) (false if arr is not an array), then
 * pt_json_next(&it, &elem) until it returns false. */
bool pt_json_iter(struct pt_json arr, struct pt_json *it);
bool pt_json_next(struct pt_json *it, struct pt_json *elem);

#endif
