/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* fmt.c — formatting shared by every writer: byte sizes for people, JSON strings. */
#include <stdio.h>
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

void pt_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}
