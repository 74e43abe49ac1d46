/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* fmt.h — formatting shared by every writer (a leaf: includes nothing of peaktrace). */
#ifndef PEAKTRACE_UTIL_FMT_H
#define PEAKTRACE_UTIL_FMT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Human-readable bytes: "1.50 MiB". buf of at least 32 bytes. */
const char *pt_fmt_bytes(char *buf, size_t len, double bytes);
/* JSON string escaping to f, with the quotes: '"', '\\', every byte below 0x20 and 0x7f escaped,
 * the format characters (pt_is_format_cp) as JSON escapes; bytes that are not valid UTF-8 become
 * U+FFFD (JSON must be UTF-8). */
void pt_json_str(FILE *f, const char *s);
/* The same, safe inside an HTML <script> element: also '<', '>', '&' and every control character
 * as \u escapes, and the format characters as pt_sanitize's visible text ("\\u202e" in the JSON,
 * "\u202e" on the page) (report.html's embedded data). */
void pt_json_str_script(FILE *f, const char *s);
/* v in decimal, without printf's format parsing (writers print millions of frame indexes). */
void pt_put_u64(FILE *f, uint64_t v);

/*
 * Text a traced (possibly hostile) process controls — symbol names, perf-map names, Python
 * names and file names, comm, exe, request ids — made safe for a terminal, with one rule for
 * every output. Escaped as "\xHH", one per byte:
 *   - C0 controls (0x00-0x1f, so ESC, CR, LF, BS and TAB too) and DEL (0x7f);
 *   - every byte that is not part of valid UTF-8 (overlong forms, surrogates and code points
 *     above U+10FFFF included), so a lone 0x80-0x9f (an 8-bit C1 control: 0x9b is CSI) too;
 *   - the C1 controls U+0080-U+009F even when validly encoded (0xc2 0x80-0x9f): some
 *     terminals act on them, and no symbol or file name needs them.
 * And as "\uXXXX" (above U+FFFF "\UXXXXXXXX"), one per character, the format characters
 * (pt_is_format_cp: bidi overrides and isolates such as U+202E, zero-width ones, U+FEFF, tags...)
 * and U+2028/U+2029: invisible, they would reorder or hide what a name reads as (Trojan
 * Source). Everything else, valid UTF-8 above U+009F included, is kept. A backslash is kept as it is,
 * so the escaping is for reading, not reversible ("\x1b" in a name reads the same as an
 * escaped ESC): names are for people, the addresses identify the code.
 */
/* Whether the code point is a format character (general category Cf) or U+2028/U+2029. */
bool pt_is_format_cp(uint32_t cp);
/* The length of the format character s starts with (its code point in *cp if cp), else 0. */
size_t pt_format_char(const unsigned char *s, uint32_t *cp);
/* Its visible escape ("\u202e", "\U000e0001") into out; returns its length. */
int pt_format_escape(char *out, size_t cap, uint32_t cp);
/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, no surrogates, nothing
 * above U+10FFFF), or 0 if s does not start one. */
size_t pt_utf8_len(const unsigned char *s);
#define PT_SANITIZE_MAX(n) ((n) * 4 + 1)   /* the worst case: every byte escaped, and the NUL */
/* Into dst (cap bytes, always NUL-terminated, cut only between whole characters and escapes);
 * returns the length the whole result needs, without the NUL. */
size_t pt_sanitize(char *dst, size_t cap, const char *src);
/* A malloc'ed sanitized copy; NULL if out of memory. src NULL reads as "". */
char *pt_sanitize_dup(const char *src);
/* Whether pt_sanitize would change s. */
int pt_needs_sanitize(const char *s);

#endif
