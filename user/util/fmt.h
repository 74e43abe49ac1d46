/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* fmt.h — formatting shared by every writer (a leaf: includes nothing of peaktrace). */
#ifndef PEAKTRACE_UTIL_FMT_H
#define PEAKTRACE_UTIL_FMT_H
#include <stddef.h>
#include <stdio.h>

/* Human-readable bytes: "1.50 MiB". buf of at least 32 bytes. */
const char *pt_fmt_bytes(char *buf, size_t len, double bytes);
/* JSON string escaping to f, with the quotes. */
void pt_json_str(FILE *f, const char *s);

#endif
