/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* pprof.h — internals of the pprof writer, exposed for golden-file tests. */
#ifndef PEAKTRACE_PPROF_H
#define PEAKTRACE_PPROF_H
#include <stdbool.h>
#include <stddef.h>

#include "output/output.h"

/* Encode p as an uncompressed perftools.profiles.Profile message. On success *buf
 * (malloc'd, caller frees) and *len hold the bytes. Returns 0 or -errno. */
int pt_pprof_encode(const struct pt_profile *p, unsigned char **buf, size_t *len);
/* light (--light): the one sample type measured without allocator probes, rss_peak_space, also
 * the default; else all seven (profile.h pt_write_pprof). */
int pt_pprof_encode_mode(const struct pt_profile *p, bool light, unsigned char **buf, size_t *len);
#endif
